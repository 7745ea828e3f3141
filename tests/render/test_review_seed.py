"""zh main and follow-up reviews against the seed pages' own text (golden/*.zh.txt)."""

from __future__ import annotations

from datetime import UTC, datetime

from assay.model import RoundResult, Severity
from assay.render import render_followup, render_review

from ._factory import full_sha, reported, round_result
from ._seed import golden_text, parse_review
from ._visible import visible_text


def _round_from_seed_review(golden: str, *, number: int, head: str, at: datetime) -> RoundResult:
    items, strengths = parse_review(golden_text(golden))
    findings = [
        reported(
            f"f{index}",
            item.severity,
            item.title,
            item.path,
            item.line,
            suggestion=item.suggestion,
        )
        for index, item in enumerate(items)
    ]
    return round_result(
        findings, number=number, head_sha=full_sha(head), reviewed_at=at, strengths=strengths
    )


def test_blocking_review_reads_exactly_like_seed_000_review_1() -> None:
    result = _round_from_seed_review(
        "seed000_review_blocking.zh.txt",
        number=1344,
        head="1f34a8aa9505",
        at=datetime(2026, 8, 28, 7, 52, tzinfo=UTC),
    )
    assert result.count(Severity.P0) == 1 and result.count(Severity.P3) == 2

    markdown = render_review(result, lang="zh", tz="UTC+8")

    assert visible_text(markdown) == golden_text("seed000_review_blocking.zh.txt")


def test_lgtm_review_reads_exactly_like_seed_002_at_4227e27() -> None:
    result = _round_from_seed_review(
        "seed002_review_lgtm.zh.txt",
        number=1353,
        head="4227e2715a64",
        at=datetime(2026, 8, 30, 7, 40, tzinfo=UTC),
    )

    markdown = render_review(result, lang="zh", tz="Asia/Shanghai")

    assert visible_text(markdown) == golden_text("seed002_review_lgtm.zh.txt")
    assert "lgtm ready to ci" in markdown.split("\n")


def test_followup_is_exactly_the_seed_text() -> None:
    # Seed 000 R1 had 13 P2 + 3 P3 = 16 non-blocking suggestions.
    findings = [reported("p0", Severity.P0, "t", "a.py", 1)]
    findings += [reported(f"p2-{i}", Severity.P2, "t", "a.py", 1) for i in range(13)]
    findings += [reported(f"p3-{i}", Severity.P3, "t", "a.py", 1) for i in range(3)]
    result = round_result(findings, number=1344)

    followup = render_followup(result, lang="zh")

    assert followup is not None
    assert visible_text(followup) == golden_text("seed000_followup.zh.txt")
