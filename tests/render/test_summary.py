"""Round summary and KPI JSON: verdicts, votes, notes, seams."""

from __future__ import annotations

import json

from assay.model import FindingSource, Kpi, Severity
from assay.render import render_kpi_json, render_summary, summary_verdict

from ._factory import english_round, reported, round_result
from ._visible import visible_text


def _lines(markdown: str) -> list[str]:
    return visible_text(markdown).rstrip("\n").split("\n")


def test_kpi_json_keeps_the_model_key_order_with_a_one_space_indent() -> None:
    text = render_kpi_json(english_round())

    assert list(json.loads(text)) == list(Kpi.model_fields)
    assert text.split("\n")[:3] == ["{", ' "reps": 5,', ' "agentic_reps": 0,']
    assert '  "candidates": 0,' in text.split("\n")


def test_verdict_is_blocked_with_a_count_or_pass() -> None:
    assert summary_verdict(english_round()) == "BLOCKED(2)"
    assert summary_verdict(english_round(blocking=False)) == "PASS"


def test_a_passing_round_has_no_blocking_section_zh() -> None:
    lines = _lines(render_summary(english_round(blocking=False), lang="zh"))

    assert lines[0] == "PR #42 第 3 轮评审 — PASS"
    assert not any(line.startswith("阻塞项") for line in lines)
    assert (
        lines[-1]
        == "assay review · 第 3 轮 · head 1f34a8aa9505 · PASS · 同一 PR 的结论就地更新这一条评论"
    )


def test_non_blocking_items_show_votes_static_and_downgrades_zh() -> None:
    lines = _lines(render_summary(english_round(), lang="zh"))

    assert (
        "  • [P2] Retry loop sleeps while holding the pool lock — app/db.py:120 · 票数 1/5"
        " · 由 P1 降级：support 1/5 < 3"
    ) in lines
    assert (
        "  • [P2] Local variable conn is assigned to but never used — app/db.py:95 · 票数 static"
    ) in lines


def test_a_static_blocking_finding_shows_static_votes() -> None:
    finding = reported(
        "s", Severity.P0, "Undefined name", "a.py", 3, category="F821", source=FindingSource.STATIC
    )

    lines = _lines(render_summary(round_result([finding]), lang="en"))

    assert "  • a.py:3 · category F821 · votes static · first seen r1" in lines


def test_the_support_threshold_and_platform_are_parameters() -> None:
    lines = _lines(render_summary(english_round(), lang="zh", platform="acme", min_support=4))

    assert "阻塞项（P0/P1，support≥4 且过全部门）" in lines
    assert "本报告由 acme 自动生成，同一 PR 的后续轮次就地更新同一条评论。" in lines


def test_a_local_run_without_author_zh() -> None:
    result = round_result(number=None, title="", author="", head_ref="feature/x")

    lines = _lines(render_summary(result, lang="zh"))

    assert lines[:4] == [
        "feature/x 第 1 轮评审 — PASS",
        "",
        "  • 标题：feature/x（open）",
        "  • head 1f34a8aa9505 · base f1a54a5f1171 · delta 0 文件 · discover 5/5 成功",
    ]


def test_multi_line_evidence_stays_inside_its_bullet() -> None:
    finding = reported(
        "b", Severity.P1, "T", "a.py", 1, evidence="First line.\nSecond line.", votes=5
    )

    markdown = render_summary(round_result([finding]), lang="en")

    assert "- Evidence: First line.\n  Second line.\n" in markdown


def test_a_model_name_with_backticks_cannot_close_the_kpi_block() -> None:
    result = round_result(kpi=Kpi(reps=5, model="evil```\n# heading"))

    markdown = render_summary(result)

    assert "\n````json\n" in markdown and "\n````\n" in markdown
