"""zh inline comments against the seed pages' own text (golden/seed000_inline*.zh.txt)."""

from __future__ import annotations

from assay.diff.types import AnchorMode
from assay.render import render_inline_comment

from ._factory import reported
from ._seed import golden_text, parse_inline
from ._visible import visible_text


def test_inline_comment_reads_like_seed_000() -> None:
    # Seed 000 R1, P3 at DecodeRpcServer.cc:207, anchored on its own line.
    seed = parse_inline(golden_text("seed000_inline.zh.txt"))
    finding = reported(
        "a1b2c3d4e5f6",
        seed.severity,
        seed.title,
        "rtp_llm/cpp/model_rpc/DecodeRpcServer.cc",
        207,
        evidence=seed.evidence,
        suggestion=seed.suggestion,
        checklist_items=seed.checklist_items,
    )

    body = render_inline_comment(finding, lang="zh")

    assert visible_text(body) == golden_text("seed000_inline.zh.txt")
    assert body.rstrip("\n").endswith("<!-- assay:finding=a1b2c3d4e5f6 -->")


def test_inline_comment_moved_to_nearest_hunk_opens_with_the_actual_location() -> None:
    # Seed 000 R1, P2 at DecodeRpcServer.h:70, posted on another hunk of the same file.
    seed = parse_inline(golden_text("seed000_inline_moved.zh.txt"))
    assert seed.actual_path is not None and seed.actual_line is not None
    finding = reported(
        "0123456789ab",
        seed.severity,
        seed.title,
        seed.actual_path,
        seed.actual_line,
        evidence=seed.evidence,
        suggestion=seed.suggestion,
        checklist_items=seed.checklist_items,
        anchor_mode=AnchorMode.NEAREST_HUNK,
        anchor_line=95,
    )

    body = render_inline_comment(finding, lang="zh")

    assert visible_text(body) == golden_text("seed000_inline_moved.zh.txt")
    assert body.startswith(
        "📍 实际位置 rtp_llm/cpp/model_rpc/DecodeRpcServer.h:70"
        "（不在 diff 展示范围内，就近挂载）\n\n"
    )
