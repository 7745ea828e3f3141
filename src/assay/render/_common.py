"""Pieces several renderers share: how a PR, a location, a title and a downgrade are written."""

from __future__ import annotations

from typing import Literal

from assay.model import PullRequestMeta, ReportedFinding, Verdict
from assay.render._markdown import escape_markdown, one_line

__all__ = [
    "ReviewName",
    "carrying_review",
    "downgrade_note",
    "escaped_line",
    "location",
    "short_sha",
    "target",
    "title",
]

ReviewName = Literal["main", "followup"]


def escaped_line(text: str) -> str:
    """Untrusted text as one escaped markdown line."""
    return escape_markdown(one_line(text))


def target(pr: PullRequestMeta) -> str:
    """``PR #1344``, or the head branch name for a local run (which has no PR number)."""
    return f"PR #{pr.number}" if pr.number is not None else escaped_line(pr.head_ref)


def short_sha(sha: str) -> str:
    return sha[:12]


def location(reported: ReportedFinding) -> str:
    """The finding's actual ``path:line`` (never the anchor's), escaped."""
    return f"{escaped_line(reported.finding.path)}:{reported.finding.line}"


def title(reported: ReportedFinding) -> str:
    return escaped_line(reported.finding.title)


def downgrade_note(reported: ReportedFinding, *, with_reason: str, without_reason: str) -> str:
    """The note for a finding the gate downgraded; ``""`` when it was not downgraded.

    Args:
        reported: The finding.
        with_reason: The locale template with ``{original}`` and ``{reason}``.
        without_reason: The template used when the gate recorded no reason.
    """
    original = reported.original_severity
    if original is None or original is reported.severity:
        return ""
    reason = escaped_line(reported.gate_reason)
    if not reason:
        return without_reason.format(original=original.value)
    return with_reason.format(original=original.value, reason=reason)


def carrying_review(reported: ReportedFinding, verdict: Verdict) -> ReviewName:
    """Which review carries the finding's inline comment (seed §3.4).

    A BLOCKING round posts P0/P1 comments on the main (REQUEST_CHANGES) review and P2/P3 on the
    follow-up; an LGTM round has no follow-up, so the main review carries everything.
    """
    if verdict is Verdict.BLOCKING and not reported.severity.may_block:
        return "followup"
    return "main"
