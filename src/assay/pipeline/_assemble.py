"""Assembling a round's findings: who each finding is, what the gate decided, where it goes.

Helpers of ``orchestrator.review_round``, kept apart so the orchestrator reads as the stages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assay.diff import anchor_to_diff, file_for_path
from assay.diff.linemap import LineMap
from assay.diff.types import FileDiff
from assay.model import (
    Confirmation,
    FactCheck,
    Finding,
    FindingSource,
    ReportedFinding,
    Severity,
    Strength,
)
from assay.pipeline.discover import DiscoveryOutcome
from assay.pipeline.gate import GateDecision, SupportedFinding
from assay.pipeline.match import MatchedFinding
from assay.pipeline.synthesize import SynthesizedFinding

__all__ = [
    "Identity",
    "body_order",
    "carried",
    "checklist_finding",
    "identities",
    "is_candidate",
    "report",
    "strengths_of",
    "with_checks",
]


def is_candidate(supported: SupportedFinding, block_support: int) -> bool:
    """A model P0/P1 with enough votes: worth confirming and fact-checking."""
    finding = supported.finding
    return (
        finding.source is FindingSource.LLM
        and finding.severity.may_block
        and supported.votes >= block_support
    )


def carried(finding: ReportedFinding) -> SupportedFinding:
    # Re-gated with what reviewers argued (a downgraded P1 is gated as a P1 again).
    return SupportedFinding(finding.finding, finding.votes)


def with_checks(
    supported: SupportedFinding,
    checks: tuple[Confirmation | None, FactCheck | None] | None,
) -> SupportedFinding:
    if checks is None:
        return supported
    confirmation, fact_check = checks
    return SupportedFinding(
        supported.finding, supported.votes, confirmation=confirmation, fact_check=fact_check
    )


@dataclass(frozen=True)
class Identity:
    id: str
    first_seen_round: int
    members: int
    argued_severity: Severity | None = None
    severity_change_reason: str = ""


def identities(
    gated: Sequence[tuple[str, SupportedFinding]],
    matched: Sequence[MatchedFinding[SynthesizedFinding]],
    still_open: Sequence[ReportedFinding],
) -> dict[int, Identity]:
    """Who each gate input is, keyed by the identity of its ``Finding`` object."""
    identities: dict[int, Identity] = {}
    fresh, carried = gated[: len(matched)], gated[len(matched) :]
    for (fid, supported), match in zip(fresh, matched, strict=True):
        argued = match.argued_severity
        identities[id(supported.finding)] = Identity(
            id=fid,
            first_seen_round=match.first_seen_round,
            members=match.candidate.members,
            argued_severity=argued if argued is not match.finding.severity else None,
            severity_change_reason=match.severity_change_reason,
        )
    for (fid, supported), earlier in zip(carried, still_open, strict=True):
        identities[id(supported.finding)] = Identity(
            id=fid,
            first_seen_round=earlier.first_seen_round,
            members=earlier.members,
            argued_severity=earlier.argued_severity,
            severity_change_reason=earlier.severity_change_reason,
        )
    return identities


def report(
    decision: GateDecision,
    identity: Identity,
    files: Sequence[FileDiff],
    line_map: LineMap | None,
) -> ReportedFinding:
    finding = decision.finding
    return ReportedFinding(
        id=identity.id,
        finding=finding,
        severity=decision.severity,
        original_severity=decision.original_severity,
        blocking=decision.blocking,
        gate_reason=decision.reason,
        votes=decision.votes,
        first_seen_round=identity.first_seen_round,
        anchor=anchor_to_diff(
            finding.path, finding.line, finding.side, files, end_line=finding.end_line
        ),
        confirmation=decision.confirmation,
        fact_check=decision.fact_check,
        members=identity.members + len(decision.merged),
        on_changed_line=finding.line in _delta_lines(finding.path, files, line_map),
        argued_severity=identity.argued_severity,
        severity_change_reason=identity.severity_change_reason,
    )


def checklist_finding(
    finding: Finding, files: Sequence[FileDiff], line_map: LineMap | None, round_index: int
) -> ReportedFinding:
    """A finding a failing checklist item created (P2/P3: it never blocks)."""
    return ReportedFinding(
        id=finding.fingerprint(),
        finding=finding,
        severity=finding.severity,
        votes=0,
        first_seen_round=round_index,
        anchor=anchor_to_diff(
            finding.path, finding.line, finding.side, files, end_line=finding.end_line
        ),
        on_changed_line=finding.line in _delta_lines(finding.path, files, line_map),
    )


def _delta_lines(path: str, files: Sequence[FileDiff], line_map: LineMap | None) -> frozenset[int]:
    """Head lines this round's delta added: since the previous head, else in the whole PR."""
    if line_map is not None:
        return line_map.added_lines(path)
    file = file_for_path(files, path)
    return file.changed_lines() if file is not None else frozenset()


def body_order(findings: Sequence[ReportedFinding]) -> list[ReportedFinding]:
    """Blocking first, then by severity; reviewers' order within a severity."""
    return sorted(findings, key=lambda f: (not f.blocking, f.severity.rank))


def strengths_of(outcomes: Sequence[DiscoveryOutcome]) -> list[Strength]:
    return [strength for outcome in outcomes for strength in outcome.strengths]
