"""The round summary's cumulative "fixed (recheck)" list, against the seed's own text."""

from __future__ import annotations

from pathlib import Path

from assay.model import ClosedFinding, RecheckStatus, Severity
from assay.render import render_summary

from ..render._factory import round_result
from ..render._visible import visible_text

GOLDEN = Path(__file__).parent / "golden" / "seed002_recheck.zh.txt"
"""Seed 002, lines 1388-1409: the round-12 summary's recheck section, verbatim."""


def _seed_closures() -> tuple[list[str], list[ClosedFinding]]:
    lines = GOLDEN.read_text(encoding="utf-8").rstrip("\n").split("\n")
    closures = []
    for index, line in enumerate(lines[2:]):
        label, rest = line.removeprefix("  • [").split("] ", 1)
        title, proof = rest.split(" — ", 1)
        # Round 12 closed 2 as fixed and 3 as not substantiated (its KPI); the rest are older.
        status = RecheckStatus.CANNOT_SUBSTANTIATE if index in (2, 3, 4) else RecheckStatus.FIXED
        closures.append(
            ClosedFinding(
                id=f"c{index}",
                title=title,
                severity=Severity(label),
                path="x",
                line=1,
                status=status,
                proof=proof,
                first_seen_round=1,
                closed_round=12 if index < 5 else 11,
            )
        )
    return lines, closures


def _section(text: str, heading: str, next_heading: str) -> list[str]:
    lines = text.split("\n")
    start = lines.index(heading)
    return lines[start : lines.index(next_heading, start)]


def test_the_zh_list_reads_exactly_like_the_seed() -> None:
    expected, closures = _seed_closures()
    result = round_result(round_index=12).model_copy(update={"closed": tuple(closures)})

    shown = visible_text(render_summary(result, lang="zh", platform="rtp-llm-agent-platform"))

    assert len(closures) == 20
    assert _section(shown, "已确认修复（recheck）", "本轮 KPI") == [*expected, ""]


def test_the_en_list_marks_closures_that_are_not_fixes_and_escapes_untrusted_text() -> None:
    closures = (
        ClosedFinding(
            id="c1",
            title="Handle <b>never</b> closed",
            severity=Severity.P1,
            path="service.py",
            line=2,
            status=RecheckStatus.FIXED,
            proof="line 2 now uses `with open(path)`; *closed* on every path.",
            first_seen_round=1,
            closed_round=2,
        ),
        ClosedFinding(
            id="c2",
            title="Bad cast",
            severity=Severity.P3,
            path="gone.h",
            line=4,
            status=RecheckStatus.CANNOT_SUBSTANTIATE,
            proof="file gone.h does not exist at head 2702a57fb971.",
            first_seen_round=1,
            closed_round=2,
        ),
    )
    result = round_result(round_index=2).model_copy(update={"closed": closures})

    markdown = render_summary(result, lang="en")

    assert (
        "### Confirmed fixed (recheck)\n\n"
        "- [P1] Handle \\<b>never\\</b> closed — line 2 now uses `with open(path)`; "
        "\\*closed\\* on every path.\n"
        "- [P3] Bad cast — (no longer applies) file gone.h does not exist at head "
        "2702a57fb971.\n\n"
        "### Round KPI"
    ) in markdown


def test_no_closure_no_section() -> None:
    for lang, heading in (("en", "Confirmed fixed (recheck)"), ("zh", "已确认修复（recheck）")):
        assert heading not in render_summary(round_result(), lang=lang)
