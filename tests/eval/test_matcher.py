"""The deterministic matcher: windows, categories, sides and one-to-one assignment."""

from __future__ import annotations

import pytest

from assay.eval import (
    MatchPolicy,
    Predicted,
    TruthDefect,
    canonical_category,
    categories_compatible,
    match_findings,
)
from assay.eval.matcher import match_pairs
from assay.model import Severity, Side


def truth(
    line: int, end: int | None = None, category: str = "correctness", path: str = "a.py"
) -> TruthDefect:
    return TruthDefect(
        path=path, line_start=line, line_end=end or line, category=category, severity=Severity.P1
    )


def finding(
    line: int,
    end: int | None = None,
    category: str = "correctness",
    path: str = "a.py",
    id: str = "",
) -> Predicted:
    return Predicted(id=id or f"f{line}", path=path, line=line, end_line=end, category=category)


@pytest.mark.parametrize(
    ("line", "window", "matches"),
    [(10, 0, True), (12, 0, True), (13, 0, False), (15, 3, True), (16, 3, False), (1, 10, True)],
)
def test_window_is_the_gap_between_ranges(line: int, window: int, matches: bool) -> None:
    result = match_findings([finding(line)], [truth(10, 12)], MatchPolicy(window=window))
    assert (result.true_positives == 1) is matches


def test_a_finding_range_overlapping_the_defect_is_at_distance_zero() -> None:
    result = match_findings([finding(4, end=11)], [truth(10, 12)], MatchPolicy(window=0))
    assert [(p.finding, p.truth, p.distance) for p in result.pairs] == [(0, 0, 0)]


def test_other_file_other_side_or_no_location_never_match() -> None:
    findings = [
        finding(10, path="b.py"),
        Predicted(id="left", path="a.py", line=10, side=Side.LEFT),
    ]
    truths = [truth(10), TruthDefect(category="correctness", description="somewhere")]
    result = match_findings(findings, truths, MatchPolicy(window=10))
    assert result.true_positives == 0
    assert (result.false_positives, result.false_negatives) == (2, 2)


def test_paths_are_normalized() -> None:
    result = match_findings([finding(10, path="./a.py")], [truth(10)], MatchPolicy())
    assert result.true_positives == 1


def test_duplicates_of_one_defect_are_false_positives() -> None:
    result = match_findings([finding(10), finding(11), finding(9)], [truth(10)], MatchPolicy())
    assert (result.true_positives, result.false_positives, result.false_negatives) == (1, 2, 0)
    assert result.pairs[0].finding == 0  # the exact one, not a neighbour


def test_assignment_is_maximum_not_greedy() -> None:
    # Greedy by order would give finding 0 to defect 0 and leave defect 1 unmatched.
    findings = [finding(11, id="both"), finding(8, id="first-only")]
    truths = [truth(10), truth(13)]
    result = match_findings(findings, truths, MatchPolicy(window=3))
    assert sorted((p.finding, p.truth) for p in result.pairs) == [(0, 1), (1, 0)]


def test_among_maximum_matchings_the_closest_wins_and_ties_go_to_the_earlier() -> None:
    assert match_pairs(2, 1, [(0, 0, 4), (1, 0, 2)]) == [(1, 0)]
    assert match_pairs(2, 1, [(0, 0, 2), (1, 0, 2)]) == [(0, 0)]


def test_categories_must_be_compatible_unless_ignored() -> None:
    result = match_findings([finding(10, category="security")], [truth(10)], MatchPolicy())
    assert result.true_positives == 0
    ignored = MatchPolicy(check_category=False)
    assert match_findings([finding(10, category="security")], [truth(10)], ignored).pairs


def test_an_exact_category_is_preferred_to_a_compatible_one() -> None:
    findings = [finding(10, category="correctness"), finding(10, category="resource-leak")]
    result = match_findings(findings, [truth(10, category="resource-leak")], MatchPolicy())
    assert result.pairs[0].finding == 1


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("Code Defect", "correctness"),
        ("Maintainability and Readability", "maintainability"),
        ("Security Vulnerability", "security"),
        ("race condition", "concurrency"),
        ("Error_Handling", "error-handling"),
        ("", "other"),
        ("weird-new-thing", "weird-new-thing"),
    ],
)
def test_canonical_category(raw: str, canonical: str) -> None:
    assert canonical_category(raw) == canonical


@pytest.mark.parametrize(
    ("first", "second", "compatible"),
    [
        ("correctness", "error-handling", True),
        ("resource-leak", "error-handling", True),
        ("api-contract", "compatibility", True),
        ("style", "docs", True),
        ("security", "correctness", False),
        ("tests", "correctness", False),
        ("performance", "security", False),
        ("weird", "weird", True),
        ("weird", "correctness", False),
    ],
)
def test_category_compatibility_is_symmetric(first: str, second: str, compatible: bool) -> None:
    assert categories_compatible(first, second) is compatible
    assert categories_compatible(second, first) is compatible
