"""Inline comments: evidence cut, prefaces, checklist line, marker, and which review posts them."""

from __future__ import annotations

import pytest

from assay.diff.types import AnchorMode, Side
from assay.model import Severity
from assay.render import (
    EVIDENCE_BUDGET,
    finding_marker,
    inline_comments,
    render_inline_comment,
    truncate_evidence,
)

from ._factory import english_round, reported, round_result
from ._visible import visible_text


def test_evidence_within_the_budget_is_kept_whole() -> None:
    text = "x" * EVIDENCE_BUDGET

    assert truncate_evidence(text, ellipsis=True) == text
    assert truncate_evidence(text, ellipsis=False) == text


def test_longer_evidence_is_cut_to_the_budget_with_or_without_an_ellipsis() -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(EVIDENCE_BUDGET + 1))

    inline = truncate_evidence(text, ellipsis=True)
    checklist = truncate_evidence(text, ellipsis=False)

    assert EVIDENCE_BUDGET == 500
    assert inline == text[:497] + "..." and len(inline) == 500
    assert checklist == text[:500] and len(checklist) == 500


def test_the_inline_comment_cuts_evidence_but_never_the_suggestion() -> None:
    evidence = "证据" * 400
    suggestion = "建议内容" * 300
    finding = reported("abc", Severity.P2, "T", "a.py", 1, evidence=evidence, suggestion=suggestion)

    blocks = visible_text(render_inline_comment(finding, lang="zh")).rstrip("\n").split("\n\n")

    assert blocks == ["[P2] T", evidence[:497] + "...", f"建议: {suggestion}"]


def test_a_cut_inside_a_code_block_does_not_swallow_the_rest() -> None:
    evidence = "See:\n```\n" + "line\n" * 200 + "```"
    finding = reported("abc", Severity.P2, "T", "a.py", 1, evidence=evidence, suggestion="Fix it.")

    body = render_inline_comment(finding, lang="en")

    assert body.endswith("...\n```\n\nSuggestion: Fix it.\n\n<!-- assay:finding=abc -->\n")


def test_checklist_items_are_joined_by_a_separator_they_cannot_contain() -> None:
    finding = reported(
        "abc", Severity.P3, "T", "a.py", 1, checklist_items=("G.6.1.7", "R.I.1", "a · b", " ")
    )

    body = render_inline_comment(finding, lang="zh")

    assert "\n\nChecklist: G.6.1.7 · R.I.1 · a ‧ b\n\n" in body


def test_no_checklist_line_without_items() -> None:
    finding = reported("abc", Severity.P3, "T", "a.py", 1, suggestion="S")

    assert render_inline_comment(finding, lang="zh") == (
        "[P3] T\n\n建议: S\n\n<!-- assay:finding=abc -->\n"
    )


def test_a_file_level_comment_names_the_actual_line_zh() -> None:
    finding = reported("abc", Severity.P3, "T", "img/logo.png", 1, anchor_mode=AnchorMode.FILE)

    assert render_inline_comment(finding, lang="zh").startswith(
        "📍 实际位置 img/logo.png:1（该文件没有可评论的 diff 行，作为文件级评论）\n\n[P3] T\n\n"
    )


def test_a_downgraded_finding_says_so_in_its_title_line() -> None:
    finding = reported(
        "abc",
        Severity.P2,
        "T",
        "a.py",
        1,
        original_severity=Severity.P1,
        gate_reason="support 2/5 < 3",
    )

    assert render_inline_comment(finding, lang="zh").startswith(
        "[P2] T（由 P1 降级：support 2/5 < 3）\n\n"
    )


@pytest.mark.parametrize("finding_id", ["x -->", "a b", "", "<!--"])
def test_a_finding_id_that_could_break_the_marker_is_refused(finding_id: str) -> None:
    with pytest.raises(ValueError, match="marker"):
        finding_marker(finding_id)


def test_blocking_round_posts_p0_p1_on_main_and_p2_p3_on_the_followup() -> None:
    comments = inline_comments(english_round(), lang="en")

    assert [(c.finding_id, c.severity, c.review) for c in comments] == [
        ("a0c1d2e3f4a5", Severity.P0, "main"),
        ("b1c2d3e4f5a6", Severity.P1, "main"),
        ("c2d3e4f5a6b7", Severity.P2, "followup"),
        ("d3e4f5a6b7c8", Severity.P2, "followup"),
        # e4f5a6b7c8d9 (docs/pool.md) is not in the diff: body only, no comment.
        ("f5a6b7c8d9e0", Severity.P3, "followup"),
    ]


def test_lgtm_round_posts_everything_on_main() -> None:
    comments = inline_comments(english_round(blocking=False), lang="en")

    assert {c.review for c in comments} == {"main"}
    assert len(comments) == 3


def test_comment_coordinates_follow_the_anchor() -> None:
    comments = {c.finding_id: c for c in inline_comments(english_round(), lang="en")}

    on_line = comments["a0c1d2e3f4a5"]
    assert (on_line.path, on_line.line, on_line.side, on_line.moved) == (
        "app/db.py",
        88,
        Side.RIGHT,
        False,
    )
    moved = comments["b1c2d3e4f5a6"]
    assert (moved.path, moved.line, moved.anchor_mode, moved.moved) == (
        "app/pool.py",
        30,
        AnchorMode.NEAREST_HUNK,
        True,
    )
    assert moved.body.startswith("📍 Actual location app/pool.py:12 ")
    file_level = comments["f5a6b7c8d9e0"]
    assert (file_level.line, file_level.side, file_level.start_line, file_level.moved) == (
        None,
        None,
        None,
        True,
    )


def test_a_range_anchor_keeps_its_start() -> None:
    finding = reported("abc", Severity.P1, "T", "a.py", 12)
    ranged = finding.model_copy(
        update={
            "anchor": finding.anchor.model_copy(update={"start_line": 10, "start_side": Side.RIGHT})
        }
    )

    (comment,) = inline_comments(round_result([ranged]))

    assert (comment.start_line, comment.start_side, comment.line) == (10, Side.RIGHT, 12)
