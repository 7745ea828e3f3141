"""Stage 6, match: give this round's findings their stable identity from the PR's history.

Each finding of this round (one per cluster, with its votes) is compared with the pull request's
open findings from earlier rounds. A pair is the same defect when

1. it is in the same file (the earlier location moved to the new head through the line map of
   the diff previous head → new head, renames followed) and on the same side;
2. it is near the earlier location after mapping, and says the same thing: two static findings
   with the same rule code are the same; otherwise the titles (and, as a second opinion, the
   evidence) must be similar enough for the distance (``MatchThresholds``);
3. no better pair claims either of them: pairs are assigned one-to-one, best score first.

A matched finding keeps the earlier finding's id, first-seen round and severity. Severity is
stable by default (the seed drifted P1→P2→P3 on the same defect); it changes only on new
evidence, recorded in ``severity_change_reason``:

- a static analyzer now reports the defect: the analyzer's severity is deterministic and wins;
- reviewers rated it the same other severity in two consecutive rounds (this one and the
  previous, ``previous_argued``) with at least the support it had before.

Unmatched findings are new: their id is their fingerprint (made unique against every id the PR
already uses), their first-seen round this one. Open findings nothing matched go to recheck. A
finding that a recheck closed in an earlier round and that reappears is a new finding: it is
reported again with a new id, and the closed list keeps the earlier closure (history is not
rewritten).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from rapidfuzz import fuzz, utils

from assay.diff.linemap import LineMap
from assay.model import Finding, FindingSource, ReportedFinding, Severity, Side

__all__ = [
    "MatchOutcome",
    "MatchThresholds",
    "MatchedFinding",
    "SupportedLike",
    "analyzer_name",
    "match_findings",
]


class SupportedLike(Protocol):
    """A finding with the number of distinct reviewers behind it (``gate.SupportedFinding``)."""

    @property
    def finding(self) -> Finding: ...

    @property
    def votes(self) -> int: ...


CandidateT = TypeVar("CandidateT", bound=SupportedLike)


@dataclass(frozen=True)
class MatchThresholds:
    """When two findings are the same defect. Similarities are 0…1 (rapidfuzz ``WRatio``/100).

    The defaults were set on paraphrased titles in English and Chinese: the same defect worded
    differently scores 0.84–0.87, different defects in the same code 0.13–0.62.
    """

    near_lines: int = 3
    """Within this many lines (after mapping) a finding is "at the same place"."""
    near_similarity: float = 0.70
    """Text similarity needed at the same place."""
    close_lines: int = 20
    """Within this many lines the code may have moved inside the function."""
    close_similarity: float = 0.80
    far_similarity: float = 0.92
    """Anywhere else in the same file: nearly the same words."""
    category_penalty: float = 0.05
    """Added to the needed similarity when the categories differ."""
    static_rule_lines: int = 20
    """Two static findings with the same rule match within this many lines."""


@dataclass(frozen=True)
class MatchedFinding(Generic[CandidateT]):
    """One finding of this round with its identity."""

    candidate: CandidateT
    """The input, unchanged."""
    finding: Finding
    """The candidate's finding with ``severity`` set to the severity to report (gate this)."""
    id: str
    first_seen_round: int
    matched: bool
    """It is an earlier open finding seen again (KPI ``merged``); else new (``new_findings``)."""
    argued_severity: Severity
    """What this round's reviewers rated it (``candidate.finding.severity``)."""
    previous: ReportedFinding | None = None
    """The earlier finding it matched."""
    severity_change_reason: str = ""
    """Why the severity differs from the earlier finding's; empty when it does not."""
    similarity: float = 0.0
    """The matched pair's text similarity (1.0 for a static rule match)."""


@dataclass(frozen=True)
class MatchOutcome(Generic[CandidateT]):
    findings: tuple[MatchedFinding[CandidateT], ...]
    """One per input candidate, in input order."""
    unmatched_open: tuple[ReportedFinding, ...]
    """Earlier open findings nothing matched, in their order: the recheck's input."""

    @property
    def new_findings(self) -> int:
        return sum(1 for matched in self.findings if not matched.matched)

    @property
    def merged(self) -> int:
        return sum(1 for matched in self.findings if matched.matched)


def match_findings(
    current: Sequence[CandidateT],
    open_findings: Sequence[ReportedFinding],
    *,
    line_map: LineMap | None,
    round_index: int,
    previous_argued: Mapping[str, Severity] | None = None,
    reserved_ids: Collection[str] = (),
    thresholds: MatchThresholds | None = None,
) -> MatchOutcome[CandidateT]:
    """Match this round's findings against the PR's open findings from earlier rounds.

    Args:
        current: This round's findings (one per cluster) with their votes.
        open_findings: The PR's open findings as of the previous round, located at the
            previous reviewed head.
        line_map: The line map previous head → this head; ``None`` when the previous head is
            gone (its locations are then compared as they are).
        round_index: This round's number.
        previous_argued: Finding id → the severity reviewers argued for it in the previous
            round, where that differed from its kept severity (for the two-round rule).
        reserved_ids: Ids the PR used before and that a new finding must not take (closed
            findings' ids); open findings' ids are reserved anyway.
        thresholds: The similarity thresholds; ``MatchThresholds()`` by default.

    Returns:
        Every candidate with its id, first-seen round and severity, and the open findings
        nothing matched.

    Example::

        outcome = match_findings(clusters, prior.open_findings, line_map=line_map,
                                 round_index=2)
        outcome.new_findings, outcome.merged, outcome.unmatched_open
    """
    limits = thresholds or MatchThresholds()
    located = [_Located.of(earlier, line_map) for earlier in open_findings]
    pairs: list[tuple[float, int, int, float]] = []
    for current_index, candidate in enumerate(current):
        for open_index, where in enumerate(located):
            scored = _score(candidate.finding, where, limits)
            if scored is not None:
                score, similarity = scored
                pairs.append((score, current_index, open_index, similarity))
    # Greedy one-to-one assignment, best score first; ties go to the earlier finding on each
    # side, so the result does not depend on anything but the inputs' order.
    pairs.sort(key=lambda pair: (-pair[0], pair[1], pair[2]))
    assigned: dict[int, tuple[int, float]] = {}
    taken_open: set[int] = set()
    for _score_value, current_index, open_index, similarity in pairs:
        if current_index in assigned or open_index in taken_open:
            continue
        assigned[current_index] = (open_index, similarity)
        taken_open.add(open_index)

    used_ids = {previous.id for previous in open_findings} | set(reserved_ids)
    argued_before = previous_argued or {}
    results: list[MatchedFinding[CandidateT]] = []
    for current_index, candidate in enumerate(current):
        match = assigned.get(current_index)
        if match is None:
            finding_id = _unique_id(candidate.finding.fingerprint(), used_ids, round_index)
            used_ids.add(finding_id)
            results.append(
                MatchedFinding(
                    candidate=candidate,
                    finding=candidate.finding,
                    id=finding_id,
                    first_seen_round=round_index,
                    matched=False,
                    argued_severity=candidate.finding.severity,
                )
            )
            continue
        open_index, similarity = match
        previous = open_findings[open_index]
        severity, reason = _decide_severity(
            candidate, previous, argued_before.get(previous.id), round_index
        )
        results.append(
            MatchedFinding(
                candidate=candidate,
                finding=candidate.finding.model_copy(update={"severity": severity}),
                id=previous.id,
                first_seen_round=previous.first_seen_round,
                matched=True,
                argued_severity=candidate.finding.severity,
                previous=previous,
                severity_change_reason=reason,
                similarity=similarity,
            )
        )
    unmatched = tuple(
        previous for index, previous in enumerate(open_findings) if index not in taken_open
    )
    return MatchOutcome(findings=tuple(results), unmatched_open=unmatched)


def analyzer_name(rule: str | None) -> str:
    """The analyzer that reports ``rule``: Assay's import check for ``ASSAY-*``, else ruff."""
    if rule is not None and rule.upper().startswith("ASSAY-"):
        return "the import check"
    return "ruff"


@dataclass(frozen=True)
class _Located:
    """An earlier finding and where it is at the new head (``path`` ``None``: file deleted)."""

    finding: Finding
    path: str | None
    line: int

    @classmethod
    def of(cls, previous: ReportedFinding, line_map: LineMap | None) -> _Located:
        finding = previous.finding
        # Only head-side locations move with the head; a LEFT location is a base line.
        if line_map is None or finding.side is not Side.RIGHT:
            return cls(finding, finding.path, finding.line)
        moved = line_map.nearest(finding.path, finding.line)
        if moved is None:
            return cls(finding, None, finding.line)
        return cls(finding, moved.path, moved.line)


def _score(
    current: Finding, previous: _Located, limits: MatchThresholds
) -> tuple[float, float] | None:
    """``(score, similarity)`` when the two are the same defect, else ``None``."""
    earlier = previous.finding
    if previous.path is None or current.path != previous.path or current.side is not earlier.side:
        return None
    distance = abs(current.line - previous.line)
    if current.rule and earlier.rule:
        # Analyzer diagnostics are exact: same rule nearby is the same defect, another rule
        # never is.
        if current.rule != earlier.rule or distance > limits.static_rule_lines:
            return None
        return 2.0 - distance / 1000, 1.0
    similarity = _text_similarity(current, earlier)
    if distance <= limits.near_lines:
        needed = limits.near_similarity
    elif distance <= limits.close_lines:
        needed = limits.close_similarity
    else:
        needed = limits.far_similarity
    if current.category != earlier.category:
        needed += limits.category_penalty
    if similarity < needed:
        return None
    # Nearer pairs win ties between equally similar texts.
    return similarity - min(distance, 500) / 1000, similarity


def _text_similarity(current: Finding, earlier: Finding) -> float:
    title = _similarity(current.title, earlier.title)
    if not current.evidence.strip() or not earlier.evidence.strip():
        return title
    # Evidence is a second opinion for paraphrased titles: it names the same identifiers and
    # lines even when the titles are worded differently; it never lowers the title's score.
    evidence = _similarity(current.evidence, earlier.evidence)
    return max(title, (title + evidence) / 2)


def _similarity(first: str, second: str) -> float:
    return float(fuzz.WRatio(first, second, processor=utils.default_process)) / 100


def _decide_severity(
    candidate: SupportedLike,
    previous: ReportedFinding,
    argued_before: Severity | None,
    round_index: int,
) -> tuple[Severity, str]:
    kept = previous.finding.severity
    argued = candidate.finding.severity
    if argued is kept:
        return kept, ""
    finding = candidate.finding
    if finding.source is FindingSource.STATIC:
        analyzer = analyzer_name(finding.rule)
        return argued, (
            f"{analyzer} reports {finding.rule or 'it'} at {finding.path}:{finding.line} "
            f"({argued.value}; was {kept.value})"
        )
    if previous.finding.source is FindingSource.STATIC:
        # The analyzer's deterministic rating stands against reviewers' opinions.
        return kept, ""
    if argued_before is argued and candidate.votes >= previous.votes:
        return argued, (
            f"reviewers rated it {argued.value} in rounds {round_index - 1} and {round_index} "
            f"(support {candidate.votes}; was {kept.value})"
        )
    return kept, ""


_ID_LENGTH = 12


def _unique_id(fingerprint: str, used: Collection[str], round_index: int) -> str:
    """``fingerprint`` unless the PR already uses it; then a derived id, stable per input."""
    if fingerprint not in used:
        return fingerprint
    for attempt in range(1, 1000):
        key = f"{fingerprint}:r{round_index}:{attempt}".encode()
        derived = hashlib.sha256(key).hexdigest()[:_ID_LENGTH]
        if derived not in used:
            return derived
    raise RuntimeError("no free finding id after 1000 attempts")  # pragma: no cover
