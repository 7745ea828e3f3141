"""Stable identity: this round's findings matched against the PR's open findings."""

from __future__ import annotations

from assay.model import FindingSource, Severity
from assay.pipeline.match import MatchThresholds, match_findings

from ._helpers import Repo, lines_text, reported, supported

LEAK = "Connection opened in fetch() is never closed"
LEAK_EVIDENCE = "db.py:12 calls connect() and no path closes the connection."


def _moved_repo(repo: Repo, inserted: int = 5) -> tuple[str, str]:
    """``db.py`` at two heads: the second inserts ``inserted`` lines at the top."""
    repo.write("db.py", lines_text(40))
    old = repo.commit()
    repo.write("db.py", lines_text(inserted, "import") + lines_text(40))
    return old, repo.commit()


def test_a_moved_finding_keeps_its_id_first_seen_round_and_severity(repo: Repo) -> None:
    old, new = _moved_repo(repo)
    earlier = reported("f-leak", LEAK, "db.py", 12, severity=Severity.P1, first_seen_round=2)
    # Reviewers now rate it P2 and find it 5 lines lower (the imports pushed it down).
    now = supported(LEAK, "db.py", 17, severity=Severity.P2)

    outcome = match_findings([now], [earlier], line_map=repo.line_map(old, new), round_index=4)

    (matched,) = outcome.findings
    assert matched.matched and matched.previous == earlier
    assert (matched.id, matched.first_seen_round) == ("f-leak", 2)
    assert matched.finding.severity is Severity.P1
    assert matched.argued_severity is Severity.P2
    assert matched.severity_change_reason == ""
    assert matched.candidate is now
    assert matched.finding.line == 17
    assert outcome.unmatched_open == ()
    assert (outcome.new_findings, outcome.merged) == (0, 1)


def test_far_from_the_earlier_place_only_nearly_the_same_words_match() -> None:
    earlier = reported("f-leak", LEAK, "db.py", 12)
    paraphrase = supported("fetch() leaks its connection: it is never closed", "db.py", 40)
    same_words = supported("The connection opened in fetch() is never closed", "db.py", 40)

    far_paraphrase = match_findings([paraphrase], [earlier], line_map=None, round_index=2)
    far_same_words = match_findings([same_words], [earlier], line_map=None, round_index=2)

    assert not far_paraphrase.findings[0].matched
    assert far_paraphrase.unmatched_open == (earlier,)
    assert far_same_words.findings[0].matched


def test_a_paraphrased_title_at_the_same_place_still_matches(repo: Repo) -> None:
    old, new = _moved_repo(repo, inserted=2)
    earlier = reported("f-leak", LEAK, "db.py", 12, evidence=LEAK_EVIDENCE)
    paraphrase = supported("fetch() leaks its connection: it is never closed", "db.py", 15)

    outcome = match_findings(
        [paraphrase], [earlier], line_map=repo.line_map(old, new), round_index=2
    )

    assert outcome.findings[0].matched
    assert outcome.findings[0].id == "f-leak"


def test_a_paraphrased_chinese_title_matches_too() -> None:
    earlier = reported("f-leak", "fetch() 中打开的连接从未关闭", "db.py", 12)
    paraphrase = supported("fetch() 打开的连接没有被关闭", "db.py", 12)

    outcome = match_findings([paraphrase], [earlier], line_map=None, round_index=2)

    assert outcome.findings[0].matched


def test_a_different_defect_at_the_same_line_is_new(repo: Repo) -> None:
    old, new = _moved_repo(repo, inserted=0)
    earlier = reported("f-leak", LEAK, "db.py", 12)
    other = supported("fetch() builds its SQL query by string concatenation", "db.py", 12)

    outcome = match_findings([other], [earlier], line_map=repo.line_map(old, new), round_index=3)

    (matched,) = outcome.findings
    assert not matched.matched and matched.previous is None
    assert matched.first_seen_round == 3
    assert matched.id == other.finding.fingerprint()
    assert outcome.unmatched_open == (earlier,)
    assert (outcome.new_findings, outcome.merged) == (1, 0)


def test_the_same_title_in_another_file_is_another_finding() -> None:
    earlier = reported("f-leak", LEAK, "db.py", 12)

    outcome = match_findings(
        [supported(LEAK, "cache.py", 12)], [earlier], line_map=None, round_index=2
    )

    assert not outcome.findings[0].matched


def test_matching_is_one_to_one_and_the_better_pair_wins() -> None:
    earlier = reported("f-leak", LEAK, "db.py", 12)
    near_copy = supported(LEAK, "db.py", 13)
    exact = supported(LEAK, "db.py", 12)

    outcome = match_findings([near_copy, exact], [earlier], line_map=None, round_index=2)

    assert [m.matched for m in outcome.findings] == [False, True]
    assert outcome.findings[1].id == "f-leak"
    assert outcome.findings[0].id != "f-leak"


def test_static_findings_match_by_rule_even_when_moved(repo: Repo) -> None:
    old, new = _moved_repo(repo, inserted=6)
    earlier = reported(
        "f-821",
        "Undefined name `summ`",
        "db.py",
        12,
        severity=Severity.P0,
        source=FindingSource.STATIC,
        rule="F821",
    )
    same_rule = supported(
        "Undefined name `summ`",
        "db.py",
        18,
        severity=Severity.P0,
        source=FindingSource.STATIC,
        rule="F821",
    )
    other_rule = supported(
        "Undefined name `summ`",
        "db.py",
        18,
        severity=Severity.P0,
        source=FindingSource.STATIC,
        rule="F841",
    )
    line_map = repo.line_map(old, new)

    assert match_findings([same_rule], [earlier], line_map=line_map, round_index=2).merged == 1
    assert match_findings([other_rule], [earlier], line_map=line_map, round_index=2).merged == 0


def test_a_static_analyzer_reporting_it_changes_the_severity_with_a_reason() -> None:
    earlier = reported("f-name", "Name `summ` is not defined", "calc.py", 5)
    by_ruff = supported(
        "Name `summ` is not defined",
        "calc.py",
        5,
        severity=Severity.P0,
        source=FindingSource.STATIC,
        rule="F821",
    )

    (matched,) = match_findings([by_ruff], [earlier], line_map=None, round_index=3).findings

    assert matched.matched and matched.id == "f-name"
    assert matched.finding.severity is Severity.P0
    assert matched.severity_change_reason == "ruff reports F821 at calc.py:5 (P0; was P2)"


def test_reviewers_change_the_severity_only_two_rounds_in_a_row() -> None:
    earlier = reported("f-leak", LEAK, "db.py", 12, severity=Severity.P2, votes=4)
    rated_p3 = supported(LEAK, "db.py", 12, severity=Severity.P3, votes=5)

    once = match_findings([rated_p3], [earlier], line_map=None, round_index=5).findings[0]
    twice = match_findings(
        [rated_p3],
        [earlier],
        line_map=None,
        round_index=5,
        previous_argued={"f-leak": Severity.P3},
    ).findings[0]
    weaker = match_findings(
        [supported(LEAK, "db.py", 12, severity=Severity.P3, votes=2)],
        [earlier],
        line_map=None,
        round_index=5,
        previous_argued={"f-leak": Severity.P3},
    ).findings[0]

    assert once.finding.severity is Severity.P2 and once.severity_change_reason == ""
    assert twice.finding.severity is Severity.P3
    assert twice.severity_change_reason == (
        "reviewers rated it P3 in rounds 4 and 5 (support 5; was P2)"
    )
    assert weaker.finding.severity is Severity.P2


def test_a_new_finding_never_takes_an_id_the_pr_already_used() -> None:
    new = supported("Retry loop never sleeps", "net.py", 30)
    fingerprint = new.finding.fingerprint()

    outcome = match_findings(
        [new, new], [], line_map=None, round_index=3, reserved_ids={fingerprint}
    )

    ids = [matched.id for matched in outcome.findings]
    assert fingerprint not in ids
    assert len(set(ids)) == 2
    # Derived ids are stable: the same inputs give the same ids.
    again = match_findings([new, new], [], line_map=None, round_index=3, reserved_ids={fingerprint})
    assert [matched.id for matched in again.findings] == ids


def test_a_finding_in_a_deleted_file_matches_nothing(repo: Repo) -> None:
    repo.write("db.py", lines_text(20))
    old = repo.commit()
    repo.remove("db.py")
    repo.write("db2.py", "something else entirely\n")
    new = repo.commit()
    earlier = reported("f-leak", LEAK, "db.py", 12)

    outcome = match_findings(
        [supported(LEAK, "db.py", 12)], [earlier], line_map=repo.line_map(old, new), round_index=2
    )

    assert outcome.unmatched_open == (earlier,)


def test_thresholds_are_configurable() -> None:
    earlier = reported("f-leak", LEAK, "db.py", 12)
    paraphrase = supported("fetch() leaks its connection: it is never closed", "db.py", 12)
    strict = MatchThresholds(near_similarity=0.95)

    outcome = match_findings(
        [paraphrase], [earlier], line_map=None, round_index=2, thresholds=strict
    )

    assert outcome.merged == 0
