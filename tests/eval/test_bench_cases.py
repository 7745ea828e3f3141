"""The shipped benchmark cases: enough of them, varied, and each truth pinned to its code."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from assay.eval import EvalCase, build_case_repo, canonical_category, load_cases

BENCH_CASES = Path(__file__).resolve().parents[2] / "bench" / "cases"


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> list[EvalCase]:
    return load_cases(BENCH_CASES, extract_to=tmp_path_factory.mktemp("extract"))


def test_the_benchmark_has_the_promised_shape(cases: list[EvalCase]) -> None:
    defective = [case for case in cases if not case.is_clean]
    clean = [case for case in cases if case.is_clean]
    assert len(defective) >= 20
    assert len(clean) >= 5
    languages = Counter(case.language for case in cases)
    assert languages["python"] >= 12
    assert {"typescript", "javascript", "go", "java"} <= set(languages)
    categories = {canonical_category(d.category) for case in cases for d in case.defects}
    assert {
        "correctness",
        "error-handling",
        "resource-leak",
        "concurrency",
        "api-contract",
        "tests",
        "security",
    } <= categories
    assert any(len(case.defects) > 1 for case in cases)


def test_every_case_builds_and_its_truth_points_at_its_needle(
    cases: list[EvalCase], tmp_path: Path
) -> None:
    for case in cases:
        # Building checks each defect's needle against the head file (ConfigError if not).
        repo = build_case_repo(case, tmp_path)
        for defect in case.defects:
            assert defect.needle, f"{case.name}: every shipped defect pins its line"
            assert defect.path in repo.files
            assert defect.description.strip()
