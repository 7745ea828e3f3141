"""Scores of an evaluation: per case, and summed over the cases (micro-averaged).

Definitions (``tp``/``fp``/``fn`` come from :mod:`assay.eval.matcher`):

- precision = tp / (tp + fp), recall = tp / (tp + fn), F1 their harmonic mean. A ratio whose
  denominator is 0 is ``null`` (no findings: precision is undefined, not perfect); F1 is 0
  when precision and recall are both defined and both 0, ``null`` when either is undefined.
- Overall figures sum tp, fp and fn over all cases before dividing (micro average), so a case
  with many defects weighs more than a case with one.
- **Blocking**: only blocking findings against only the P0/P1 defects, matched by the same
  rules. A blocking finding on a P2 defect is a false block (the PR should not have been
  stopped), and so is one on a clean case.
- **Supported**: only the findings at least ``support`` reps agreed on (the run's block support;
  analyzer findings always count), against every defect: what the report would score if its
  non-blocking list were filtered by votes too.
- Findings per PR: reported findings (every severity, static ones included) per case — the
  noise a team reads.
- Per-category recall: defects found at the headline window, by canonical category.
- Cost: tokens, calls (cached ones counted apart), the round's wall time, and its critical
  path: the longest chain of dependent model calls in endpoint time (phases in order; within
  a phase, the longest chain of calls made one after another by one task). The critical-path
  ratio is wall time / critical path (1.0 = no time lost outside model waits). ``null`` when
  the round made no model call or all calls were replayed from the cache.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from assay.eval.cases import TruthDefect
from assay.eval.matcher import (
    PRIMARY_WINDOW,
    MatchPolicy,
    MatchResult,
    Predicted,
    canonical_category,
    match_findings,
)
from assay.llm.client import CallRecord
from assay.pipeline._kpi import critical_path_ms as kpi_critical_path_ms

__all__ = [
    "CaseScore",
    "CategoryRecall",
    "MatchedFinding",
    "Rates",
    "ReviewOutcome",
    "ScoreSummary",
    "WindowScore",
    "critical_path_ms",
    "rates",
    "score_case",
    "summarize",
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class Rates(_Model):
    tp: int = 0
    fp: int = 0
    fn: int = 0
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None


def rates(tp: int, fp: int, fn: int) -> Rates:
    """Precision, recall and F1 from counts (``None`` where undefined; see the module docs)."""
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1: float | None = None
    if precision is not None and recall is not None:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Rates(
        tp=tp, fp=fp, fn=fn, precision=_round(precision), recall=_round(recall), f1=_round(f1)
    )


class WindowScore(_Model):
    window: int
    all: Rates
    blocking: Rates
    supported: Rates


class MatchedFinding(_Model):
    finding_id: str
    title: str
    truth: int
    """Index of the defect in the case's ``truth.json``."""
    distance: int | None


class CaseScore(_Model):
    case: str
    language: str
    clean: bool
    truths: int
    blocking_truths: int
    findings: int
    blocking_findings: int
    verdict: str
    windows: list[WindowScore]
    matches: list[MatchedFinding] = Field(default_factory=list)
    """Pairs at the headline window."""
    missed: list[int] = Field(default_factory=list)
    """Defects (indexes) not found at the headline window."""
    judge: Rates | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0
    wall_ms: int = 0
    critical_path_ms: int | None = None
    critical_path_ratio: float | None = None
    failures: list[str] = Field(default_factory=list)
    error: str | None = None
    """The review itself failed (nothing was scored but the defects count as missed)."""


class CategoryRecall(_Model):
    found: int
    total: int
    recall: float | None


class ScoreSummary(_Model):
    cases: int
    clean_cases: int
    primary_window: int
    windows: list[WindowScore]
    findings_per_pr: float | None
    blocking_per_pr: float | None
    findings_per_clean_pr: float | None
    false_blocks_on_clean: int
    category_recall: dict[str, CategoryRecall]
    judge: Rates | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0
    wall_ms: int = 0
    critical_path_ratio_mean: float | None = None
    failed_reviews: int = 0

    def at(self, window: int) -> WindowScore:
        """The scores at ``window`` (``KeyError`` when it was not computed)."""
        for score in self.windows:
            if score.window == window:
                return score
        raise KeyError(window)


@dataclass(frozen=True)
class ReviewOutcome:
    """What one review of a case produced, as scoring needs it."""

    case: str
    language: str
    truths: tuple[TruthDefect, ...]
    findings: tuple[Predicted, ...]
    verdict: str
    calls: tuple[CallRecord, ...] = ()
    wall_ms: int = 0
    failures: tuple[str, ...] = ()
    error: str | None = None
    judge_pairs: MatchResult | None = None
    """Pairs the LLM judge accepted (already one-to-one), when the judge ran."""
    support: int = 1
    """Votes the run required to block (the threshold of the *supported* figures)."""


def score_case(
    outcome: ReviewOutcome, *, windows: Sequence[int], primary_window: int = PRIMARY_WINDOW
) -> CaseScore:
    """Match one review against its case's defects at every window and count the cost.

    Args:
        outcome: The review's findings, calls and timing, and the case's defects.
        windows: The line windows to score at (e.g. 0, 3, 10).
        primary_window: The window whose pairs are listed in the score.

    Returns:
        The case's score.
    """
    truths, findings = outcome.truths, outcome.findings
    blocking_findings = tuple(f for f in findings if f.blocking)
    blocking_truths = tuple(t for t in truths if t.may_block)
    supported = tuple(f for f in findings if f.static or f.votes >= outcome.support)
    window_scores = []
    primary: MatchResult | None = None
    for window in sorted({*windows, primary_window}):
        policy = MatchPolicy(window=window)
        result = match_findings(findings, truths, policy)
        blocking = match_findings(blocking_findings, blocking_truths, policy)
        agreed = match_findings(supported, truths, policy)
        if window == primary_window:
            primary = result
        if window in windows:
            window_scores.append(
                WindowScore(
                    window=window,
                    all=rates(
                        result.true_positives, result.false_positives, result.false_negatives
                    ),
                    blocking=rates(
                        blocking.true_positives, blocking.false_positives, blocking.false_negatives
                    ),
                    supported=rates(
                        agreed.true_positives, agreed.false_positives, agreed.false_negatives
                    ),
                )
            )
    assert primary is not None  # primary_window is always among the windows scored
    critical = critical_path_ms(outcome.calls)
    usage = _usage(outcome.calls)
    judge = outcome.judge_pairs
    return CaseScore(
        case=outcome.case,
        language=outcome.language,
        clean=not truths,
        truths=len(truths),
        blocking_truths=len(blocking_truths),
        findings=len(findings),
        blocking_findings=len(blocking_findings),
        verdict=outcome.verdict,
        windows=window_scores,
        matches=[
            MatchedFinding(
                finding_id=findings[pair.finding].id,
                title=findings[pair.finding].title,
                truth=pair.truth,
                distance=pair.distance,
            )
            for pair in primary.pairs
        ],
        missed=sorted(set(range(len(truths))) - primary.matched_truths()),
        judge=(
            rates(judge.true_positives, judge.false_positives, judge.false_negatives)
            if judge is not None
            else None
        ),
        prompt_tokens=usage["prompt"],
        completion_tokens=usage["completion"],
        cached_prompt_tokens=usage["cached_prompt"],
        calls=len(outcome.calls),
        cached_calls=sum(1 for call in outcome.calls if call.cached),
        wall_ms=outcome.wall_ms,
        critical_path_ms=critical,
        critical_path_ratio=_round(outcome.wall_ms / critical) if critical else None,
        failures=list(outcome.failures),
        error=outcome.error,
    )


def summarize(
    scores: Sequence[CaseScore],
    outcomes: Sequence[ReviewOutcome],
    *,
    primary_window: int = PRIMARY_WINDOW,
) -> ScoreSummary:
    """Sum case scores into the evaluation's figures (micro average; see the module docs).

    Args:
        scores: One per case, from :func:`score_case`.
        outcomes: The same cases' outcomes, in the same order (for per-category recall).
        primary_window: The headline window.

    Returns:
        The summary.
    """
    windows = []
    for window in [score.window for score in scores[0].windows] if scores else []:
        per_case = [_window(score, window) for score in scores]
        windows.append(
            WindowScore(
                window=window,
                all=_sum_rates([w.all for w in per_case]),
                blocking=_sum_rates([w.blocking for w in per_case]),
                supported=_sum_rates([w.supported for w in per_case]),
            )
        )
    found: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    for score, outcome in zip(scores, outcomes, strict=True):
        missed = set(score.missed)
        for index, truth in enumerate(outcome.truths):
            category = canonical_category(truth.category)
            total[category] += 1
            found[category] += index not in missed
    clean = [score for score in scores if score.clean]
    judged = [score.judge for score in scores if score.judge is not None]
    ratios = [s.critical_path_ratio for s in scores if s.critical_path_ratio is not None]
    return ScoreSummary(
        cases=len(scores),
        clean_cases=len(clean),
        primary_window=primary_window,
        windows=windows,
        findings_per_pr=_mean([score.findings for score in scores]),
        blocking_per_pr=_mean([score.blocking_findings for score in scores]),
        findings_per_clean_pr=_mean([score.findings for score in clean]),
        false_blocks_on_clean=sum(score.blocking_findings for score in clean),
        category_recall={
            category: CategoryRecall(
                found=found[category],
                total=total[category],
                recall=_round(found[category] / total[category]),
            )
            for category in sorted(total)
        },
        judge=_sum_rates(judged) if judged else None,
        prompt_tokens=sum(score.prompt_tokens for score in scores),
        completion_tokens=sum(score.completion_tokens for score in scores),
        calls=sum(score.calls for score in scores),
        cached_calls=sum(score.cached_calls for score in scores),
        wall_ms=sum(score.wall_ms for score in scores),
        critical_path_ratio_mean=_mean(ratios),
        failed_reviews=sum(1 for score in scores if score.error is not None),
    )


def critical_path_ms(calls: Sequence[CallRecord]) -> int | None:
    """A round's critical path: the longest chain of dependent model calls, in endpoint time.

    The same measure as the KPI's ``critical_path_ms`` (``assay.pipeline._kpi``): phases run
    one after another, calls of one chain (an agentic loop, a call and its re-asks) in order.

    Args:
        calls: The round's call records.

    Returns:
        Milliseconds, or ``None`` when no call went over HTTP (nothing to measure).
    """
    if all(call.cached for call in calls):
        return None
    return kpi_critical_path_ms(calls)


def _usage(calls: Sequence[CallRecord]) -> dict[str, int]:
    return {
        "prompt": sum(call.prompt_tokens for call in calls),
        "completion": sum(call.completion_tokens for call in calls),
        "cached_prompt": sum(call.cached_prompt_tokens for call in calls),
    }


def _window(score: CaseScore, window: int) -> WindowScore:
    for candidate in score.windows:
        if candidate.window == window:
            return candidate
    raise KeyError(window)


def _sum_rates(items: Sequence[Rates]) -> Rates:
    return rates(sum(r.tp for r in items), sum(r.fp for r in items), sum(r.fn for r in items))


def _mean(values: Sequence[float]) -> float | None:
    return _round(sum(values) / len(values)) if values else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
