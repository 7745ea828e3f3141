"""Stage 7, gate: which P0/P1 findings may block. Downgrade, never drop.

A finding blocks only when it is P0/P1 and either

- it is a static P0 whose rule fails on execution (``certain_failure``): it blocks on its own,
  unless a fact-check that ran refuted it; or
- enough distinct reviewers reported it (``votes >= block_support``), the confirm stage
  confirmed it, and its fact-check (run against this round's head) holds.

Every other P0/P1 is kept and reported as P2, with ``original_severity`` and the reason (every
gate it failed, e.g. ``support 2/5 < 3; fact-check refuted: <claim>``). P2/P3 pass through as
they are. A blocker carried over from an earlier round is re-gated the same way each round
(``decide_gate``): the caller passes this round's confirmation and fact-check, and a fact-check
from another round counts as not run, so an earlier verdict is never trusted.

Two blocking findings about the same defect (same path, overlapping lines, same title once
case, spacing and punctuation are folded) become one decision; the other is kept inside it
(``GateDecision.merged``) and counted in KPI ``blocking_dedup_merged``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace

from assay.model import (
    ClaimCheck,
    ClaimStatus,
    Confirmation,
    ConfirmVerdict,
    FactCheck,
    FactCheckVerdict,
    Finding,
    FindingSource,
    Severity,
)

__all__ = [
    "GateDecision",
    "SupportedFinding",
    "blocking_dedup_merged",
    "decide_gate",
    "gate_findings",
    "same_defect",
]

_CLAIM_CHARS = 80
_REASON_CHARS = 160


@dataclass(frozen=True)
class SupportedFinding:
    """A gate candidate: a finding, its support, and this round's checks of it (if they ran)."""

    finding: Finding
    votes: int
    """Distinct reviewers behind it (static findings: 1; they need no votes)."""
    confirmation: Confirmation | None = None
    """This round's confirm result; ``None``: confirm did not run for it."""
    fact_check: FactCheck | None = None
    """This round's fact-check; ``None``: it did not run."""


@dataclass(frozen=True)
class GateDecision:
    """What the gate decided for one finding (in input order; nothing is dropped)."""

    finding: Finding
    votes: int
    severity: Severity
    """Effective severity: the argued one, or P2 when the gate downgraded a P0/P1."""
    blocking: bool
    reason: str
    """Why it blocks, or every gate it failed; empty for P2/P3."""
    original_severity: Severity | None = None
    """Set when the gate downgraded the finding."""
    confirmation: Confirmation | None = None
    fact_check: FactCheck | None = None
    merged: tuple[Finding, ...] = ()
    """Blocking duplicates of this finding folded into it (``blocking_dedup_merged``)."""


def gate_findings(
    candidates: Sequence[SupportedFinding],
    *,
    reps: int,
    block_support: int,
    round_index: int | None = None,
    require_confirm: bool = True,
    require_fact_check: bool = True,
) -> list[GateDecision]:
    """Decide, for each finding, whether it blocks; keep order, drop nothing.

    Blocking duplicates of the same defect are merged into the first one with the most votes
    (the others ride along in its ``merged``); the merged-away candidates do not appear on their
    own in the result.

    Args:
        candidates: Every finding of the round (static, clusters, carried blockers), each with
            this round's confirmation and fact-check when those ran.
        reps: The round's discovery reps (the denominator of ``support n/reps``).
        block_support: Votes a model finding needs to block.
        round_index: This round: a fact-check from another round is treated as not run.

    Returns:
        One decision per candidate, minus merged blocking duplicates.
    """
    decisions = [
        decide_gate(
            candidate,
            reps=reps,
            block_support=block_support,
            round_index=round_index,
            require_confirm=require_confirm,
            require_fact_check=require_fact_check,
        )
        for candidate in candidates
    ]
    return _merge_blocking_duplicates(decisions)


def blocking_dedup_merged(decisions: Sequence[GateDecision]) -> int:
    """KPI ``blocking_dedup_merged``: blocking duplicates folded into another blocking finding."""
    return sum(len(decision.merged) for decision in decisions)


def decide_gate(
    candidate: SupportedFinding,
    *,
    reps: int,
    block_support: int,
    round_index: int | None = None,
    require_confirm: bool = True,
    require_fact_check: bool = True,
) -> GateDecision:
    """Decide one finding (a new cluster or a blocker carried over from an earlier round).

    Args:
        candidate: The finding with this round's confirmation and fact-check.
        reps: The round's discovery reps.
        block_support: Votes a model finding needs to block.
        round_index: This round: a fact-check from another round is treated as not run.
        require_confirm: A finding that was never confirmed cannot block. Off when the
            repository switched the confirm stage off: support alone then decides (a confirm
            that ran and refuted still downgrades).
        require_fact_check: The same for the fact-check stage.

    Returns:
        The decision: blocking with the gates it passed, or downgraded to P2 with every gate it
        failed; P2/P3 unchanged.
    """
    finding, votes = candidate.finding, candidate.votes
    confirmation, fact_check = candidate.confirmation, candidate.fact_check
    if not finding.severity.may_block:
        return GateDecision(
            finding, votes, finding.severity, False, "", None, confirmation, fact_check
        )
    stale = (
        fact_check is not None and round_index is not None and fact_check.round_index != round_index
    )
    current_check = None if stale else fact_check
    if finding.source is FindingSource.STATIC and finding.certain_failure:
        failures = []
        if current_check is not None and current_check.verdict is FactCheckVerdict.REFUTED:
            failures.append(_fact_check_failure(current_check))
        if finding.severity is not Severity.P0:
            failures.append(f"static analysis: {finding.rule} is a certain failure but not P0")
        if not failures:
            reason = f"static analysis: {finding.rule or 'analyzer'} fails on execution"
            return _blocks(candidate, reason)
        return _downgrade(candidate, failures)
    failures = []
    if finding.source is FindingSource.STATIC:
        failures.append(f"static analysis: {finding.rule} is not a certain failure")
    elif votes < block_support:
        failures.append(f"support {votes}/{reps} < {block_support}")
    if confirmation is None:
        if not failures and require_confirm:
            failures.append("not confirmed (confirm did not run)")
    elif confirmation.verdict is ConfirmVerdict.REFUTED:
        failures.append(f"confirm refuted: {_cut(confirmation.reason, _REASON_CHARS)}")
    elif confirmation.verdict is ConfirmVerdict.FAILED:
        failures.append(f"confirm failed: {_cut(confirmation.reason, _REASON_CHARS)}")
    if current_check is None:
        if stale and fact_check is not None:
            failures.append(f"fact-check is from round {fact_check.round_index}, not this round")
        elif not failures and require_fact_check:
            failures.append("not fact-checked (fact-check did not run)")
    elif current_check.verdict is not FactCheckVerdict.HOLD:
        failures.append(_fact_check_failure(current_check))
    if failures:
        return _downgrade(candidate, failures)
    claims = len(current_check.checks) if current_check is not None else 0
    confirmed = "confirmed" if confirmation is not None else "confirm off"
    checked = (
        f"fact-check hold ({claims} claims verified)"
        if current_check is not None
        else "fact-check off"
    )
    reason = f"support {votes}/{reps} >= {block_support}; {confirmed}; {checked}"
    return _blocks(candidate, reason)


def _fact_check_failure(fact_check: FactCheck) -> str:
    if fact_check.verdict is FactCheckVerdict.REFUTED:
        return f"fact-check refuted: {_first_claim(fact_check.checks, ClaimStatus.REFUTED)}"
    if fact_check.verdict is FactCheckVerdict.PARSE_FAIL:
        return "fact-check failed (parse_fail)"
    if not fact_check.checks:
        return "fact-check unverified: the finding states no claims"
    return f"fact-check unverified: {_first_claim(fact_check.checks, ClaimStatus.UNVERIFIED)}"


def _first_claim(checks: Sequence[ClaimCheck], status: ClaimStatus) -> str:
    check = next((check for check in checks if check.status is status), None)
    if check is None:
        return "(no claim)"
    text = _cut(check.claim.text, _CLAIM_CHARS)
    return f"{text} ({_cut(check.detail, _REASON_CHARS)})" if check.detail else text


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _blocks(candidate: SupportedFinding, reason: str) -> GateDecision:
    finding = candidate.finding
    return GateDecision(
        finding=finding,
        votes=candidate.votes,
        severity=finding.severity,
        blocking=True,
        reason=reason,
        confirmation=candidate.confirmation,
        fact_check=candidate.fact_check,
    )


def _downgrade(candidate: SupportedFinding, failures: Sequence[str]) -> GateDecision:
    finding = candidate.finding
    return GateDecision(
        finding=finding,
        votes=candidate.votes,
        severity=Severity.P2,
        blocking=False,
        reason="; ".join(failures),
        original_severity=finding.severity,
        confirmation=candidate.confirmation,
        fact_check=candidate.fact_check,
    )


def same_defect(first: Finding, second: Finding) -> bool:
    """Same path, overlapping line ranges, same title once case, spacing and punctuation fold."""
    if first.path != second.path or first.side is not second.side:
        return False
    first_end = max(first.end_line or first.line, first.line)
    second_end = max(second.end_line or second.line, second.line)
    overlap = first.line <= second_end and second.line <= first_end
    return overlap and _title_key(first.title) == _title_key(second.title)


def _title_key(title: str) -> str:
    # Letters and digits of every script survive (CJK titles included); punctuation, symbols
    # and spacing do not, so "Leak: conn not closed." equals "leak — conn not closed".
    folded = unicodedata.normalize("NFKC", title).casefold()
    return "".join(char for char in folded if unicodedata.category(char)[0] in "LN")


def _merge_blocking_duplicates(decisions: list[GateDecision]) -> list[GateDecision]:
    blocking = [index for index, decision in enumerate(decisions) if decision.blocking]
    # The first blocking decision with the most votes represents each group of duplicates.
    ranked = sorted(blocking, key=lambda index: (-decisions[index].votes, index))
    absorbed: dict[int, list[Finding]] = {}
    merged_away: set[int] = set()
    for position, keeper in enumerate(ranked):
        if keeper in merged_away:
            continue
        for other in ranked[position + 1 :]:
            if other in merged_away:
                continue
            if same_defect(decisions[keeper].finding, decisions[other].finding):
                merged_away.add(other)
                absorbed.setdefault(keeper, []).extend(
                    [decisions[other].finding, *decisions[other].merged]
                )
    result = []
    for index, decision in enumerate(decisions):
        if index in merged_away:
            continue
        extra = absorbed.get(index)
        result.append(replace(decision, merged=(*decision.merged, *extra)) if extra else decision)
    return result
