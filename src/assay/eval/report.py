"""An evaluation's outputs: ``scores.json``, ``scores.md`` and the lift chart ``lift.svg``.

The chart is plain SVG written here (no plotting library): F1, precision, recall, supported F1
and blocking F1 against the number of reps, solid with confirm and fact-check, dashed without.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from assay.eval.scores import CaseScore, ScoreSummary
from assay.eval.simulator import SimulatorConfig

if TYPE_CHECKING:
    from assay.eval.run import EvalReport, EvalRun

__all__ = [
    "CHART_FILE",
    "SCORES_JSON",
    "SCORES_MD",
    "LiftRow",
    "LiftTable",
    "lift_table",
    "render_lift_svg",
    "render_markdown",
    "scores_document",
    "write_outputs",
]

SCORES_JSON = "scores.json"
SCORES_MD = "scores.md"
CHART_FILE = "lift.svg"


class LiftRow(BaseModel):
    """One configuration's headline figures."""

    model_config = ConfigDict(frozen=True)

    label: str
    reps: int
    block_support: int
    checks: bool
    precision: float | None
    recall: float | None
    f1: float | None
    f1_lift: float | None
    """F1 minus the F1 of one rep with the same checks setting (``None`` without that row)."""
    blocking_precision: float | None
    blocking_recall: float | None
    blocking_f1: float | None
    supported_precision: float | None
    """Precision of the findings at least ``block_support`` reps agreed on (analyzers count)."""
    supported_recall: float | None
    supported_f1: float | None
    findings_per_pr: float | None
    false_blocks_on_clean: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    judge_f1: float | None = None


class LiftTable(BaseModel):
    """The ensemble against one rep, at one matching window."""

    model_config = ConfigDict(frozen=True)

    window: int
    rows: list[LiftRow]
    simulator: SimulatorConfig | None = None


def lift_table(
    reports: Sequence[EvalReport], *, window: int, simulator: SimulatorConfig | None
) -> LiftTable:
    """Build the lift table from each configuration's scores.

    Args:
        reports: One per configuration.
        window: The matching window the table reports.
        simulator: The simulated reviewer, when one was used (shown with the table).

    Returns:
        The table, rows in the reports' order.
    """
    baseline = {
        report.ensemble.checks: report.summary.at(window).all.f1
        for report in reports
        if report.ensemble.reps == 1
    }
    rows = []
    for report in reports:
        summary = report.summary
        scores = summary.at(window)
        base = baseline.get(report.ensemble.checks)
        rows.append(
            LiftRow(
                label=report.label,
                reps=report.ensemble.reps,
                block_support=report.ensemble.support,
                checks=report.ensemble.checks,
                precision=scores.all.precision,
                recall=scores.all.recall,
                f1=scores.all.f1,
                f1_lift=(
                    round(scores.all.f1 - base, 4)
                    if scores.all.f1 is not None and base is not None
                    else None
                ),
                blocking_precision=scores.blocking.precision,
                blocking_recall=scores.blocking.recall,
                blocking_f1=scores.blocking.f1,
                supported_precision=scores.supported.precision,
                supported_recall=scores.supported.recall,
                supported_f1=scores.supported.f1,
                findings_per_pr=summary.findings_per_pr,
                false_blocks_on_clean=summary.false_blocks_on_clean,
                calls=summary.calls,
                prompt_tokens=summary.prompt_tokens,
                completion_tokens=summary.completion_tokens,
                judge_f1=summary.judge.f1 if summary.judge is not None else None,
            )
        )
    return LiftTable(window=window, rows=rows, simulator=simulator)


def scores_document(run: EvalRun) -> dict[str, object]:
    """The content of ``scores.json``."""
    return {
        "configs": [
            {
                "label": report.label,
                "reps": report.ensemble.reps,
                "block_support": report.ensemble.support,
                "checks": report.ensemble.checks,
                "summary": report.summary.model_dump(mode="json"),
                "cases": [score.model_dump(mode="json") for score in report.cases],
            }
            for report in run.reports
        ],
        "lift": run.lift.model_dump(mode="json") if run.lift is not None else None,
        "notes": list(run.notes),
    }


def write_outputs(run: EvalRun) -> None:
    """Write ``scores.json``, ``scores.md`` and, with several configurations, ``lift.svg``."""
    out = run.out_dir
    (out / SCORES_JSON).write_text(json.dumps(scores_document(run), indent=2) + "\n", "utf-8")
    (out / SCORES_MD).write_text(render_markdown(run), "utf-8")
    if run.lift is not None and len(run.lift.rows) > 1:
        (out / CHART_FILE).write_text(render_lift_svg(run.lift), "utf-8")


# -- Markdown --------------------------------------------------------------------------------


def render_markdown(run: EvalRun) -> str:
    """The evaluation as Markdown: the lift table, then each configuration and its cases."""
    lines = ["# Assay evaluation", ""]
    if run.lift is not None and run.lift.simulator is not None:
        lines += [f"Reviewer: simulated ({_describe(run.lift.simulator)}).", ""]
    window = run.lift.window if run.lift is not None else None
    if window is not None:
        lines += [
            f"Matching: same file, within {window} lines, compatible category, one-to-one "
            "(scores at every window are in `scores.json`).",
            "",
        ]
    if run.lift is not None and len(run.lift.rows) > 1:
        lines += ["## Lift of the ensemble", "", *_lift_markdown(run.lift), ""]
        lines += [f"![F1, precision and recall against reps]({CHART_FILE})", ""]
    for report in run.reports:
        lines += _report_markdown(report)
    if run.notes:
        lines += ["## Notes", "", *(f"- {note}" for note in run.notes), ""]
    return "\n".join(lines).rstrip() + "\n"


def _lift_markdown(table: LiftTable) -> list[str]:
    header = (
        "| reps | support | checks | precision | recall | F1 | ΔF1 vs 1 rep | blocking P "
        "| blocking R | blocking F1 | supported P | supported R | supported F1 | findings/PR "
        "| false blocks (clean) | calls | tokens |"
    )
    rows = [header, "|" + "---|" * 17]
    for row in table.rows:
        rows.append(
            f"| {row.reps} | {row.block_support} | {'on' if row.checks else 'off'} "
            f"| {_pct(row.precision)} | {_pct(row.recall)} | {_pct(row.f1)} "
            f"| {_signed(row.f1_lift)} | {_pct(row.blocking_precision)} "
            f"| {_pct(row.blocking_recall)} | {_pct(row.blocking_f1)} "
            f"| {_pct(row.supported_precision)} | {_pct(row.supported_recall)} "
            f"| {_pct(row.supported_f1)} | {_num(row.findings_per_pr)} "
            f"| {row.false_blocks_on_clean} | {row.calls} "
            f"| {row.prompt_tokens + row.completion_tokens} |"
        )
    note = (
        "*Supported*: only findings at least `support` reps agreed on (analyzer findings always "
        "count), as if the non-blocking list were filtered by votes too."
    )
    return [*rows, "", note]


def _report_markdown(report: EvalReport) -> list[str]:
    summary = report.summary
    lines = [f"## {report.label}", ""]
    lines += [
        "| window | precision | recall | F1 | blocking P | blocking R | blocking F1 "
        "| supported P | supported R | supported F1 |",
        "|" + "---|" * 10,
    ]
    for score in summary.windows:
        lines.append(
            f"| {score.window} | {_pct(score.all.precision)} | {_pct(score.all.recall)} "
            f"| {_pct(score.all.f1)} | {_pct(score.blocking.precision)} "
            f"| {_pct(score.blocking.recall)} | {_pct(score.blocking.f1)} "
            f"| {_pct(score.supported.precision)} | {_pct(score.supported.recall)} "
            f"| {_pct(score.supported.f1)} |"
        )
    lines += ["", *_summary_lines(summary), "", "### Recall by category", ""]
    lines += ["| category | found | defects | recall |", "|---|---|---|---|"]
    for category, recall in summary.category_recall.items():
        lines.append(f"| {category} | {recall.found} | {recall.total} | {_pct(recall.recall)} |")
    lines += ["", "### Cases", "", *_cases_markdown(report.cases, summary.primary_window), ""]
    return lines


def _summary_lines(summary: ScoreSummary) -> list[str]:
    judge = (
        f"; judge: precision {_pct(summary.judge.precision)}, recall "
        f"{_pct(summary.judge.recall)}, F1 {_pct(summary.judge.f1)}"
        if summary.judge is not None
        else ""
    )
    return [
        f"{summary.cases} cases ({summary.clean_cases} clean); findings per PR "
        f"{_num(summary.findings_per_pr)} (clean PRs: {_num(summary.findings_per_clean_pr)}); "
        f"blocking per PR {_num(summary.blocking_per_pr)}; false blocks on clean PRs "
        f"{summary.false_blocks_on_clean}{judge}.",
        "",
        f"Cost: {summary.calls} calls ({summary.cached_calls} from the replay cache), "
        f"{summary.prompt_tokens} prompt + {summary.completion_tokens} completion tokens, "
        f"{summary.wall_ms} ms of rounds; critical-path ratio (wall / estimated critical path) "
        f"{_num(summary.critical_path_ratio_mean)}."
        + (f" {summary.failed_reviews} reviews failed." if summary.failed_reviews else ""),
    ]


def _cases_markdown(cases: Sequence[CaseScore], window: int) -> list[str]:
    rows = [
        "| case | language | defects | findings | blocking | TP | FP | FN | verdict | calls "
        "| tokens | wall ms | crit. path ratio |",
        "|" + "---|" * 13,
    ]
    for case in cases:
        score = next((w for w in case.windows if w.window == window), case.windows[0])
        rows.append(
            f"| {case.case} | {case.language} | {case.truths} | {case.findings} "
            f"| {case.blocking_findings} | {score.all.tp} | {score.all.fp} | {score.all.fn} "
            f"| {case.verdict} | {case.calls} | {case.prompt_tokens + case.completion_tokens} "
            f"| {case.wall_ms} | {_num(case.critical_path_ratio)} |"
        )
    return rows


def _describe(config: SimulatorConfig) -> str:
    return (
        f"recall {config.recall:g} per rep, {config.fp_rate:g} false findings per rep "
        f"({config.fp_shared:.0%} repeated decoys), {config.line_jitter_rate:.0%} of lines off by "
        f"up to {config.line_jitter}, "
        f"severity noise {config.severity_noise:g}, check error rate "
        f"{config.check_error_rate:g}, seed {config.seed}"
    )


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.2f}"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


# -- SVG -------------------------------------------------------------------------------------

_WIDTH, _HEIGHT = 640, 400
_LEFT, _RIGHT, _TOP, _BOTTOM = 60, 170, 40, 50
_SERIES = (
    ("f1", "F1", "#1f77b4"),
    ("precision", "precision", "#2ca02c"),
    ("recall", "recall", "#ff7f0e"),
    ("supported_f1", "supported F1", "#17becf"),
    ("blocking_f1", "blocking F1", "#9467bd"),
)


def render_lift_svg(table: LiftTable) -> str:
    """F1, precision, recall, supported and blocking F1 against reps: solid with checks, dashed
    without.

    Args:
        table: The lift table.

    Returns:
        A standalone SVG document.
    """
    reps = sorted({row.reps for row in table.rows})
    plot_width = _WIDTH - _LEFT - _RIGHT
    plot_height = _HEIGHT - _TOP - _BOTTOM

    def x_of(count: int) -> float:
        if len(reps) == 1:
            return _LEFT + plot_width / 2
        return _LEFT + plot_width * reps.index(count) / (len(reps) - 1)

    def y_of(value: float) -> float:
        return _TOP + plot_height * (1 - value)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{_WIDTH}" height="{_HEIGHT}" fill="white"/>',
        f'<text x="{_LEFT}" y="22" font-size="15" font-weight="bold">'
        f"Ensemble lift (matching window {table.window} lines)</text>",
    ]
    for tick in range(0, 11, 2):
        value = tick / 10
        y = y_of(value)
        parts.append(
            f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{_LEFT + plot_width}" y2="{y:.1f}" '
            'stroke="#ddd"/>'
        )
        parts.append(f'<text x="{_LEFT - 8}" y="{y + 4:.1f}" text-anchor="end">{value:.1f}</text>')
    for count in reps:
        x = x_of(count)
        parts.append(
            f'<text x="{x:.1f}" y="{_TOP + plot_height + 18}" text-anchor="middle">{count}</text>'
        )
    parts.append(
        f'<text x="{_LEFT + plot_width / 2:.1f}" y="{_HEIGHT - 10}" text-anchor="middle">'
        "discovery reps</text>"
    )
    parts.append(
        f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_TOP + plot_height}" stroke="#333"/>'
    )
    parts.append(
        f'<line x1="{_LEFT}" y1="{_TOP + plot_height}" x2="{_LEFT + plot_width}" '
        f'y2="{_TOP + plot_height}" stroke="#333"/>'
    )
    legend_y = _TOP + 10
    for checks in (True, False):
        rows = sorted((row for row in table.rows if row.checks is checks), key=lambda r: r.reps)
        if not rows:
            continue
        dash = "" if checks else ' stroke-dasharray="6 4"'
        for key, name, color in _SERIES:
            points = [
                (x_of(row.reps), y_of(value))
                for row in rows
                if (value := getattr(row, key)) is not None
            ]
            if len(points) > 1:
                path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
                parts.append(
                    f'<polyline points="{path}" fill="none" stroke="{color}" '
                    f'stroke-width="2"{dash}/>'
                )
            for x, y in points:
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{color}"/>')
            legend_x = _WIDTH - _RIGHT + 20
            parts.append(
                f'<line x1="{legend_x}" y1="{legend_y}" x2="{legend_x + 26}" y2="{legend_y}" '
                f'stroke="{color}" stroke-width="2"{dash}/>'
            )
            label = f"{name} ({'checks' if checks else 'no checks'})"
            parts.append(f'<text x="{legend_x + 32}" y="{legend_y + 4}">{label}</text>')
            legend_y += 20
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
