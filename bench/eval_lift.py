"""Benchmark: the ensemble's lift over one rep, on every case in bench/cases, with the simulator.

For each simulator seed, reviews every case with 1, 3 and 5 reps, with and without confirm and
fact-check, through the public runner against the noisy simulated reviewer on loopback, and
scores the reviews. Prints JSON: the lift table averaged over the seeds (precision, recall, F1
and the blocking figures at the headline matching window), each seed's table, and the wall time.
Not a test: nothing here asserts a figure.

    python bench/eval_lift.py [--seeds 0,1,2] [--reps 1,3,5] [--recall 0.6] [--fp 1.0] [--out DIR]

Every run keeps its model exchanges (``DIR/seed-<n>/assay.db``): rerunning with the same
``--out`` replays them, and ``assay eval --rescore --out DIR/seed-<n>`` re-scores one without
any model call.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog

from assay.eval import LiftTable, SimulatorConfig, run_lift

CASES = Path(__file__).resolve().parent / "cases"
_AVERAGED = (
    "precision",
    "recall",
    "f1",
    "f1_lift",
    "blocking_precision",
    "blocking_recall",
    "blocking_f1",
    "supported_precision",
    "supported_recall",
    "supported_f1",
    "findings_per_pr",
    "false_blocks_on_clean",
    "calls",
    "prompt_tokens",
    "completion_tokens",
)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(",") if part.strip())


def average(tables: Sequence[LiftTable]) -> list[dict[str, Any]]:
    """Each configuration's figures averaged over the seeds (``None`` where a seed had none)."""
    rows = []
    for position, first in enumerate(tables[0].rows):
        entry: dict[str, Any] = {
            "reps": first.reps,
            "block_support": first.block_support,
            "checks": first.checks,
        }
        for key in _AVERAGED:
            values = [getattr(table.rows[position], key) for table in tables]
            defined = [value for value in values if value is not None]
            entry[key] = round(statistics.fmean(defined), 4) if defined else None
            if len(defined) > 1 and key in ("precision", "recall", "f1", "supported_f1"):
                entry[f"{key}_stdev"] = round(statistics.stdev(defined), 4)
        rows.append(entry)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here")
    parser.add_argument("--seeds", type=_ints, default=(0, 1, 2))
    parser.add_argument("--reps", type=_ints, default=(1, 3, 5))
    parser.add_argument("--recall", type=float, default=0.6)
    parser.add_argument("--fp", type=float, default=1.0)
    parser.add_argument("--window", type=int, default=3)
    arguments = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="assay-lift-") as scratch:
        out_root = arguments.out or Path(scratch)
        tables = []
        notes: list[str] = []
        case_count = 0
        for seed in arguments.seeds:
            reviewer = SimulatorConfig(recall=arguments.recall, fp_rate=arguments.fp, seed=seed)
            run = run_lift(
                arguments.cases,
                out_dir=out_root / f"seed-{seed}",
                reps=arguments.reps,
                checks=(True, False),
                simulator=reviewer,
                primary_window=arguments.window,
            )
            assert run.lift is not None  # run_lift always scores at least one configuration
            tables.append(run.lift)
            case_count = len(run.reports[0].cases)
            notes += [f"seed {seed}: {note}" for note in run.notes]
    report = {
        "benchmark": "eval_lift",
        "cases": case_count,
        "seeds": list(arguments.seeds),
        "window": arguments.window,
        "simulator": SimulatorConfig(recall=arguments.recall, fp_rate=arguments.fp).model_dump(
            exclude={"seed", "ttft_s", "tokens_per_s"}
        ),
        "lift": average(tables),
        "per_seed": [table.model_dump(mode="json", exclude={"simulator"}) for table in tables],
        "notes": notes,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
