"""The report's Markdown and SVG, from hand-made scores (undefined figures included)."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

from assay.eval.report import LiftRow, LiftTable, render_lift_svg

SVG = "{http://www.w3.org/2000/svg}"


def row(reps: int, checks: bool, f1: float | None) -> LiftRow:
    return LiftRow(
        label=f"r{reps}",
        reps=reps,
        block_support=reps // 2 + 1,
        checks=checks,
        precision=0.5,
        recall=0.8,
        f1=f1,
        f1_lift=None,
        blocking_precision=None,
        blocking_recall=None,
        blocking_f1=None,
        supported_precision=None,
        supported_recall=None,
        supported_f1=None,
        findings_per_pr=2.0,
        false_blocks_on_clean=0,
        calls=3,
        prompt_tokens=10,
        completion_tokens=5,
    )


def test_the_chart_draws_a_line_per_series_and_skips_undefined_points() -> None:
    table = LiftTable(
        window=3,
        rows=[row(1, True, 0.4), row(3, True, 0.6), row(5, True, None), row(1, False, 0.3)],
    )

    chart = ElementTree.fromstring(render_lift_svg(table))

    lines = chart.findall(f"{SVG}polyline")
    # checks on: F1 (2 defined points), precision and recall (3 each), blocking F1 (none);
    # checks off: one point per defined series, so no line.
    assert len(lines) == 3
    assert [len(line.get("points", "").split()) for line in lines] == [2, 3, 3]
    assert not any(line.get("stroke-dasharray") for line in lines)
    assert len(chart.findall(f"{SVG}circle")) == 2 + 3 + 3 + 3
    legend = [text.text for text in chart.findall(f"{SVG}text")]
    assert "F1 (no checks)" in legend and "recall (checks)" in legend
