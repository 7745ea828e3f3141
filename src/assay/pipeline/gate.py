"""Stage 7, gate: which P0/P1 findings may block. Downgrade, never drop.

A finding blocks only when it is P0/P1 and either
- it comes from a static analyzer and its rule fails on execution (``certain_failure``), or
- enough independent reviewers reported it (``votes >= block_support``) and every later check
  that ran (confirm, fact-check) upheld it.

Every other P0/P1 is kept and reported as P2, with ``original_severity`` and the reason recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assay.model import Finding, FindingSource, Severity

__all__ = ["GateDecision", "SupportedFinding", "gate_findings"]


@dataclass(frozen=True)
class SupportedFinding:
    """A finding with the number of distinct reviewers behind it."""

    finding: Finding
    votes: int


@dataclass(frozen=True)
class GateDecision:
    finding: Finding
    votes: int
    severity: Severity
    """Effective severity: the argued one, or P2 when the gate downgraded a P0/P1."""
    blocking: bool
    reason: str
    original_severity: Severity | None = None


def gate_findings(
    candidates: Sequence[SupportedFinding], *, reps: int, block_support: int
) -> list[GateDecision]:
    """Decide, for each finding, whether it blocks; keep order, drop nothing."""
    return [_decide(candidate, reps=reps, block_support=block_support) for candidate in candidates]


def _decide(candidate: SupportedFinding, *, reps: int, block_support: int) -> GateDecision:
    finding, votes = candidate.finding, candidate.votes
    if not finding.severity.may_block:
        return GateDecision(finding, votes, finding.severity, blocking=False, reason="")
    if finding.source is FindingSource.STATIC:
        if finding.certain_failure:
            reason = f"static analysis: {finding.rule or 'analyzer'} fails on execution"
            return GateDecision(finding, votes, finding.severity, blocking=True, reason=reason)
        return _downgrade(
            finding, votes, f"static analysis: {finding.rule} is not a certain failure"
        )
    if votes < block_support:
        return _downgrade(finding, votes, f"support {votes}/{reps} < {block_support}")
    reason = f"support {votes}/{reps} >= {block_support}"
    return GateDecision(finding, votes, finding.severity, blocking=True, reason=reason)


def _downgrade(finding: Finding, votes: int, reason: str) -> GateDecision:
    return GateDecision(
        finding,
        votes,
        Severity.P2,
        blocking=False,
        reason=reason,
        original_severity=finding.severity,
    )
