"""Text for ``assay history`` (a pull request's rounds) and the round choice of ``assay show``.

``assay history`` prints one row per stored round, oldest first::

    round  head          verdict     blocking  findings  reviewed (UTC)
    1      4227e27fb971  PASS               0         5  2026-08-30 09:12
    2      665a81d0c2aa  BLOCKED(1)         1         7  2026-08-31 18:40

The verdict is written as the round summary writes it (``BLOCKED(n)`` or ``PASS``). Columns are
aligned by display width, so the zh headings (full-width characters) line up too.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol

from assay.errors import ConfigError

__all__ = ["RoundRowLike", "render_history", "resolve_round"]


class RoundRowLike(Protocol):
    """One stored round as listed (``store.RoundSummary`` has these attributes)."""

    @property
    def round_index(self) -> int: ...

    @property
    def head_sha(self) -> str: ...

    @property
    def findings(self) -> int: ...

    @property
    def blocking(self) -> int: ...

    @property
    def created_at(self) -> datetime: ...


_HEADINGS = {
    "en": ("round", "head", "verdict", "blocking", "findings", "reviewed (UTC)"),
    "zh": ("轮次", "head", "结论", "阻塞", "发现", "评审时间 (UTC)"),
}
_EMPTY = {
    "en": "No rounds stored for {target}.",
    "zh": "{target} 没有已存储的评审轮次。",
}
_TITLE = {
    "en": "Rounds of {target}",
    "zh": "{target} 的评审轮次",
}
_RIGHT_ALIGNED = frozenset({3, 4})
"""Column indexes of counts."""


def render_history(rounds: Sequence[RoundRowLike], *, target: str, lang: str = "en") -> str:
    """The table ``assay history`` prints.

    Args:
        rounds: The stored rounds (``RoundStore.list_rounds``), any order.
        target: What the rounds belong to, as shown to the user (``PR #12``, a PR key).
        lang: ``"en"`` or ``"zh"``.

    Returns:
        A title line, then the aligned table (or one line saying there are no rounds), ending
        with a newline.

    Raises:
        ValueError: Unsupported ``lang``.
    """
    if lang not in _HEADINGS:
        raise ValueError(f"unsupported lang {lang!r}; supported: en, zh")
    if not rounds:
        return _EMPTY[lang].format(target=_one_line(target)) + "\n"
    rows = [list(_HEADINGS[lang])]
    for stored in sorted(rounds, key=lambda row: row.round_index):
        rows.append(
            [
                str(stored.round_index),
                stored.head_sha[:12],
                f"BLOCKED({stored.blocking})" if stored.blocking else "PASS",
                str(stored.blocking),
                str(stored.findings),
                _utc(stored.created_at),
            ]
        )
    widths = [max(_width(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = [_TITLE[lang].format(target=_one_line(target)), ""]
    for row in rows:
        cells = [
            _pad(cell, widths[column], right=column in _RIGHT_ALIGNED)
            for column, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def resolve_round(requested: int | None, available: Sequence[int], *, target: str) -> int:
    """The round ``assay show`` re-renders: the one asked for, or the latest.

    Args:
        requested: The ``ROUND`` argument; ``None`` for the latest.
        available: The stored round numbers of the pull request.
        target: The pull request, for the error message.

    Returns:
        A stored round number.

    Raises:
        ConfigError: The pull request has no stored rounds, or not that one; the message lists
            the stored ones.
    """
    stored = sorted(set(available))
    name = _one_line(target)
    if not stored:
        raise ConfigError(f"no rounds stored for {name}; run `assay review` first")
    if requested is None:
        return stored[-1]
    if requested not in stored:
        raise ConfigError(f"round {requested} of {name} is not stored; stored: {_ranges(stored)}")
    return requested


def _ranges(numbers: Sequence[int]) -> str:
    """``1-3, 5`` for ``[1, 2, 3, 5]``."""
    spans: list[tuple[int, int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], number)
        else:
            spans.append((number, number))
    return ", ".join(f"{first}-{last}" if last > first else f"{first}" for first, last in spans)


def _utc(moment: datetime) -> str:
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def _one_line(text: str) -> str:
    # The target can hold a branch name: no control characters or newlines in a terminal line.
    return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _pad(text: str, width: int, *, right: bool) -> str:
    padding = " " * (width - _width(text))
    return padding + text if right else text + padding
