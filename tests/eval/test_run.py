"""End to end: real git repositories, the public runner, the simulator over loopback HTTP.

One stored run (three small cases, 1 and 2 reps, the judge on) is shared by the module; the
re-scoring tests check that it can be scored again without a single model request.
"""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from assay.errors import LLMUnreachable
from assay.eval import (
    EnsembleConfig,
    EvalRun,
    SimulatedEndpoint,
    SimulatorConfig,
    rescore,
    run_eval,
    run_lift,
)
from tests.eval.conftest import (
    CALC_BASE,
    CALC_HEAD,
    CALC_TRUTH,
    CLEAN_BASE,
    CLEAN_HEAD,
    LEAK_BASE,
    LEAK_HEAD,
    LEAK_TRUTH,
    write_case,
)

REVIEWER = SimulatorConfig(recall=0.7, fp_rate=1.0, seed=5)


@dataclass(frozen=True)
class StoredRun:
    run: EvalRun
    endpoint: SimulatedEndpoint
    out_dir: Path
    requests_after_run: int


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StoredRun]:
    with pytest.MonkeyPatch.context() as patch:
        # Module scope runs before the suite's per-test environment clean-up: do it here too.
        for name in list(os.environ):
            if name.startswith(("ASSAY_", "OPENAI_")):
                patch.delenv(name)
        root = tmp_path_factory.mktemp("stored")
        cases = root / "cases"
        write_case(cases, "calc", base={"calc.py": CALC_BASE}, head={"calc.py": CALC_HEAD},
                   truth=CALC_TRUTH, title="Add total()")  # fmt: skip
        write_case(cases, "leak", base={"files.py": LEAK_BASE}, head={"files.py": LEAK_HEAD},
                   truth=LEAK_TRUTH, title="Read many files")  # fmt: skip
        write_case(cases, "clean", base={"greet.py": CLEAN_BASE},
                   head={"greet.py": CLEAN_HEAD}, truth=[], title="Add shout()")  # fmt: skip
        with SimulatedEndpoint(REVIEWER) as endpoint:
            out_dir = root / "out"
            run = run_lift(
                cases,
                out_dir=out_dir,
                reps=(1, 2),
                checks=(True, False),
                simulator=endpoint,
                judge=True,
            )
            yield StoredRun(run, endpoint, out_dir, endpoint.request_count)


def test_the_run_scores_every_configuration_and_case(stored_run: StoredRun) -> None:
    labels = [report.label for report in stored_run.run.reports]
    assert labels == [
        "reps1-support1-checks",
        "reps2-support2-checks",
        "reps1-support1-nochecks",
        "reps2-support2-nochecks",
    ]
    for report in stored_run.run.reports:
        assert [case.case for case in report.cases] == ["calc", "clean", "leak"]
        assert report.summary.cases == 3 and report.summary.clean_cases == 1
        assert [w.window for w in report.summary.windows] == [0, 3, 10]
        assert report.summary.calls >= report.ensemble.reps * 3
        assert report.summary.judge is not None
        assert report.summary.failed_reviews == 0
    assert stored_run.endpoint.unanswered == {}


def test_the_run_writes_json_markdown_and_a_chart(stored_run: StoredRun) -> None:
    out = stored_run.out_dir
    document = json.loads((out / "scores.json").read_text("utf-8"))
    assert [row["reps"] for row in document["lift"]["rows"]][:2] == [1, 2]
    assert document["lift"]["rows"][0]["f1_lift"] == 0.0
    markdown = (out / "scores.md").read_text("utf-8")
    assert "## Lift of the ensemble" in markdown
    assert "| calc | python | 1 |" in markdown
    chart = ElementTree.fromstring((out / "lift.svg").read_text("utf-8"))
    svg = "{http://www.w3.org/2000/svg}"
    lines = chart.findall(f"{svg}polyline")
    # 5 series with and without checks (blocking F1 is null where nothing blocked).
    assert 8 <= len(lines) <= 10
    assert sum(1 for line in lines if line.get("stroke-dasharray")) >= 4
    manifest = json.loads((out / "eval.json").read_text("utf-8"))
    assert manifest["model"] == REVIEWER.model_name
    assert [case["name"] for case in manifest["cases"]] == ["calc", "clean", "leak"]


def test_rescoring_with_new_windows_makes_no_model_request(stored_run: StoredRun) -> None:
    rescored = rescore(stored_run.out_dir, windows=(0, 1, 20), primary_window=1)

    assert stored_run.endpoint.request_count == stored_run.requests_after_run
    for report in rescored.reports:
        assert [w.window for w in report.summary.windows] == [0, 1, 20]
        assert report.summary.at(20).all.tp >= report.summary.at(1).all.tp
        assert report.summary.judge is not None  # the judge's pairs were stored


def test_replay_reviews_again_from_the_cache_alone(stored_run: StoredRun) -> None:
    # The endpoint is a closed port: success means every answer came from the replay cache.
    replayed = rescore(stored_run.out_dir, replay=True)

    assert stored_run.endpoint.request_count == stored_run.requests_after_run
    for original, again in zip(stored_run.run.reports, replayed.reports, strict=True):
        assert again.summary.windows == original.summary.windows
        assert [c.findings for c in again.cases] == [c.findings for c in original.cases]
        assert again.summary.cached_calls == again.summary.calls > 0


def test_replay_fails_on_a_missing_exchange_instead_of_calling_a_model(
    stored_run: StoredRun, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(stored_run.out_dir, copy)
    (copy / "assay.db").unlink()
    (copy / "assay.db-wal").unlink(missing_ok=True)
    (copy / "assay.db-shm").unlink(missing_ok=True)

    with pytest.raises(LLMUnreachable):
        rescore(copy, replay=True)
    assert stored_run.endpoint.request_count == stored_run.requests_after_run


def test_a_perfect_reviewer_finds_every_defect(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    write_case(cases, "calc", base={"calc.py": CALC_BASE}, head={"calc.py": CALC_HEAD},
               truth=CALC_TRUTH)  # fmt: skip
    perfect = SimulatorConfig(
        recall=1.0, fp_rate=0.0, line_jitter=0, severity_noise=0.0, category_noise=0.0
    )

    report = run_eval(
        cases, out_dir=tmp_path / "out", ensemble=EnsembleConfig(reps=1), simulator=perfect
    )

    (case,) = report.cases
    assert case.missed == []
    assert report.summary.at(0).all.recall == 1.0
    assert case.matches[0].distance == 0
    assert (tmp_path / "out" / "scores.md").is_file()
    assert not (tmp_path / "out" / "lift.svg").exists()  # one configuration: no chart
