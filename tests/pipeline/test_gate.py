"""The gate: blocking = P0/P1 ∧ support ∧ confirmed ∧ fact-check holds; downgrade, never drop."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest

from assay.forge.git import GitRepo
from assay.forge.local import GitRevisionReader
from assay.model import (
    Claim,
    ClaimCheck,
    ClaimKind,
    ClaimStatus,
    Confirmation,
    ConfirmVerdict,
    FactCheck,
    FactCheckVerdict,
    Finding,
    FindingSource,
    Severity,
)
from assay.pipeline.factcheck import fact_check_findings
from assay.pipeline.gate import (
    GateDecision,
    SupportedFinding,
    blocking_dedup_merged,
    decide_gate,
    gate_findings,
    same_defect,
)

CONFIRMED = Confirmation(verdict=ConfirmVerdict.CONFIRMED, reason="Reproduced at app/db.py:12.")
_CLAIM = Claim(kind=ClaimKind.FILE_EXISTS, text="app/db.py exists", path="app/db.py")


def _finding(severity: Severity = Severity.P1, **fields: Any) -> Finding:
    values: dict[str, Any] = {
        "severity": severity,
        "category": "correctness",
        "title": "Connection is never closed",
        "path": "app/db.py",
        "line": 12,
        "claims": (_CLAIM,),
        "rep": 0,
    }
    values.update(fields)
    return Finding(**values)


def _fact_check(
    verdict: FactCheckVerdict, *statuses: ClaimStatus, round_index: int = 3
) -> FactCheck:
    checks = tuple(
        ClaimCheck(
            claim=Claim(text=f"claim {number}: the pool is shared"),
            status=status,
            detail=f"seen {number}",
        )
        for number, status in enumerate(statuses, start=1)
    )
    return FactCheck(verdict=verdict, checks=checks, round_index=round_index)


HOLDS = _fact_check(FactCheckVerdict.HOLD, ClaimStatus.VERIFIED, ClaimStatus.VERIFIED)


def _decide(candidate: SupportedFinding) -> GateDecision:
    return decide_gate(candidate, reps=5, block_support=3, round_index=3)


def test_a_supported_confirmed_fact_checked_p1_blocks() -> None:
    finding = _finding()

    decision = _decide(SupportedFinding(finding, 4, CONFIRMED, HOLDS))

    assert decision.blocking
    assert decision.severity is Severity.P1
    assert decision.original_severity is None
    assert decision.reason == "support 4/5 >= 3; confirmed; fact-check hold (2 claims verified)"
    assert decision.confirmation == CONFIRMED
    assert decision.fact_check == HOLDS


@pytest.mark.parametrize(
    ("candidate", "reason"),
    [
        (SupportedFinding(_finding(), 2), "support 2/5 < 3"),
        (
            SupportedFinding(_finding(), 5, None, HOLDS),
            "not confirmed (confirm did not run)",
        ),
        (
            SupportedFinding(
                _finding(),
                5,
                Confirmation(verdict=ConfirmVerdict.REFUTED, reason="The pool closes it."),
                HOLDS,
            ),
            "confirm refuted: The pool closes it.",
        ),
        (
            SupportedFinding(
                _finding(),
                5,
                Confirmation(verdict=ConfirmVerdict.FAILED, reason="LLMHTTPError: 500"),
                HOLDS,
            ),
            "confirm failed: LLMHTTPError: 500",
        ),
        (SupportedFinding(_finding(), 5, CONFIRMED), "not fact-checked (fact-check did not run)"),
        (
            SupportedFinding(
                _finding(),
                5,
                CONFIRMED,
                _fact_check(FactCheckVerdict.REFUTED, ClaimStatus.VERIFIED, ClaimStatus.REFUTED),
            ),
            "fact-check refuted: claim 2: the pool is shared (seen 2)",
        ),
        (
            SupportedFinding(
                _finding(),
                5,
                CONFIRMED,
                _fact_check(
                    FactCheckVerdict.UNVERIFIED, ClaimStatus.VERIFIED, ClaimStatus.UNVERIFIED
                ),
            ),
            "fact-check unverified: claim 2: the pool is shared (seen 2)",
        ),
        (
            SupportedFinding(_finding(), 5, CONFIRMED, _fact_check(FactCheckVerdict.UNVERIFIED)),
            "fact-check unverified: the finding states no claims",
        ),
        (
            SupportedFinding(_finding(), 5, CONFIRMED, _fact_check(FactCheckVerdict.PARSE_FAIL)),
            "fact-check failed (parse_fail)",
        ),
        (
            SupportedFinding(
                _finding(Severity.P0),
                2,
                Confirmation(verdict=ConfirmVerdict.REFUTED, reason="Unreachable."),
                _fact_check(FactCheckVerdict.REFUTED, ClaimStatus.REFUTED),
            ),
            "support 2/5 < 3; confirm refuted: Unreachable.; "
            "fact-check refuted: claim 1: the pool is shared (seen 1)",
        ),
    ],
)
def test_a_p0_p1_failing_any_gate_is_kept_as_p2_with_the_precise_reason(
    candidate: SupportedFinding, reason: str
) -> None:
    decision = _decide(candidate)

    assert not decision.blocking
    assert decision.severity is Severity.P2
    assert decision.original_severity is candidate.finding.severity
    assert decision.reason == reason
    assert decision.finding == candidate.finding


def test_a_fact_check_from_another_round_is_not_trusted() -> None:
    from_round_one = _fact_check(FactCheckVerdict.HOLD, ClaimStatus.VERIFIED, round_index=1)

    decision = _decide(SupportedFinding(_finding(), 5, CONFIRMED, from_round_one))

    assert not decision.blocking
    assert decision.reason == "fact-check is from round 1, not this round"


def test_p2_and_p3_pass_through_untouched() -> None:
    for severity in (Severity.P2, Severity.P3):
        decision = _decide(SupportedFinding(_finding(severity), 1))
        assert (decision.blocking, decision.severity, decision.reason) == (False, severity, "")
        assert decision.original_severity is None


def _static(severity: Severity = Severity.P0, *, certain: bool = True) -> Finding:
    return _finding(
        severity,
        source=FindingSource.STATIC,
        rule="F821",
        certain_failure=certain,
        title="Undefined name `summ`",
        rep=None,
    )


def test_a_static_certain_failure_p0_blocks_on_its_own() -> None:
    decision = _decide(SupportedFinding(_static(), 1))

    assert decision.blocking
    assert decision.reason == "static analysis: F821 fails on execution"


def test_a_static_certain_failure_refuted_by_its_fact_check_does_not_block() -> None:
    refuted = _fact_check(FactCheckVerdict.REFUTED, ClaimStatus.REFUTED)

    decision = _decide(SupportedFinding(_static(), 1, None, refuted))

    assert not decision.blocking
    assert decision.reason == "fact-check refuted: claim 1: the pool is shared (seen 1)"


def test_a_static_finding_that_is_no_certain_failure_does_not_block() -> None:
    decision = _decide(SupportedFinding(_static(Severity.P1, certain=False), 1))

    assert not decision.blocking
    assert decision.reason == "static analysis: F821 is not a certain failure"


def test_gate_findings_keeps_every_finding_in_order() -> None:
    candidates = [
        SupportedFinding(_finding(Severity.P3, title="Typo"), 1),
        SupportedFinding(_finding(title="Leak", line=40), 5, CONFIRMED, HOLDS),
        SupportedFinding(_finding(title="Race", line=70), 1),
    ]

    decisions = gate_findings(candidates, reps=5, block_support=3, round_index=3)

    assert [d.finding.title for d in decisions] == ["Typo", "Leak", "Race"]
    assert [d.blocking for d in decisions] == [False, True, False]
    assert blocking_dedup_merged(decisions) == 0


def test_two_blockers_about_the_same_defect_merge_into_one_and_are_counted() -> None:
    weaker = _finding(title="Connection is never closed.", line=12, end_line=14)
    stronger = _finding(title="connection is NEVER closed", line=14)
    other_file = _finding(title="Connection is never closed", path="app/cache.py")
    candidates = [
        SupportedFinding(weaker, 3, CONFIRMED, HOLDS),
        SupportedFinding(other_file, 4, CONFIRMED, HOLDS),
        SupportedFinding(stronger, 5, CONFIRMED, HOLDS),
    ]

    decisions = gate_findings(candidates, reps=5, block_support=3, round_index=3)

    # The best-supported one represents the defect; the other rides along, not dropped.
    assert [d.finding for d in decisions] == [other_file, stronger]
    assert decisions[1].merged == (weaker,)
    assert blocking_dedup_merged(decisions) == 1


def test_non_blocking_look_alikes_are_not_merged() -> None:
    candidates = [
        SupportedFinding(_finding(), 5, CONFIRMED, HOLDS),
        SupportedFinding(_finding(), 1),
    ]

    decisions = gate_findings(candidates, reps=5, block_support=3, round_index=3)

    assert len(decisions) == 2
    assert blocking_dedup_merged(decisions) == 0


def test_same_defect_needs_same_path_overlapping_lines_and_title() -> None:
    base = _finding(title="资源泄漏：连接未关闭", line=10, end_line=12)

    assert same_defect(base, _finding(title="资源泄漏 连接未关闭", line=12))
    assert not same_defect(base, _finding(title="资源泄漏：连接未关闭", line=13))
    assert not same_defect(base, _finding(title="连接池耗尽", line=11))


# The seed's stale blocker (spec §5.5): carried from round 6, its fact no longer true at round 12.

_BZL_R6 = (
    "def _impl(ctx):\n"
    "    return []\n"
    "\n"
    "generate_grpc_proto = rule(\n"
    "    implementation = _impl,\n"
    "    attrs = {\n"
    '        "proto_srcs": attr.label(allow_files = True, mandatory = True),\n'
    "    },\n"
    ")\n"
)
_BZL_R12 = _BZL_R6.replace(
    '        "proto_srcs": attr.label(allow_files = True, mandatory = True),\n',
    '        "proto_file": attr.label(allow_single_file = True),\n',
)


def _commit(repo: Path, content: str) -> str:
    (repo / "bazel").mkdir(exist_ok=True)
    (repo / "bazel" / "py_proto.bzl").write_text(content, encoding="utf-8")
    for args in (["add", "-A"], ["commit", "-q", "-m", "round"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_a_carried_blocker_whose_claim_is_now_refuted_stops_blocking(tmp_path: Path) -> None:
    repo_path = tmp_path / "repo"
    repo_path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo_path, check=True)
    round_6 = _commit(repo_path, _BZL_R6)
    round_12 = _commit(repo_path, _BZL_R12)
    blocker = _finding(
        title=(
            "generate_grpc_proto 新增 mandatory proto_srcs 后 flexlb_schedule_service_py 未传该属性"
        ),
        path="bazel/py_proto.bzl",
        line=7,
        claims=(
            Claim(
                kind=ClaimKind.LINE_CONTAINS,
                text="py_proto.bzl 将 proto_srcs 声明为 mandatory=True",
                path="bazel/py_proto.bzl",
                line=7,
                needle='"proto_srcs": attr.label(allow_files = True, mandatory = True)',
            ),
        ),
    )

    def check(head: str, round_index: int) -> FactCheck:
        with GitRepo.open(repo_path) as repo:
            outcome = asyncio.run(
                fact_check_findings(
                    [blocker],
                    head=GitRevisionReader(repo, head),
                    base=GitRevisionReader(repo, round_6),
                    client=None,
                    lang="zh",
                    round_index=round_index,
                )
            )
        return outcome.fact_checks[0]

    at_round_6 = check(round_6, 6)
    assert at_round_6.verdict is FactCheckVerdict.HOLD
    assert decide_gate(
        SupportedFinding(blocker, 5, CONFIRMED, at_round_6), reps=5, block_support=3, round_index=6
    ).blocking

    # Round 12 re-gates the carried blocker: the round-6 verdict is not trusted ...
    stale = decide_gate(
        SupportedFinding(blocker, 5, CONFIRMED, at_round_6), reps=5, block_support=3, round_index=12
    )
    assert not stale.blocking
    assert stale.reason == "fact-check is from round 6, not this round"

    # ... and the fresh fact-check refutes the claim, so the P1 is kept as a P2 with the reason.
    at_round_12 = check(round_12, 12)
    assert at_round_12.verdict is FactCheckVerdict.REFUTED
    decision = decide_gate(
        SupportedFinding(blocker, 5, CONFIRMED, at_round_12),
        reps=5,
        block_support=3,
        round_index=12,
    )
    assert not decision.blocking
    assert (decision.severity, decision.original_severity) == (Severity.P2, Severity.P1)
    assert decision.reason == (
        "fact-check refuted: py_proto.bzl 将 proto_srcs 声明为 mandatory=True "
        '(bazel/py_proto.bzl line 7 is `"proto_file": attr.label(allow_single_file = True),`; '
        "the text is not within ±2 lines)"
    )
    assert decision.fact_check == at_round_12
