"""Three rounds composed from the stages, as the orchestrator wires them: store → match → recheck.

Round 1 reports A (a leak) and B (a missing timeout). The push for round 2 fixes A and touches
nothing near B; discovery does not find B again. Round 3 force-pushes a rewritten history with
lines inserted above B, and discovery finds B again, rated lower.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from assay.diff import anchor_to_diff, parse_unified_diff
from assay.diff.linemap import LineMap
from assay.forge.git import GitRepo
from assay.forge.local import GitRevisionReader
from assay.llm import LLMClient
from assay.model import (
    ClosedFinding,
    Kpi,
    PullRequestMeta,
    RecheckStatus,
    ReportedFinding,
    RoundResult,
    Severity,
)
from assay.pipeline.match import match_findings
from assay.pipeline.recheck import RecheckOutcome, recheck_open_findings
from assay.render import render_summary
from assay.store import PullRequestKey, Store
from assay.store.history import prior_round, used_finding_ids
from assay.testing import ScriptedLLMServer, json_reply, script_by_stage

from ._helpers import Repo, reported, settings_for, supported

PR = PullRequestKey(forge="local", repo="/repo", branch="feature")
SERVICE_R1 = (
    "import subprocess\n"
    "\n"
    "\n"
    "def load(path):\n"
    "    handle = open(path)\n"
    "    return handle.read()\n"
    "\n"
    "\n"
    "def affinity():\n"
    "    return subprocess.run(['nic-affinity'], check=True)\n"
)
SERVICE_R2 = SERVICE_R1.replace(
    "    handle = open(path)\n    return handle.read()\n",
    "    with open(path) as handle:\n        return handle.read()\n",
)
SERVICE_R3 = SERVICE_R2.replace(
    "import subprocess\n", "import logging\nimport subprocess\n\nLOG = 1\n"
)
LEAK = "File handle opened in load() is never closed"
TIMEOUT = "subprocess.run in affinity() has no timeout"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'assay.db'}")
    yield opened
    opened.close()


def _result(
    repo: Repo,
    head: str,
    index: int,
    findings: Sequence[ReportedFinding],
    closed: tuple[ClosedFinding, ...] = (),
) -> RoundResult:
    return RoundResult(
        pr=PullRequestMeta(
            base_ref="main",
            head_ref="feature",
            base_sha=repo.git("rev-parse", "main"),
            head_sha=head,
            merge_base_sha=repo.git("rev-parse", "main"),
        ),
        round_index=index,
        reviewed_at=datetime(2026, 9, index, tzinfo=UTC),
        findings=tuple(findings),
        closed=closed,
        kpi=Kpi(round_index=index, reps=5, discover_ok=5),
    )


def _recheck(
    repo: Repo,
    head: str,
    open_findings: Sequence[ReportedFinding],
    line_map: LineMap | None,
    server: ScriptedLLMServer,
    round_index: int,
) -> RecheckOutcome:
    async def run() -> RecheckOutcome:
        with GitRepo.open(repo.path) as git_repo:
            pr_files = parse_unified_diff(git_repo.diff(repo.git("rev-parse", "main"), head))
            async with LLMClient(settings_for(server)) as client:
                return await recheck_open_findings(
                    open_findings,
                    line_map=line_map,
                    head=GitRevisionReader(git_repo, head),
                    head_sha=head,
                    pr_files=pr_files,
                    client=client,
                    static_findings_now=(),
                    round_index=round_index,
                )

    return asyncio.run(run())


def test_three_rounds_keep_identity_close_fixes_and_survive_a_force_push(
    repo: Repo, store: Store, server: ScriptedLLMServer
) -> None:
    repo.write("README.md", "app\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("service.py", SERVICE_R1)
    head1 = repo.commit("round 1")
    leak = reported("f-a", LEAK, "service.py", 5, severity=Severity.P1, blocking=True)
    timeout = reported("f-b", TIMEOUT, "service.py", 10, severity=Severity.P2)
    store.rounds.save_round(PR, _result(repo, head1, 1, [leak, timeout]))

    # Round 2: A fixed, nothing near B; discovery finds nothing this time.
    repo.write("service.py", SERVICE_R2)
    head2 = repo.commit("fix the leak")
    prior = prior_round(store.engine, PR, before_round=2)
    assert prior is not None and prior.head_sha == head1
    line_map = repo.line_map(prior.head_sha, head2)
    matched = match_findings(
        [], prior.open_findings, line_map=line_map, round_index=2,
        reserved_ids=used_finding_ids(store.engine, PR, before_round=2),
    )  # fmt: skip
    proof = "line 5 now opens the file in a `with` block, so it is closed on every path."
    server.reply = script_by_stage(
        {"recheck": json_reply({"status": "fixed", "proof": proof, "lines": [5, 6]})}
    )
    recheck = _recheck(repo, head2, matched.unmatched_open, line_map, server, 2)

    assert server.request_count == 1  # only A needed the model; B's lines are unchanged
    assert {r.finding.id: r.status for r in recheck.results} == {
        "f-a": RecheckStatus.FIXED,
        "f-b": RecheckStatus.STILL_OPEN,
    }
    (carried_b,) = recheck.still_open
    assert (carried_b.first_seen_round, carried_b.severity) == (1, Severity.P2)
    round2 = _result(
        repo, head2, 2, recheck.still_open, recheck.cumulative_closed(prior.closed)
    ).model_copy(update={"kpi": Kpi(round_index=2, recheck=recheck.kpi, reps=5)})
    store.rounds.save_round(PR, round2)
    zh = render_summary(round2, lang="zh")
    assert f"- [P1] {LEAK} — {proof}" in zh
    assert "首见" not in zh  # nothing blocks in round 2
    assert "[P2] " + TIMEOUT in zh

    # Round 3: the branch is rewritten (force-push); round 2's head is not an ancestor.
    repo.git("reset", "-q", "--hard", "main")
    repo.write("service.py", SERVICE_R3)
    head3 = repo.commit("squashed")
    with GitRepo.open(repo.path) as git_repo:
        assert not git_repo.is_ancestor(head2, head3)
        assert git_repo.commit_exists(head2)
    prior = prior_round(store.engine, PR, before_round=3)
    assert prior is not None and prior.round_index == 2
    line_map = repo.line_map(prior.head_sha, head3)
    found_again = supported(TIMEOUT, "service.py", 13, severity=Severity.P3, votes=5)
    new_one = supported("LOG is never used", "service.py", 4, severity=Severity.P3, votes=1)
    matched = match_findings(
        [found_again, new_one], prior.open_findings, line_map=line_map, round_index=3,
        reserved_ids=used_finding_ids(store.engine, PR, before_round=3),
    )  # fmt: skip

    b3, log3 = matched.findings
    assert (b3.id, b3.first_seen_round, b3.finding.severity) == ("f-b", 1, Severity.P2)
    assert (log3.matched, log3.first_seen_round) == (False, 3)
    assert (matched.new_findings, matched.merged) == (1, 1)
    assert matched.unmatched_open == ()
    with GitRepo.open(repo.path) as git_repo:
        pr_files = parse_unified_diff(git_repo.diff(repo.git("rev-parse", "main"), head3))
    round3 = _result(
        repo,
        head3,
        3,
        [
            ReportedFinding(
                id=m.id,
                finding=m.finding,
                severity=m.finding.severity,
                votes=m.candidate.votes,
                first_seen_round=m.first_seen_round,
                anchor=anchor_to_diff(m.finding.path, m.finding.line, m.finding.side, pr_files),
            )
            for m in matched.findings
        ],
        prior.closed,
    )
    store.rounds.save_round(PR, round3)
    for lang in ("en", "zh"):
        text = render_summary(round3, lang=lang)
        assert f"[P2] {TIMEOUT}" in text
        assert f"[P1] {LEAK}" in text  # still in the cumulative fixed list
    assert [s.round_index for s in store.rounds.list_rounds(PR)] == [1, 2, 3]
