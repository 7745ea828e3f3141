"""Scores: precision/recall/F1 edge cases, blocking figures, sums over cases, cost."""

from __future__ import annotations

import itertools

from assay.eval import Predicted, TruthDefect
from assay.eval.scores import ReviewOutcome, critical_path_ms, rates, score_case, summarize
from assay.llm.client import CallRecord
from assay.model import Severity

_chains = itertools.count(1)


def call(stage: str, latency_ms: int, *, cached: bool = False, tokens: int = 10) -> CallRecord:
    return CallRecord(
        stage=stage,
        key=f"{stage}{latency_ms}",
        cached=cached,
        attempts=0 if cached else 1,
        latency_ms=latency_ms,
        service_ms=0 if cached else latency_ms,
        chain=next(_chains),  # each call its own chain: independent calls
        prompt_tokens=tokens,
        completion_tokens=1,
        ok=True,
    )


def defect(line: int, severity: Severity, category: str = "correctness") -> TruthDefect:
    return TruthDefect(
        path="a.py", line_start=line, line_end=line, category=category, severity=severity
    )


def test_rates_are_undefined_without_a_denominator() -> None:
    assert rates(0, 0, 0).model_dump() == {
        "tp": 0, "fp": 0, "fn": 0, "precision": None, "recall": None, "f1": None
    }  # fmt: skip
    assert (rates(0, 0, 3).precision, rates(0, 0, 3).recall, rates(0, 0, 3).f1) == (
        None,
        0.0,
        None,
    )
    assert rates(0, 2, 3).f1 == 0.0
    assert (rates(2, 2, 0).precision, rates(2, 2, 0).recall, rates(2, 2, 0).f1) == (
        0.5,
        1.0,
        0.6667,
    )


def test_score_case_counts_all_and_blocking_findings_at_each_window() -> None:
    truths = (defect(10, Severity.P1), defect(30, Severity.P2))
    findings = (
        Predicted(id="a", path="a.py", line=12, severity=Severity.P1, blocking=True),
        Predicted(id="b", path="a.py", line=30, severity=Severity.P1, blocking=True),
        Predicted(id="c", path="a.py", line=50),
    )
    outcome = ReviewOutcome(
        case="x",
        language="python",
        truths=truths,
        findings=findings,
        verdict="BLOCKING",
        calls=(call("discover", 200), call("discover", 300), call("confirm", 100)),
        wall_ms=500,
    )

    score = score_case(outcome, windows=(0, 3, 10), primary_window=3)

    by_window = {w.window: w for w in score.windows}
    assert (by_window[0].all.tp, by_window[0].all.fp, by_window[0].all.fn) == (1, 2, 1)
    assert (by_window[3].all.tp, by_window[3].all.fp, by_window[3].all.fn) == (2, 1, 0)
    # The block on the P2 defect is a false block; the P1 defect was blocked on.
    assert (by_window[3].blocking.tp, by_window[3].blocking.fp) == (1, 1)
    assert by_window[3].blocking.recall == 1.0
    assert [(m.finding_id, m.truth, m.distance) for m in score.matches] == [
        ("a", 0, 2),
        ("b", 1, 0),
    ]
    assert score.missed == []
    assert (score.calls, score.prompt_tokens, score.completion_tokens) == (3, 30, 3)
    assert (score.critical_path_ms, score.critical_path_ratio) == (400, 1.25)


def test_summarize_sums_counts_before_dividing() -> None:
    one = ReviewOutcome(
        case="one",
        language="python",
        truths=(defect(10, Severity.P1), defect(20, Severity.P2, "security")),
        findings=(Predicted(id="a", path="a.py", line=10),),
        verdict="LGTM",
    )
    clean = ReviewOutcome(
        case="clean",
        language="go",
        truths=(),
        findings=(Predicted(id="b", path="a.py", line=3, severity=Severity.P1, blocking=True),),
        verdict="BLOCKING",
    )
    outcomes = [one, clean]
    scores = [score_case(o, windows=(0, 3), primary_window=3) for o in outcomes]

    summary = summarize(scores, outcomes, primary_window=3)

    assert (summary.at(3).all.tp, summary.at(3).all.fp, summary.at(3).all.fn) == (1, 1, 1)
    assert summary.at(3).all.precision == 0.5
    assert (summary.cases, summary.clean_cases, summary.false_blocks_on_clean) == (2, 1, 1)
    assert summary.findings_per_pr == 1.0
    assert {k: (v.found, v.total) for k, v in summary.category_recall.items()} == {
        "correctness": (1, 1),
        "security": (0, 1),
    }
    assert summary.critical_path_ratio_mean is None  # no call was made


def test_critical_path_ignores_replayed_calls() -> None:
    assert critical_path_ms([call("discover", 50, cached=True)]) is None
    calls = [call("discover", 120), call("discover", 80), call("synthesize", 30)]
    assert critical_path_ms(calls) == 150


def test_supported_figures_keep_only_findings_enough_reps_agreed_on() -> None:
    truths = (defect(10, Severity.P1), defect(30, Severity.P2))
    findings = (
        Predicted(id="agreed", path="a.py", line=10, votes=3),
        Predicted(id="lonely", path="a.py", line=30, votes=1),
        Predicted(id="noise", path="a.py", line=50, votes=1),
        Predicted(id="ruff", path="a.py", line=70, votes=0, static=True),
    )
    outcome = ReviewOutcome(
        case="x", language="python", truths=truths, findings=findings, verdict="LGTM", support=2
    )

    (window,) = score_case(outcome, windows=(3,), primary_window=3).windows

    assert (window.all.tp, window.all.fp, window.all.fn) == (2, 2, 0)
    # The lone reports drop out; the analyzer's finding stays (it needs no votes).
    assert (window.supported.tp, window.supported.fp, window.supported.fn) == (1, 1, 1)
