"""Renderers: every text output of a review round, from one ``RoundResult``, in ``en`` or ``zh``.

All functions are pure: the same round renders to the same text. Untrusted text (titles,
evidence, suggestions, paths) is escaped so GitHub shows it verbatim; code spans and fenced code
in it stay code.

- ``render_review`` / ``render_followup``: the main review and the P2/P3 follow-up review.
- ``inline_comments`` / ``render_inline_comment``: the inline comments and where they go.
- ``render_summary`` / ``render_kpi_json``: the round-summary comment and its KPI block.
- ``findings_json``: machine output, ruff-like.
"""

from __future__ import annotations

from assay.render._locale import SUPPORTED_LANGS
from assay.render.comments import (
    CHECKLIST_SEPARATOR,
    EVIDENCE_BUDGET,
    InlineComment,
    finding_marker,
    inline_comments,
    render_inline_comment,
    truncate_evidence,
)
from assay.render.findings_json import finding_record, findings_json
from assay.render.review import render_followup, render_review
from assay.render.summary import SUMMARY_MARKER, render_kpi_json, render_summary, summary_verdict

__all__ = [
    "CHECKLIST_SEPARATOR",
    "EVIDENCE_BUDGET",
    "SUMMARY_MARKER",
    "SUPPORTED_LANGS",
    "InlineComment",
    "finding_marker",
    "finding_record",
    "findings_json",
    "inline_comments",
    "render_followup",
    "render_inline_comment",
    "render_kpi_json",
    "render_review",
    "render_summary",
    "summary_verdict",
    "truncate_evidence",
]
