"""Inline review comments (seed §3): their bodies and where each one is posted.

A comment body, blocks separated by one blank line::

    📍 实际位置 <path>:<line>（不在 diff 展示范围内，就近挂载）   only when moved to another line
    [P1] <title><downgrade note>
    <evidence, cut to EVIDENCE_BUDGET characters, ending "..." when cut>
    建议: <suggestion, never cut>                                   (en: Suggestion: …)
    Checklist: <item> · <item>                                     only with failing checklist items
    <!-- assay:finding=<id> -->                                    hidden, for idempotent publishing

A file-level comment (anchor mode FILE: the file is in the diff but has no commentable line) opens
with a similar preface naming the actual line. Checklist items are joined with `` · `` (U+00B7,
the seed's own field separator) instead of the seed's ``；``, which item texts do contain; an
item's own U+00B7 is replaced by U+2027 so the list always splits back unambiguously.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from assay.diff.types import AnchorMode, Side
from assay.model import ChecklistReport, ReportedFinding, RoundResult, Severity
from assay.render._common import (
    ReviewName,
    carrying_review,
    downgrade_note,
    escaped_line,
    location,
    title,
)
from assay.render._locale import get_locale
from assay.render._markdown import escape_markdown

__all__ = [
    "CHECKLIST_SEPARATOR",
    "EVIDENCE_BUDGET",
    "InlineComment",
    "finding_marker",
    "inline_comments",
    "render_inline_comment",
    "truncate_evidence",
]

EVIDENCE_BUDGET = 500
"""Characters of evidence (markdown source) an inline comment or checklist entry shows."""

CHECKLIST_SEPARATOR = " · "
_ELLIPSIS = "..."
_MARKER_ID = re.compile(r"^[A-Za-z0-9._:-]+$")


class InlineComment(BaseModel):
    """One review comment to post, with GitHub review-comment coordinates.

    ``line``/``side`` (and ``start_line``/``start_side`` for a range) are ``None`` for a
    file-level comment (anchor mode FILE).
    """

    model_config = ConfigDict(frozen=True)

    finding_id: str
    path: str
    line: int | None
    side: Side | None
    start_line: int | None
    start_side: Side | None
    body: str
    moved: bool
    """The comment is not on the finding's own line (nearest hunk, or file level)."""
    anchor_mode: AnchorMode
    severity: Severity
    review: ReviewName
    """``main`` or ``followup``: which review of the round carries the comment (seed §3.4)."""


def truncate_evidence(text: str, *, ellipsis: bool) -> str:
    """Cut evidence to ``EVIDENCE_BUDGET`` characters, as the seed does.

    Text within the budget is returned unchanged. Longer text becomes
    ``text[:EVIDENCE_BUDGET - 3] + "..."`` (inline comments, ``ellipsis=True``) or
    ``text[:EVIDENCE_BUDGET]`` (checklist entries, ``ellipsis=False``); both are
    ``EVIDENCE_BUDGET`` characters long. The cut may split a code span, which then renders its
    backtick literally, as on the seed pages.

    Args:
        text: The evidence paragraph (markdown source).
        ellipsis: End a cut text with ``...``.

    Returns:
        The possibly cut text.
    """
    if len(text) <= EVIDENCE_BUDGET:
        return text
    if ellipsis:
        return text[: EVIDENCE_BUDGET - len(_ELLIPSIS)] + _ELLIPSIS
    return text[:EVIDENCE_BUDGET]


def finding_marker(finding_id: str) -> str:
    """The hidden marker that identifies a finding's comment across reruns.

    Raises:
        ValueError: The id has characters that could break out of an HTML comment.
    """
    if not _MARKER_ID.match(finding_id):
        raise ValueError(f"finding id not usable in a marker: {finding_id!r}")
    return f"<!-- assay:finding={finding_id} -->"


def render_inline_comment(
    finding: ReportedFinding, *, lang: str = "en", checklist: ChecklistReport | None = None
) -> str:
    """Render one inline comment body.

    Args:
        finding: The finding; its anchor decides the preface.
        lang: ``"en"`` or ``"zh"``.
        checklist: The round's checklist report: it turns the item ids in
            ``finding.checklist_items`` into ``[<label>] <item text>`` (ids it does not know
            are shown as they are).

    Returns:
        The body as GitHub markdown, ending with a newline.

    Raises:
        ValueError: Unsupported ``lang``, or a finding id unusable in the hidden marker.
    """
    locale = get_locale(lang)
    blocks: list[str] = []
    mode = finding.anchor.mode
    if mode is AnchorMode.NEAREST_HUNK:
        blocks.append(locale.moved_preface.format(location=location(finding)))
    elif mode is AnchorMode.FILE:
        blocks.append(locale.file_level_preface.format(location=location(finding)))
    note = downgrade_note(
        finding,
        with_reason=locale.downgrade_note,
        without_reason=locale.downgrade_note_no_reason,
    )
    blocks.append(f"[{finding.severity.value}] {title(finding)}{note}")
    evidence = finding.finding.evidence.strip()
    if evidence:
        blocks.append(escape_markdown(truncate_evidence(evidence, ellipsis=True)))
    suggestion = finding.finding.suggestion.strip()
    if suggestion:
        blocks.append(locale.inline_suggestion.format(suggestion=escape_markdown(suggestion)))
    items = _checklist_items(finding.checklist_items, checklist)
    if items:
        blocks.append(locale.checklist_line.format(items=CHECKLIST_SEPARATOR.join(items)))
    blocks.append(finding_marker(finding.id))
    return "\n\n".join(blocks) + "\n"


def inline_comments(result: RoundResult, *, lang: str = "en") -> list[InlineComment]:
    """Every inline comment of the round, in body order.

    Findings whose anchor mode is BODY (file not in the diff) get none: the review body lists
    them. The ``review`` field says which review carries each comment (seed §3.4).

    Args:
        result: The round.
        lang: ``"en"`` or ``"zh"``.

    Returns:
        The comments to post.

    Raises:
        ValueError: Unsupported ``lang``.
    """
    get_locale(lang)  # reject an unsupported lang even when there is nothing to render
    verdict = result.verdict
    comments: list[InlineComment] = []
    for finding in result.findings:
        anchor = finding.anchor
        if anchor.mode is AnchorMode.BODY:
            continue
        file_level = anchor.mode is AnchorMode.FILE
        comments.append(
            InlineComment(
                finding_id=finding.id,
                path=anchor.path,
                line=None if file_level else anchor.line,
                side=None if file_level else anchor.side,
                start_line=None if file_level else anchor.start_line,
                start_side=None if file_level else anchor.start_side,
                body=render_inline_comment(finding, lang=lang, checklist=result.checklist),
                moved=anchor.moved,
                anchor_mode=anchor.mode,
                severity=finding.severity,
                review=carrying_review(finding, verdict),
            )
        )
    return comments


def _checklist_items(item_ids: Sequence[str], report: ChecklistReport | None) -> list[str]:
    """The ``Checklist:`` entries: ``[<label>] <item text>`` (without the section name) for the
    ids the report knows, in the review body's order (checklist order, then entry text), then
    any other value as given."""
    known = {item.item_id: item for item in report.items} if report is not None else {}
    groups = {name: index for index, name in enumerate(report.checklists)} if report else {}
    unique = list(dict.fromkeys(item_id for item_id in item_ids if item_id.strip()))
    resolved = sorted(
        (known[item_id] for item_id in unique if item_id in known),
        key=lambda item: (
            groups.get(item.checklist, len(groups)),
            f"[{item.label}] {item.section} — {item.text}",
        ),
    )
    texts = [f"[{item.label}] {item.text}" for item in resolved]
    texts += [item_id for item_id in unique if item_id not in known]
    return [_checklist_item(text) for text in texts]


def _checklist_item(item: str) -> str:
    return escaped_line(item.replace("·", "‧"))
