"""``eval_command``: what ``assay eval`` runs, with its options checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.eval import EvalOptions, eval_command
from tests.eval.conftest import CALC_BASE, CALC_HEAD, CALC_TRUTH, write_case


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cases": None}, "needs CASES"),
        ({"replay": True}, "--replay goes with --rescore"),
        ({"reps": (0,)}, "--reps takes counts from 1 to 16"),
        ({"reps": ()}, "--reps takes counts from 1 to 16"),
        ({"windows": (0, 10), "primary_window": 3}, "--window 3 is not among --windows"),
        ({"sim_recall": 1.5}, "--sim-recall is a probability"),
        ({"sim_fp": -1.0}, "--sim-fp"),
    ],
)
def test_options_are_checked(tmp_path: Path, changes: dict[str, object], message: str) -> None:
    options = EvalOptions(cases=tmp_path, out=tmp_path / "out", simulator=True)
    with pytest.raises(ConfigError, match=message):
        eval_command(EvalOptions(**{**options.__dict__, **changes}))  # type: ignore[arg-type]


def test_without_a_model_or_simulator_the_command_says_what_to_set(tmp_path: Path) -> None:
    write_case(tmp_path / "cases", "calc", base={"calc.py": CALC_BASE},
               head={"calc.py": CALC_HEAD}, truth=CALC_TRUTH)  # fmt: skip
    with pytest.raises(ConfigError, match="set ASSAY_MODEL and ASSAY_LLM_BASE_URL"):
        eval_command(EvalOptions(cases=tmp_path / "cases", out=tmp_path / "out"))


def test_run_then_rescore(tmp_path: Path) -> None:
    write_case(tmp_path / "cases", "calc", base={"calc.py": CALC_BASE},
               head={"calc.py": CALC_HEAD}, truth=CALC_TRUTH)  # fmt: skip
    out = tmp_path / "out"
    lines: list[str] = []

    code = eval_command(
        EvalOptions(cases=tmp_path / "cases", out=out, simulator=True, sim_recall=1.0, sim_fp=0.0),
        echo=lines.append,
    )

    assert code == 0
    assert lines[0].startswith("[reps1-support1-checks] 1/1 calc: ")
    assert lines[1].startswith("reps1-support1-checks: precision ")
    assert "recall 1.00" in lines[1]
    assert lines[-1] == f"report: {out / 'scores.md'}"

    lines.clear()
    assert (
        eval_command(
            EvalOptions(cases=None, out=out, rescore=True, windows=(0, 5), primary_window=5),
            echo=lines.append,
        )
        == 0
    )
    assert lines[0].startswith("reps1-support1-checks: precision ")
