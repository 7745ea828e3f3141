"""The typed values that flow between pipeline stages.

One finding type flows one way: discovery and static analysis produce ``Finding``; the gate and
the anchoring step wrap it in a ``ReportedFinding``; a round ends as one ``RoundResult`` from
which every output (review, follow-up, inline comments, summary, KPI, JSON) is rendered.

Locations follow one rule, with a worked example: ``path`` is relative to the repository root
with ``/`` separators; ``line`` is 1-based; ``end_line`` is inclusive; ``side`` says which version
the numbers refer to. ``Finding(path="app/db.py", line=12, end_line=14, side=Side.RIGHT)`` is
lines 12, 13 and 14 of ``app/db.py`` at the head commit.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.diff.types import Anchor, Side

__all__ = [
    "ChecklistItemResult",
    "ChecklistReport",
    "ChecklistStatus",
    "Claim",
    "ClaimCheck",
    "ClaimKind",
    "ClaimStatus",
    "ClosedFinding",
    "ConfirmKpi",
    "ConfirmVerdict",
    "Confirmation",
    "Coverage",
    "FactCheck",
    "FactCheckKpi",
    "FactCheckVerdict",
    "Finding",
    "FindingSource",
    "Kpi",
    "PullRequestMeta",
    "RecheckKpi",
    "RecheckStatus",
    "ReportedFinding",
    "RoundResult",
    "Severity",
    "Side",
    "StageFailure",
    "Strength",
    "TokenUsage",
    "Verdict",
]


class Severity(StrEnum):
    """How bad a finding is (the seed's scale).

    - P0: certain, deterministic breakage of a build or a production feature.
    - P1: a highly likely production regression or serious risk.
    - P2: a real defect whose impact is conditional or latent; does not block.
    - P3: hygiene, dead code, naming, formatting.
    """

    P0 = "P0"
    P1 = "P1"
    P2 = "P2"
    P3 = "P3"

    @property
    def rank(self) -> int:
        return int(self.value[1])

    @property
    def may_block(self) -> bool:
        return self in (Severity.P0, Severity.P1)


class FindingSource(StrEnum):
    STATIC = "static"
    """A static analyzer; deterministic, needs no votes."""
    LLM = "llm"
    """A model reviewer."""


class ClaimKind(StrEnum):
    """What a claim asserts; deterministic kinds are checked without the model."""

    FREE = "free"
    LINE_CONTAINS = "line_contains"
    PATTERN_COUNT = "pattern_count"
    SYMBOL_DEFINED = "symbol_defined"
    SYMBOL_UNDEFINED = "symbol_undefined"
    FILE_EXISTS = "file_exists"
    FILE_ABSENT = "file_absent"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Claim(_Frozen):
    """One checkable statement a finding rests on."""

    kind: ClaimKind = ClaimKind.FREE
    text: str
    path: str | None = None
    line: int | None = None
    needle: str | None = None
    """The text, pattern or symbol the claim is about."""
    count: int | None = None
    revision: Literal["head", "base"] = "head"


class Finding(_Frozen):
    """A defect as a reviewer (model or analyzer) reported it."""

    severity: Severity
    category: str
    title: str
    path: str
    line: int = Field(ge=1)
    end_line: int | None = Field(default=None, ge=1)
    side: Side = Side.RIGHT
    evidence: str = ""
    suggestion: str = ""
    claims: tuple[Claim, ...] = ()
    source: FindingSource = FindingSource.LLM
    rule: str | None = None
    """The analyzer's rule code (``F821``) for static findings."""
    certain_failure: bool = False
    """A static finding that fails on execution (undefined name, syntax error): blocks alone."""
    rep: int | None = None
    """Index of the discovery rep that reported it (``None`` for static findings)."""

    def fingerprint(self) -> str:
        """A stable id: same place, same rule or title → same id across runs."""
        key = "\x1f".join(
            [
                self.source.value,
                self.path,
                self.rule or _normalize_title(self.title),
                str(self.line),
            ]
        )
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def _normalize_title(title: str) -> str:
    return " ".join(title.lower().split())


class ClaimStatus(StrEnum):
    VERIFIED = "verified"
    REFUTED = "refuted"
    UNVERIFIED = "unverified"
    """Could not be checked against the repository (vague, about absent code): cannot block."""


class ClaimCheck(_Frozen):
    claim: Claim
    status: ClaimStatus
    detail: str = ""
    """What the check saw (``line 12 is `return foo(x)```), or why it could not check."""
    method: Literal["deterministic", "llm"] = "deterministic"


class FactCheckVerdict(StrEnum):
    HOLD = "hold"
    """Every claim verified."""
    REFUTED = "refuted"
    """At least one claim refuted."""
    UNVERIFIED = "unverified"
    """No claim refuted, but not all verified (or no claims at all)."""
    PARSE_FAIL = "parse_fail"
    """The fact-check stage failed or its output was unusable."""


class FactCheck(_Frozen):
    verdict: FactCheckVerdict
    checks: tuple[ClaimCheck, ...] = ()
    round_index: int = 1
    """The round whose head these checks ran against."""


class ConfirmVerdict(StrEnum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    FAILED = "failed"
    """The confirm stage errored; a finding whose confirmation failed cannot block."""


class Confirmation(_Frozen):
    verdict: ConfirmVerdict
    reason: str = ""


class ReportedFinding(_Frozen):
    """A finding as the round reports it: gated, counted and anchored."""

    id: str
    finding: Finding
    severity: Severity
    """Effective severity after the gate (a P0/P1 that fails the gate is downgraded to P2)."""
    original_severity: Severity | None = None
    """What reviewers argued, when the gate downgraded it."""
    blocking: bool = False
    gate_reason: str = ""
    """Why it blocks, or why it was downgraded."""
    votes: int = 1
    """Distinct discovery reps that reported it (static findings count as deterministic)."""
    first_seen_round: int = 1
    anchor: Anchor
    checklist_items: tuple[str, ...] = ()
    """Ids of failing checklist items this finding represents."""
    confirmation: Confirmation | None = None
    fact_check: FactCheck | None = None
    members: int = 1
    """Reported findings merged into this one by clustering (all reps, static included)."""
    on_changed_line: bool = True
    """The location is on a line this round's delta added or changed."""
    argued_severity: Severity | None = None
    """What this round's reviewers argued, when the kept (stable) severity differs from it."""
    severity_change_reason: str = ""
    """Why the severity changed from the earlier round's, when it did (stable by default)."""


class RecheckStatus(StrEnum):
    FIXED = "fixed"
    STILL_OPEN = "still_open"
    CANNOT_SUBSTANTIATE = "cannot_substantiate"
    FAIL = "fail"


class ClosedFinding(_Frozen):
    """An earlier finding that a recheck closed (fixed, or no longer substantiated), with proof."""

    id: str
    title: str
    severity: Severity
    path: str
    line: int
    status: RecheckStatus
    proof: str
    first_seen_round: int
    closed_round: int


class ChecklistStatus(StrEnum):
    PASS = "pass"
    FAIL = "fail"


class ChecklistItemResult(_Frozen):
    """One applicable checklist item, evaluated for the round."""

    item_id: str
    """Stable id, e.g. ``G.6.1.22`` or ``P.B.1``."""
    checklist: str
    """The catalog it belongs to (its display name is the renderer's job)."""
    label: str
    """The short tag the seed prints in brackets: ``6.1``, ``I``, ``P.B``."""
    section: str
    text: str
    status: ChecklistStatus
    finding_id: str | None = None
    """The one finding that shows the failure (always set for a fail)."""
    method: Literal["static", "llm", "rule"] = "llm"


class ChecklistReport(_Frozen):
    checklists: tuple[str, ...] = ()
    """Catalog names in catalog order (the order their groups render)."""
    checklist_titles: tuple[str, ...] = ()
    """Display titles, parallel to ``checklists`` (locale already applied)."""
    items: tuple[ChecklistItemResult, ...] = ()
    """Every applicable item: ``len(items)`` is the round's deterministic ``M total``."""

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def failed(self) -> tuple[ChecklistItemResult, ...]:
        return tuple(item for item in self.items if item.status is ChecklistStatus.FAIL)


class Strength(_Frozen):
    text: str
    path: str | None = None
    line: int | None = None


class PullRequestMeta(_Frozen):
    """What the round reviewed: the forge's PR (or a local branch) and its commits."""

    number: int | None = None
    title: str = ""
    author: str = ""
    state: str = "open"
    description: str = ""
    base_ref: str
    head_ref: str
    base_sha: str
    head_sha: str
    merge_base_sha: str
    url: str | None = None


class Verdict(StrEnum):
    BLOCKING = "BLOCKING"
    LGTM = "LGTM"


class ConfirmKpi(BaseModel):
    candidates: int = 0
    to_block: int = 0
    confirm_fail: int = 0


class FactCheckKpi(BaseModel):
    checked: int = 0
    hold: int = 0
    refuted: int = 0
    parse_fail: int = 0


class RecheckKpi(BaseModel):
    fixed: int = 0
    still_open: int = 0
    cannot_substantiate: int = 0
    fail: int = 0


class TokenUsage(BaseModel):
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0


class Kpi(BaseModel):
    """The round's KPI block: the seed's keys in the seed's order, then Assay's own.

    Stages that did not run report 0 and are named in ``skipped``.
    """

    reps: int = 0
    agentic_reps: int = 0
    diff_truncated: bool = False
    patch_bytes: int = 0
    coverage: float = 1.0
    shards: int = 0
    discover_ok: int = 0
    discover_fail: int = 0
    discover_attempts: int = 0
    clusters: int = 0
    synth_fail: int = 0
    confirm: ConfirmKpi = Field(default_factory=ConfirmKpi)
    blocking_dedup_merged: int = 0
    fact_check: FactCheckKpi = Field(default_factory=FactCheckKpi)
    model: str = ""
    round_index: int = 1
    delta_files: int = 0
    full_files: int = 0
    new_findings: int = 0
    merged: int = 0
    recheck: RecheckKpi = Field(default_factory=RecheckKpi)
    blocking: int = 0
    blocking_on_unchanged: int = 0
    # Assay's own keys, after the seed's.
    static_findings: int = 0
    skipped: list[str] = Field(default_factory=list)
    failed_stages: list[str] = Field(default_factory=list)
    llm: TokenUsage = Field(default_factory=TokenUsage)
    tool_calls: int = 0
    """Repository tool calls made by agentic stages."""
    critical_path_ms: int = 0
    """The longest chain of dependent model calls, in endpoint time (see ``pipeline/_kpi.py``)."""
    wall_ms: int = 0


class StageFailure(_Frozen):
    stage: str
    error: str


class Coverage(_Frozen):
    """What the round did and did not review."""

    reviewed_files: tuple[str, ...] = ()
    not_reviewed: tuple[str, ...] = ()
    """Files changed by the PR that no reviewer saw (binary, over budget, generated)."""
    notes: tuple[str, ...] = ()


class RoundResult(BaseModel):
    """Everything a round produced; every output is rendered from this one object."""

    model_config = ConfigDict(frozen=True)

    pr: PullRequestMeta
    round_index: int = 1
    reviewed_at: datetime
    findings: tuple[ReportedFinding, ...] = ()
    """In body order: blocking first, then by severity, then by the order reviewers found them."""
    strengths: tuple[Strength, ...] = ()
    kpi: Kpi
    coverage: Coverage = Field(default_factory=Coverage)
    failures: tuple[StageFailure, ...] = ()
    delta_files: tuple[str, ...] = ()
    full_files: tuple[str, ...] = ()
    closed: tuple[ClosedFinding, ...] = ()
    """Cumulative across rounds: every earlier finding a recheck closed, newest first."""
    checklist: ChecklistReport | None = None

    @property
    def verdict(self) -> Verdict:
        return Verdict.BLOCKING if any(f.blocking for f in self.findings) else Verdict.LGTM

    @property
    def blocking(self) -> tuple[ReportedFinding, ...]:
        return tuple(f for f in self.findings if f.blocking)

    @property
    def non_blocking(self) -> tuple[ReportedFinding, ...]:
        return tuple(f for f in self.findings if not f.blocking)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)
