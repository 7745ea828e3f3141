"""History queries over stored rounds, and the text of ``assay history`` / ``assay show``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.model import (
    ClosedFinding,
    Kpi,
    PullRequestMeta,
    RecheckStatus,
    ReportedFinding,
    RoundResult,
    Severity,
)
from assay.render.history import render_history, resolve_round
from assay.store import PullRequestKey, Store
from assay.store.history import (
    closed_before,
    known_pull_requests,
    open_findings_before,
    previous_reviewed_head,
    prior_round,
    used_finding_ids,
)

from ._helpers import reported

PR = PullRequestKey(forge="local", repo="/work/app", branch="feature")
OTHER = PullRequestKey(forge="github", repo="octo/app", number=7)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'assay.db'}")
    yield opened
    opened.close()


def _closed(finding_id: str, closed_round: int) -> ClosedFinding:
    return ClosedFinding(
        id=finding_id,
        title=f"closed {finding_id}",
        severity=Severity.P2,
        path="a.py",
        line=1,
        status=RecheckStatus.FIXED,
        proof="line 1 now checks it.",
        first_seen_round=1,
        closed_round=closed_round,
    )


def _round(
    index: int,
    head: str,
    findings: tuple[ReportedFinding, ...],
    closed: tuple[ClosedFinding, ...] = (),
) -> RoundResult:
    return RoundResult(
        pr=PullRequestMeta(
            base_ref="main",
            head_ref="feature",
            base_sha="b" * 40,
            head_sha=head * 40,
            merge_base_sha="b" * 40,
        ),
        round_index=index,
        reviewed_at=datetime(2026, 9, index, 10, 0, tzinfo=UTC),
        findings=findings,
        closed=closed,
        kpi=Kpi(round_index=index),
    )


def _three_rounds(store: Store) -> None:
    first = reported("f-a", "A", "a.py", 1)
    second = reported("f-b", "B", "b.py", 2, severity=Severity.P1, blocking=True)
    store.rounds.save_round(PR, _round(1, "1", (first, second)))
    store.rounds.save_round(PR, _round(2, "2", (second,), (_closed("f-a", 2),)))
    third = reported("f-c", "C", "c.py", 3)
    store.rounds.save_round(PR, _round(3, "3", (second, third), (_closed("f-a", 2),)))
    store.rounds.save_round(OTHER, _round(1, "9", (reported("f-z", "Z", "z.py", 1),)))


def test_the_prior_round_is_the_latest_before_the_one_under_review(store: Store) -> None:
    _three_rounds(store)

    prior = prior_round(store.engine, PR, before_round=3)

    assert prior is not None
    assert (prior.round_index, prior.head_sha) == (2, "2" * 40)
    assert [finding.id for finding in prior.open_findings] == ["f-b"]
    assert [closed.id for closed in prior.closed] == ["f-a"]
    assert prior.reviewed_at.tzinfo is not None
    # A rerun of round 2 sees round 1, never its own earlier result.
    rerun = prior_round(store.engine, PR, before_round=2)
    assert rerun is not None and rerun.round_index == 1
    assert prior_round(store.engine, PR, before_round=1) is None


def test_the_shortcut_queries_agree_with_the_prior_round(store: Store) -> None:
    _three_rounds(store)

    assert previous_reviewed_head(store.engine, PR, before_round=4) == "3" * 40
    assert previous_reviewed_head(store.engine, PR, before_round=1) is None
    assert [f.id for f in open_findings_before(store.engine, PR, before_round=4)] == ["f-b", "f-c"]
    assert open_findings_before(store.engine, PR, before_round=1) == ()
    assert [c.id for c in closed_before(store.engine, PR, before_round=4)] == ["f-a"]
    unknown = PullRequestKey(forge="local", repo="/nowhere")
    assert closed_before(store.engine, unknown, before_round=5) == ()


def test_used_ids_cover_every_reported_and_closed_finding(store: Store) -> None:
    _three_rounds(store)

    assert used_finding_ids(store.engine, PR, before_round=4) == {"f-a", "f-b", "f-c"}
    assert used_finding_ids(store.engine, PR, before_round=2) == {"f-a", "f-b"}
    assert used_finding_ids(store.engine, OTHER, before_round=9) == {"f-z"}


def test_known_pull_requests_lists_keys_with_rounds(store: Store) -> None:
    assert known_pull_requests(store.engine) == ()
    _three_rounds(store)

    assert known_pull_requests(store.engine) == ("github:octo/app#7", "local:/work/app@feature")


@dataclass(frozen=True)
class Listed:
    round_index: int
    head_sha: str
    findings: int
    blocking: int
    created_at: datetime


ROWS = [
    Listed(2, "665a81d0c2aa" + "0" * 28, 7, 1, datetime(2026, 8, 31, 18, 40, tzinfo=UTC)),
    Listed(1, "4227e27fb971" + "0" * 28, 5, 0, datetime(2026, 8, 30, 9, 12, tzinfo=UTC)),
]


def test_history_table_in_english() -> None:
    assert render_history(ROWS, target="PR #1353") == (
        "Rounds of PR #1353\n"
        "\n"
        "round  head          verdict     blocking  findings  reviewed (UTC)\n"
        "1      4227e27fb971  PASS               0         5  2026-08-30 09:12\n"
        "2      665a81d0c2aa  BLOCKED(1)         1         7  2026-08-31 18:40\n"
    )


def test_history_table_in_chinese_aligns_full_width_headings() -> None:
    assert render_history(ROWS, target="PR #1353", lang="zh") == (
        "PR #1353 的评审轮次\n"
        "\n"
        "轮次  head          结论        阻塞  发现  评审时间 (UTC)\n"
        "1     4227e27fb971  PASS           0     5  2026-08-30 09:12\n"
        "2     665a81d0c2aa  BLOCKED(1)     1     7  2026-08-31 18:40\n"
    )


def test_history_of_nothing_says_so_and_the_target_stays_one_line() -> None:
    assert render_history([], target="local:/r@evil\nbranch") == (
        "No rounds stored for local:/r@evil branch.\n"
    )
    with pytest.raises(ValueError, match="unsupported lang"):
        render_history(ROWS, target="x", lang="fr")


def test_history_lists_what_the_store_lists(store: Store) -> None:
    _three_rounds(store)

    text = render_history(store.rounds.list_rounds(PR), target=PR.key)

    assert [line.split()[:3] for line in text.splitlines()[3:]] == [
        ["1", "1" * 12, "BLOCKED(1)"],
        ["2", "2" * 12, "BLOCKED(1)"],
        ["3", "3" * 12, "BLOCKED(1)"],
    ]


def test_show_picks_the_latest_or_the_round_asked_for() -> None:
    assert resolve_round(None, [1, 2, 3], target="PR #1") == 3
    assert resolve_round(2, [3, 1, 2], target="PR #1") == 2
    with pytest.raises(ConfigError, match=r"round 5 of PR #1 is not stored; stored: 1-3, 7"):
        resolve_round(5, [1, 2, 3, 7], target="PR #1")
    with pytest.raises(ConfigError, match="no rounds stored for PR #1"):
        resolve_round(None, [], target="PR #1")
