"""Read the findings back out of the seed excerpts in ``golden/``.

The zh golden tests rebuild a round from the seed's own titles, paths, lines, suggestions and
strengths, render it, and compare the visible text with the seed lines. Reading the data from the
same excerpt keeps one copy of the seed text; the layout under test is not derived from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from assay.model import Severity

__all__ = [
    "GOLDEN",
    "SeedInline",
    "SeedItem",
    "SeedSummaryItem",
    "golden_text",
    "parse_inline",
    "parse_review",
    "parse_summary_items",
]

GOLDEN = Path(__file__).parent / "golden"

_ITEM = re.compile(r"^  • (?P<title>.+) @ (?P<path>[^ ]+):(?P<line>\d+)$")
_BODY_SUGGESTION = "    • 建议："
_PREFACE = re.compile(
    r"^📍 实际位置 (?P<path>[^ ]+):(?P<line>\d+)（不在 diff 展示范围内，就近挂载）$"
)
_TITLE = re.compile(r"^\[(?P<severity>P[0-3])\] (?P<title>.+)$")
_SUMMARY_META = re.compile(
    r"^  • (?P<path>[^ ]+):(?P<line>\d+) · 类别 (?P<category>\S+) · 票数 (?P<votes>\d+)/\d+"
    r" · 首见 r(?P<first_seen>\d+)$"
)
_SUMMARY_NON_BLOCKING = re.compile(
    r"^  • \[(?P<severity>P[0-3])\] (?P<title>.+) — (?P<path>[^ ]+):(?P<line>\d+)"
    r" · 票数 (?P<votes>\d+)/\d+$"
)


def golden_text(name: str) -> str:
    return (GOLDEN / name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class SeedItem:
    severity: Severity
    title: str
    path: str
    line: int
    suggestion: str


def parse_review(text: str) -> tuple[list[SeedItem], list[str]]:
    """The body items (with their severity sub-heading) and the strengths of a review excerpt."""
    items: list[SeedItem] = []
    strengths: list[str] = []
    severity: Severity | None = None
    in_strengths = False
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line in {"P0", "P1", "P2", "P3"}:
            severity = Severity(line)
        elif line == "Strengths":
            in_strengths = True
        elif in_strengths and line.startswith("  • "):
            strengths.append(line.removeprefix("  • "))
        elif (match := _ITEM.match(line)) is not None:
            assert severity is not None
            suggestion = lines[index + 1]
            assert suggestion.startswith(_BODY_SUGGESTION)
            items.append(
                SeedItem(
                    severity=severity,
                    title=match["title"],
                    path=match["path"],
                    line=int(match["line"]),
                    suggestion=suggestion.removeprefix(_BODY_SUGGESTION),
                )
            )
    return items, strengths


@dataclass(frozen=True)
class SeedInline:
    severity: Severity
    title: str
    actual_path: str | None
    actual_line: int | None
    evidence: str
    suggestion: str
    checklist_items: tuple[str, ...]


def parse_inline(text: str) -> SeedInline:
    """An inline comment excerpt: blocks separated by blank lines (seed §3.1)."""
    blocks = text.rstrip("\n").split("\n\n")
    preface = _PREFACE.match(blocks[0])
    if preface is not None:
        blocks = blocks[1:]
    title = _TITLE.match(blocks[0])
    assert title is not None
    evidence, suggestion, checklist = blocks[1:]
    return SeedInline(
        severity=Severity(title["severity"]),
        title=title["title"],
        actual_path=preface["path"] if preface else None,
        actual_line=int(preface["line"]) if preface else None,
        evidence=evidence,
        suggestion=suggestion.removeprefix("建议: "),
        checklist_items=tuple(checklist.removeprefix("Checklist: ").split(" · ")),
    )


@dataclass(frozen=True)
class SeedSummaryItem:
    severity: Severity
    title: str
    path: str
    line: int
    votes: int
    category: str = ""
    first_seen_round: int = 1
    evidence: str = ""
    suggestion: str = ""


def parse_summary_items(text: str) -> tuple[list[SeedSummaryItem], list[SeedSummaryItem]]:
    """The blocking and the non-blocking items of a round-summary excerpt (seed §5.1)."""
    blocking: list[SeedSummaryItem] = []
    non_blocking: list[SeedSummaryItem] = []
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if (title := _TITLE.match(line)) is not None:
            meta = _SUMMARY_META.match(lines[index + 2])
            assert meta is not None
            evidence = lines[index + 3].removeprefix("  • 依据：")
            suggestion = lines[index + 4].removeprefix("  • 建议：")
            blocking.append(
                SeedSummaryItem(
                    severity=Severity(title["severity"]),
                    title=title["title"],
                    path=meta["path"],
                    line=int(meta["line"]),
                    votes=int(meta["votes"]),
                    category=meta["category"],
                    first_seen_round=int(meta["first_seen"]),
                    evidence=evidence,
                    suggestion=suggestion,
                )
            )
        elif (item := _SUMMARY_NON_BLOCKING.match(line)) is not None:
            non_blocking.append(
                SeedSummaryItem(
                    severity=Severity(item["severity"]),
                    title=item["title"],
                    path=item["path"],
                    line=int(item["line"]),
                    votes=int(item["votes"]),
                )
            )
    return blocking, non_blocking
