"""One review round, top to bottom: prepare → static → discover → cluster → gate → anchor → verdict.

``review_round`` is pure orchestration: it reads the snapshot it is given and calls the model
through the client it is given; it never calls the forge or the database. Independent model
calls (the reps) run concurrently under the client's one concurrency limit.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, Protocol

from assay.diff import FileStatus, anchor_to_diff
from assay.diff.types import FileDiff
from assay.errors import LLMPending
from assay.forge.base import PullRequestSnapshot
from assay.llm.client import CallRecord, LLMClient
from assay.llm.tokens import estimate_tokens
from assay.model import (
    Coverage,
    Finding,
    Kpi,
    ReportedFinding,
    RoundResult,
    StageFailure,
    Strength,
    TokenUsage,
)
from assay.pipeline.cluster import cluster_exact
from assay.pipeline.discover import DiscoveryInput, DiscoveryOutcome, discover
from assay.pipeline.gate import GateDecision, SupportedFinding, gate_findings
from assay.pipeline.prepare import PreparedDiff, Shard, generated_by_attributes, prepare_diff
from assay.static import ChangedPythonFile, StaticReport, run_static_analysis

__all__ = ["NullProgress", "Progress", "ReviewOptions", "RoundOutcome", "review_round"]

# Stages of DESIGN.md that later issues add; until then the KPI names them as skipped.
_NOT_BUILT_YET = ("synthesize", "match", "confirm", "fact_check", "recheck", "checklists")


class Progress(Protocol):
    """Where the round reports what it is doing (the CLI draws it on stderr)."""

    def stage(self, name: str) -> None: ...

    def rep_done(self, done: int, total: int) -> None: ...

    def tokens(self, prompt_tokens: int, completion_tokens: int) -> None: ...


class NullProgress:
    def stage(self, name: str) -> None:
        pass

    def rep_done(self, done: int, total: int) -> None:
        pass

    def tokens(self, prompt_tokens: int, completion_tokens: int) -> None:
        pass


@dataclass(frozen=True)
class ReviewOptions:
    lang: Literal["en", "zh"] = "en"
    reps: int = 1
    agentic_reps: int = 0
    block_support: int = 3
    confirm: bool = True
    fact_check: bool = True
    agent_max_steps: int = 8
    max_patch_tokens: int = 60_000
    max_shards: int = 8
    static_enabled: bool = True
    round_index: int = 1


@dataclass(frozen=True)
class RoundOutcome:
    result: RoundResult
    calls: tuple[CallRecord, ...] = ()
    pending: tuple[LLMPending, ...] = field(default=())
    """Batch mode: requests still unanswered; the result is incomplete and must not be published."""

    @property
    def complete(self) -> bool:
        return not self.pending


async def review_round(
    snapshot: PullRequestSnapshot,
    *,
    llm: LLMClient | None,
    options: ReviewOptions,
    progress: Progress | None = None,
) -> RoundOutcome:
    """Review one head of a pull request and return everything the round produced."""
    progress = progress or NullProgress()
    started = time.perf_counter()
    files = snapshot.files

    progress.stage("prepare")
    prepared = prepare_diff(
        files,
        max_patch_tokens=options.max_patch_tokens,
        estimate_tokens=estimate_tokens,
        max_shards=options.max_shards,
        generated=generated_by_attributes(snapshot.gitattributes_text),
    )

    static_report: StaticReport | None = None
    if options.static_enabled:
        progress.stage("static")
        static_report = run_static_analysis(
            _changed_python_files(snapshot), snapshot.head, lang=options.lang
        )

    outcomes: list[DiscoveryOutcome] = []
    if llm is not None and prepared.shards:
        progress.stage("discover")
        outcomes = await _discover_all(snapshot, prepared, llm, options, progress)

    llm_findings = [finding for outcome in outcomes for finding in outcome.findings]
    static_findings = list(static_report.findings) if static_report else []
    clusters = cluster_exact(llm_findings)
    candidates = [_static_support(f) for f in static_findings] + clusters

    progress.stage("gate")
    decisions = gate_findings(
        candidates, reps=max(options.reps, 1), block_support=options.block_support
    )
    reported = _report(decisions, files, options.round_index)

    calls = tuple(call for outcome in outcomes for call in outcome.calls)
    pending = tuple(p for outcome in outcomes for p in outcome.pending)
    failures = _failures(outcomes, static_report)
    kpi = _kpi(
        snapshot=snapshot,
        prepared=prepared,
        outcomes=outcomes,
        llm=llm,
        options=options,
        clusters=len(clusters),
        reported=reported,
        static_count=len(static_findings),
        calls=calls,
        failures=failures,
        wall_ms=int((time.perf_counter() - started) * 1000),
    )
    result = RoundResult(
        pr=snapshot.meta,
        round_index=options.round_index,
        reviewed_at=datetime.now(UTC),
        findings=tuple(reported),
        strengths=_strengths(outcomes),
        kpi=kpi,
        coverage=Coverage(
            reviewed_files=prepared.reviewed_paths,
            not_reviewed=tuple(
                f"{path} ({reason})" for path, reason in prepared.not_reviewed + prepared.summarized
            ),
        ),
        failures=failures,
        delta_files=snapshot.delta_files or tuple(f.path for f in files),
        full_files=tuple(f.path for f in files),
    )
    return RoundOutcome(result=result, calls=calls, pending=pending)


def _changed_python_files(snapshot: PullRequestSnapshot) -> list[ChangedPythonFile]:
    changed = []
    for file in snapshot.files:
        if file.status is FileStatus.DELETED or file.is_binary or not file.path.endswith(".py"):
            continue
        content = snapshot.head.read(file.path)
        if content is not None:
            changed.append(
                ChangedPythonFile(
                    path=file.path, content=content, changed_lines=file.changed_lines()
                )
            )
    return changed


async def _discover_all(
    snapshot: PullRequestSnapshot,
    prepared: PreparedDiff,
    llm: LLMClient,
    options: ReviewOptions,
    progress: Progress,
) -> list[DiscoveryOutcome]:
    """Every rep reviews every shard; all (rep, shard) requests run concurrently.

    Returns one outcome per rep, merged over its shards (a rep fails if any shard failed).
    """
    done = 0

    async def one_rep(rep: int) -> DiscoveryOutcome:
        nonlocal done
        shard_outcomes = await asyncio.gather(
            *(
                discover(
                    _rep_input(snapshot, prepared, shard, rep, options), llm, rep=rep, seed=rep
                )
                for shard in prepared.shards
            )
        )
        outcome = _merge_shards(shard_outcomes)
        done += 1
        progress.rep_done(done, options.reps)
        progress.tokens(
            sum(c.prompt_tokens for c in outcome.calls),
            sum(c.completion_tokens for c in outcome.calls),
        )
        return outcome

    return list(await asyncio.gather(*(one_rep(rep) for rep in range(options.reps))))


def _rep_input(
    snapshot: PullRequestSnapshot,
    prepared: PreparedDiff,
    shard: Shard,
    rep: int,
    options: ReviewOptions,
) -> DiscoveryInput:
    # Reps differ by seed and by the order in which they walk the files, not by instructions.
    paths = [f.path for f in shard.files]
    shift = rep % len(paths) if paths else 0
    in_shard = set(paths)
    others = tuple(
        f"{path} (in another part of this review)"
        for path in prepared.reviewed_paths
        if path not in in_shard
    ) + tuple(f"{path} ({note})" for path, note in prepared.summarized)
    return DiscoveryInput(
        pr=snapshot.meta,
        files=shard.files,
        lang=options.lang,
        file_order=tuple(paths[shift:] + paths[:shift]),
        other_files=others,
    )


def _merge_shards(outcomes: Sequence[DiscoveryOutcome]) -> DiscoveryOutcome:
    errors = [o.error for o in outcomes if o.error]
    return DiscoveryOutcome(
        findings=tuple(f for o in outcomes for f in o.findings),
        strengths=tuple(s for o in outcomes for s in o.strengths),
        calls=tuple(c for o in outcomes for c in o.calls),
        error="; ".join(errors) if errors else None,
        pending=tuple(p for o in outcomes for p in o.pending),
        dropped_findings=sum(o.dropped_findings for o in outcomes),
    )


def _static_support(finding: Finding) -> SupportedFinding:
    # Static findings are deterministic evidence: one analyzer, no votes needed.
    return SupportedFinding(finding, votes=1)


def _report(
    decisions: Sequence[GateDecision], files: Sequence[FileDiff], round_index: int
) -> list[ReportedFinding]:
    reported = []
    seen_ids: set[str] = set()
    for decision in decisions:
        finding = decision.finding
        finding_id = finding.fingerprint()
        if finding_id in seen_ids:
            continue
        seen_ids.add(finding_id)
        reported.append(
            ReportedFinding(
                id=finding_id,
                finding=finding,
                severity=decision.severity,
                original_severity=decision.original_severity,
                blocking=decision.blocking,
                gate_reason=decision.reason,
                votes=decision.votes,
                first_seen_round=round_index,
                anchor=anchor_to_diff(
                    finding.path, finding.line, finding.side, files, end_line=finding.end_line
                ),
            )
        )
    # Body order: blocking first, then by severity; reviewers' order within a severity.
    return sorted(reported, key=lambda r: (not r.blocking, r.severity.rank))


def _strengths(outcomes: Sequence[DiscoveryOutcome]) -> tuple[Strength, ...]:
    seen: set[str] = set()
    strengths = []
    for outcome in outcomes:
        for strength in outcome.strengths:
            key = " ".join(strength.text.lower().split())
            if key not in seen:
                seen.add(key)
                strengths.append(strength)
    return tuple(strengths)


def _failures(
    outcomes: Sequence[DiscoveryOutcome], static_report: StaticReport | None
) -> tuple[StageFailure, ...]:
    failures = [
        StageFailure(stage=f"discover[{rep}]", error=outcome.error)
        for rep, outcome in enumerate(outcomes)
        if outcome.error and not outcome.pending
    ]
    if static_report is not None:
        failures += [StageFailure(stage="static", error=error) for error in static_report.errors]
    return tuple(failures)


def _kpi(
    *,
    snapshot: PullRequestSnapshot,
    prepared: PreparedDiff,
    outcomes: Sequence[DiscoveryOutcome],
    llm: LLMClient | None,
    options: ReviewOptions,
    clusters: int,
    reported: Sequence[ReportedFinding],
    static_count: int,
    calls: Sequence[CallRecord],
    failures: Sequence[StageFailure],
    wall_ms: int,
) -> Kpi:
    ran_discovery = bool(outcomes)
    skipped = [] if ran_discovery else ["discover", "cluster"]
    if not options.static_enabled:
        skipped.insert(0, "static")
    skipped += list(_NOT_BUILT_YET)
    changed_by_path = {f.path: f.changed_lines() for f in snapshot.files}
    blocking = [r for r in reported if r.blocking]
    return Kpi(
        reps=options.reps if ran_discovery else 0,
        agentic_reps=0,
        diff_truncated=prepared.truncated,
        patch_bytes=prepared.patch_bytes if ran_discovery else 0,
        coverage=prepared.coverage if ran_discovery else 0.0,
        shards=len(prepared.shards) if ran_discovery else 0,
        discover_ok=sum(1 for o in outcomes if o.error is None and not o.pending),
        discover_fail=sum(1 for o in outcomes if o.error is not None and not o.pending),
        discover_attempts=sum(c.attempts for c in calls if c.stage == "discover"),
        clusters=clusters,
        model=llm.settings.model if llm is not None else "",
        round_index=options.round_index,
        delta_files=len(snapshot.delta_files or snapshot.files),
        full_files=len(snapshot.files),
        blocking=len(blocking),
        blocking_on_unchanged=sum(
            1 for r in blocking if r.finding.line not in changed_by_path.get(r.finding.path, ())
        ),
        static_findings=static_count,
        skipped=skipped,
        failed_stages=sorted({f.stage for f in failures}),
        llm=TokenUsage(
            calls=len(calls),
            cached_calls=sum(1 for c in calls if c.cached),
            prompt_tokens=sum(c.prompt_tokens for c in calls),
            completion_tokens=sum(c.completion_tokens for c in calls),
            cached_prompt_tokens=sum(c.cached_prompt_tokens for c in calls),
        ),
        wall_ms=wall_ms,
    )
