"""en outputs, pinned as exact markdown (golden/en_*; written once, read and reviewed by hand)."""

from __future__ import annotations

from assay.render import (
    findings_json,
    inline_comments,
    render_followup,
    render_review,
    render_summary,
)

from ._factory import english_round
from ._seed import golden_text


def test_blocking_review() -> None:
    assert render_review(english_round(), lang="en") == golden_text("en_review_blocking.md")


def test_lgtm_review_in_another_time_zone() -> None:
    markdown = render_review(english_round(blocking=False), lang="en", tz="UTC-4")

    assert markdown == golden_text("en_review_lgtm.md")


def test_followup_review() -> None:
    assert render_followup(english_round(), lang="en") == golden_text("en_followup.md")


def test_round_summary_blocked_and_passed() -> None:
    assert render_summary(english_round(), lang="en") == golden_text("en_summary.md")
    assert render_summary(english_round(blocking=False)) == golden_text("en_summary_pass.md")


def test_inline_comment_bodies() -> None:
    bodies = [
        f"<!-- test: {comment.finding_id} on {comment.review} -->\n{comment.body}"
        for comment in inline_comments(english_round(), lang="en")
    ]

    assert "\n".join(bodies) == golden_text("en_inline_comments.md")


def test_findings_json() -> None:
    assert findings_json(english_round()) == golden_text("en_findings.json")
