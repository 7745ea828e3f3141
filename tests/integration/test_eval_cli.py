"""`assay eval` end to end: real case repositories, the noisy simulator, scores on disk, and a
re-score of the stored run that makes no model call."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from tests.integration.conftest import CliResult

CASES = Path(__file__).resolve().parents[2] / "bench" / "cases"


def test_eval_with_the_simulator_then_rescore(
    run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    cases = tmp_path / "cases"
    for name in ("py-undefined-name", "py-clean-config"):
        shutil.copytree(CASES / name, cases / name)
    out = tmp_path / "out"

    done = run_cli("eval", str(cases), "--simulator", "--reps", "1,3", "--out", str(out))

    assert done.exit_code == 0, done.stderr
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert scores and (out / "scores.md").is_file() and (out / "lift.svg").is_file()
    assert "<svg" in (out / "lift.svg").read_text(encoding="utf-8")
    text = json.dumps(scores)
    assert "py-undefined-name" in text and "precision" in text
    first = (out / "scores.md").read_text(encoding="utf-8")

    rescored = run_cli("eval", "--rescore", "--windows", "0,3,10", "--out", str(out))

    assert rescored.exit_code == 0, rescored.stderr
    assert (out / "scores.md").read_text(encoding="utf-8").splitlines()[0] == first.splitlines()[0]
