"""``assay eval``: the command's options as one value, and the function the CLI calls.

Example (what ``assay eval bench/cases --simulator --reps 1,3,5 --out eval-out`` does)::

    exit_code = eval_command(
        EvalOptions(cases=Path("bench/cases"), out=Path("eval-out"), reps=(1, 3, 5),
                    simulator=True),
        echo=print,
    )
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from assay.config import Settings
from assay.errors import ConfigError
from assay.eval.matcher import DEFAULT_WINDOWS, PRIMARY_WINDOW
from assay.eval.report import SCORES_MD
from assay.eval.run import EvalRun, rescore, run_lift
from assay.eval.simulator import SimulatorConfig

__all__ = ["EvalOptions", "eval_command"]


@dataclass(frozen=True)
class EvalOptions:
    """The options of ``assay eval`` (CLI flag in brackets).

    Args:
        cases: Cases directory or archive (``CASES``).
        out: Output directory (``--out``); also holds the store and its replay cache.
        reps: Rep counts (``--reps 1,3,5``); several give a lift table.
        block_support: Votes to block (``--block-support``); ``None``: a majority of reps.
        checks: Confirm and fact-check ``on``, ``off`` or ``both`` (``--checks``).
        simulator: Review against the noisy simulator (``--simulator``).
        sim_recall: Simulated per-rep recall (``--sim-recall``).
        sim_fp: Simulated false findings per rep and case (``--sim-fp``).
        seed: Simulator seed (``--seed``).
        judge: Also score with the LLM judge (``--judge``).
        windows: Matching windows (``--windows 0,3,10``).
        primary_window: Headline window (``--window``).
        lang: Review language (``--lang``).
        rescore: Re-score the run in ``out`` without model calls (``--rescore``).
        replay: With ``rescore``, review again from the replay cache (``--replay``).
    """

    cases: Path | None
    out: Path
    reps: tuple[int, ...] = (1,)
    block_support: int | None = None
    checks: Literal["on", "off", "both"] = "on"
    simulator: bool = False
    sim_recall: float = 0.6
    sim_fp: float = 1.0
    seed: int = 0
    judge: bool = False
    windows: tuple[int, ...] = DEFAULT_WINDOWS
    primary_window: int = PRIMARY_WINDOW
    lang: Literal["en", "zh"] = "en"
    rescore: bool = False
    replay: bool = False


def eval_command(
    options: EvalOptions,
    *,
    settings: Settings | None = None,
    echo: Callable[[str], None] = lambda _line: None,
) -> int:
    """Run or re-score an evaluation and report it.

    Args:
        options: The command's options.
        settings: The model endpoint (ignored with the simulator); ``Settings()`` by default.
        echo: Where the summary goes (the CLI passes its console's print).

    Returns:
        The exit code: 0 (an evaluation has no failing verdict; failures raise).

    Raises:
        ConfigError: Invalid options or cases, or no model configured.
        LLMUnreachable: The model endpoint cannot be reached.
    """
    _validate(options)
    progress = echo
    if options.rescore:
        run = rescore(
            options.out,
            windows=options.windows,
            primary_window=options.primary_window,
            replay=options.replay,
            judge=options.judge or None,
            progress=progress,
        )
    else:
        assert options.cases is not None  # checked by _validate
        simulator = (
            SimulatorConfig(recall=options.sim_recall, fp_rate=options.sim_fp, seed=options.seed)
            if options.simulator
            else None
        )
        checks = {"on": (True,), "off": (False,), "both": (True, False)}[options.checks]
        run = run_lift(
            options.cases,
            out_dir=options.out,
            reps=options.reps,
            checks=checks,
            block_support=options.block_support,
            simulator=simulator,
            settings=settings,
            judge=options.judge,
            windows=options.windows,
            primary_window=options.primary_window,
            lang=options.lang,
            progress=progress,
        )
    for line in summary_lines(run):
        echo(line)
    return 0


def summary_lines(run: EvalRun) -> list[str]:
    """A few lines for the terminal: each configuration's headline figures, then where the
    full report is."""
    lines = []
    for report in run.reports:
        score = report.summary.at(report.summary.primary_window)
        lines.append(
            f"{report.label}: precision {_fmt(score.all.precision)} recall "
            f"{_fmt(score.all.recall)} F1 {_fmt(score.all.f1)}; blocking precision "
            f"{_fmt(score.blocking.precision)} recall {_fmt(score.blocking.recall)}; "
            f"{_fmt(report.summary.findings_per_pr)} findings/PR"
        )
    lines += [f"note: {note}" for note in run.notes]
    lines.append(f"report: {run.out_dir / SCORES_MD}")
    return lines


def _validate(options: EvalOptions) -> None:
    if not options.rescore and options.cases is None:
        raise ConfigError("assay eval needs CASES (or --rescore with --out of an earlier run)")
    if options.replay and not options.rescore:
        raise ConfigError("--replay goes with --rescore")
    if not options.reps or any(count < 1 or count > 16 for count in options.reps):
        raise ConfigError("--reps takes counts from 1 to 16, e.g. --reps 1,3,5")
    if any(window < 0 for window in options.windows):
        raise ConfigError("--windows takes line counts ≥ 0, e.g. --windows 0,3,10")
    if options.primary_window not in options.windows:
        raise ConfigError(f"--window {options.primary_window} is not among --windows")
    if not 0 <= options.sim_recall <= 1:
        raise ConfigError("--sim-recall is a probability between 0 and 1")
    if options.sim_fp < 0:
        raise ConfigError("--sim-fp is a number of false findings per rep, ≥ 0")


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
