"""One review round, top to bottom, as DESIGN.md draws it.

prepare → static → discover → cluster → synthesize → match → (confirm ∥ fact-check ∥ recheck)
→ gate → anchor → checklists → verdict.

``review_round`` is pure orchestration: it reads the snapshot and history it is given and calls
the model through the client and tools it is given; it never calls the forge or the database.
Independent model calls run concurrently under the client's one concurrency bound, so the
round's wall time stays close to its critical path.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, Protocol

from assay.checklists import Catalog, ChecklistOutcome, dedupe_strengths, link_findings
from assay.diff.linemap import LineMap
from assay.diff.types import FileStatus
from assay.errors import LLMPending
from assay.forge.base import PullRequestSnapshot
from assay.llm.client import CallRecord, LLMClient
from assay.llm.tokens import estimate_tokens
from assay.model import (
    ClosedFinding,
    ConfirmKpi,
    Coverage,
    FactCheckKpi,
    Finding,
    Kpi,
    ReportedFinding,
    RoundResult,
    StageFailure,
)
from assay.pipeline._assemble import (
    body_order,
    carried,
    checklist_finding,
    identities,
    is_candidate,
    report,
    strengths_of,
    with_checks,
)
from assay.pipeline._kpi import KpiInputs, build_kpi
from assay.pipeline._reps import discover_all
from assay.pipeline.checklists import evaluate_checklists
from assay.pipeline.cluster import cluster_findings
from assay.pipeline.confirm import ConfirmOutcome, confirm_candidates
from assay.pipeline.discover import DiscoveryOutcome
from assay.pipeline.factcheck import FactCheckOutcome, fact_check_findings
from assay.pipeline.gate import SupportedFinding, blocking_dedup_merged, gate_findings
from assay.pipeline.match import match_findings
from assay.pipeline.prepare import generated_by_attributes, prepare_diff
from assay.pipeline.recheck import RecheckOutcome, recheck_open_findings
from assay.pipeline.synthesize import synthesize_clusters
from assay.static import ChangedPythonFile, StaticReport, run_static_analysis
from assay.tools import Toolbox, ToolCallRecord

__all__ = [
    "NullProgress",
    "Progress",
    "ReviewOptions",
    "RoundHistory",
    "RoundOutcome",
    "review_round",
]


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
class RoundHistory:
    """What earlier rounds of the pull request left open, and how their lines moved."""

    open_findings: tuple[ReportedFinding, ...] = ()
    closed: tuple[ClosedFinding, ...] = ()
    line_map: LineMap | None = None
    """Previous reviewed head → this head; ``None`` on the first round or after a rewrite."""
    delta_files: tuple[str, ...] | None = None
    """Files changed since the previous reviewed head (``None``: the whole PR)."""
    reserved_ids: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RoundOutcome:
    result: RoundResult
    calls: tuple[CallRecord, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    pending: tuple[LLMPending, ...] = field(default=())
    """Batch mode: requests still unanswered; the result is incomplete and must not be published."""

    @property
    def complete(self) -> bool:
        return not self.pending


@dataclass
class _Ledger:
    """Everything the stages spent or could not do, gathered for the KPI and the store."""

    calls: list[CallRecord] = field(default_factory=list)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    pending: list[LLMPending] = field(default_factory=list)
    failures: list[StageFailure] = field(default_factory=list)

    def add(
        self,
        *,
        calls: Sequence[CallRecord] = (),
        tool_calls: Sequence[ToolCallRecord] = (),
        pending: Sequence[LLMPending] = (),
        failures: Sequence[StageFailure] = (),
    ) -> None:
        self.calls += calls
        self.tool_calls += tool_calls
        self.pending += pending
        self.failures += failures


async def review_round(
    snapshot: PullRequestSnapshot,
    *,
    llm: LLMClient | None,
    options: ReviewOptions,
    history: RoundHistory | None = None,
    toolbox: Toolbox | None = None,
    catalogs: Sequence[Catalog] = (),
    progress: Progress | None = None,
) -> RoundOutcome:
    """Review one head of a pull request and return everything the round produced."""
    progress = progress or NullProgress()
    history = history or RoundHistory()
    started = time.perf_counter()
    ledger = _Ledger()
    files = snapshot.files
    k = options.round_index

    progress.stage("prepare")
    prepared = prepare_diff(
        files,
        max_patch_tokens=options.max_patch_tokens,
        estimate_tokens=estimate_tokens,
        max_shards=options.max_shards,
        generated=generated_by_attributes(snapshot.gitattributes_text),
    )

    # The analyzers need no model: they run in a thread while the reps are out.
    static_task: asyncio.Future[StaticReport] | None = None
    if options.static_enabled:
        progress.stage("static")
        static_task = asyncio.ensure_future(
            asyncio.to_thread(
                run_static_analysis,
                _changed_python_files(snapshot),
                snapshot.head,
                lang=options.lang,
            )
        )

    outcomes: list[DiscoveryOutcome] = []
    if llm is not None and prepared.shards:
        progress.stage("discover")
        outcomes = await discover_all(
            snapshot,
            prepared,
            llm,
            reps=options.reps,
            agentic_reps=options.agentic_reps,
            lang=options.lang,
            toolbox=toolbox,
            max_steps=options.agent_max_steps,
            progress=progress,
        )
        for rep, outcome in enumerate(outcomes):
            ledger.add(calls=outcome.calls, tool_calls=outcome.tool_calls, pending=outcome.pending)
            if outcome.error and not outcome.pending:
                ledger.add(failures=[StageFailure(stage=f"discover[{rep}]", error=outcome.error)])

    static_report = await static_task if static_task is not None else None
    if ledger.pending:  # batch export: later stages depend on answers not in yet
        return _pending(snapshot, k, ledger)
    if static_report is not None:
        ledger.add(failures=[StageFailure(stage="static", error=e) for e in static_report.errors])
    static_findings = list(static_report.findings) if static_report else []

    progress.stage("cluster")
    renames = {f.old_path: f.path for f in files if f.old_path}
    llm_findings = [finding for outcome in outcomes for finding in outcome.findings]
    clusters = cluster_findings(static_findings + llm_findings, renames=renames)
    progress.stage("synthesize")
    synthesis = await synthesize_clusters(
        clusters, llm, lang=options.lang, reps=max(options.reps, 1)
    )
    ledger.add(calls=synthesis.calls, pending=synthesis.pending)
    if ledger.pending:
        return _pending(snapshot, k, ledger)

    progress.stage("match")
    matched = match_findings(
        synthesis.findings,
        history.open_findings,
        line_map=history.line_map,
        round_index=k,
        previous_argued={
            f.id: f.argued_severity for f in history.open_findings if f.argued_severity
        },
        reserved_ids=history.reserved_ids,
    )

    progress.stage("verify")
    fresh = [(m.id, SupportedFinding(m.finding, m.candidate.votes)) for m in matched.findings]
    still_unmatched = [(f.id, carried(f)) for f in matched.unmatched_open]
    targets = [
        (fid, s) for fid, s in fresh + still_unmatched if is_candidate(s, options.block_support)
    ]
    confirm, fact_check, recheck = await _verify(
        snapshot,
        matched.unmatched_open,
        [s.finding for _, s in targets],
        static_report,
        llm,
        toolbox,
        options,
        history,
    )
    checks = {
        fid: (
            confirm.confirmations[i] if confirm is not None else None,
            fact_check.fact_checks[i] if fact_check is not None else None,
        )
        for i, (fid, _) in enumerate(targets)
    }
    for stage_outcome in (confirm, fact_check):
        if stage_outcome is not None:
            ledger.add(
                calls=stage_outcome.calls,
                tool_calls=stage_outcome.tool_calls,
                pending=stage_outcome.pending,
                failures=stage_outcome.failures,
            )
    ledger.add(calls=recheck.calls, pending=recheck.pending, failures=recheck.failures)

    if ledger.pending:
        return _pending(snapshot, k, ledger)

    progress.stage("gate")
    carried_open = [(f.id, carried(f)) for f in recheck.still_open]
    gated = [(fid, with_checks(s, checks.get(fid))) for fid, s in fresh + carried_open]
    decisions = gate_findings(
        [s for _, s in gated],
        reps=max(options.reps, 1),
        block_support=options.block_support,
        round_index=k,
        require_confirm=options.confirm,
        require_fact_check=options.fact_check,
    )
    identity_of = identities(gated, matched.findings, recheck.still_open)
    reported = [report(d, identity_of[id(d.finding)], files, history.line_map) for d in decisions]

    checklist: ChecklistOutcome | None = None
    if catalogs:
        progress.stage("checklists")
        checklist = await evaluate_checklists(
            catalogs,
            files=files,
            findings=body_order(reported),
            client=llm,
            lang=options.lang,
            head=snapshot.head,
            pr=snapshot.meta,
            analyzers_run=static_report.analyzers_run if static_report else (),
        )
        ledger.add(calls=checklist.calls, pending=checklist.pending)
        if checklist.error:
            ledger.add(failures=[StageFailure(stage="checklists", error=checklist.error)])
        reported += [
            checklist_finding(f, files, history.line_map, k) for f in checklist.new_findings
        ]
        reported = list(link_findings(reported, checklist.links))
    findings = body_order(reported)

    failures = tuple(ledger.failures)
    ran_discovery = bool(outcomes)
    kpi = build_kpi(
        KpiInputs(
            reps=options.reps,
            agentic_reps=options.agentic_reps if toolbox is not None else 0,
            model=llm.settings.model if llm is not None else "",
            round_index=k,
            ran_discovery=ran_discovery,
            discover_ok=sum(1 for o in outcomes if o.error is None and not o.pending),
            discover_fail=sum(1 for o in outcomes if o.error is not None and not o.pending),
            truncated=prepared.truncated,
            patch_bytes=prepared.patch_bytes,
            coverage=prepared.coverage,
            shards=len(prepared.shards),
            clusters=len(clusters),
            synth_fail=synthesis.synth_fail,
            confirm=confirm.kpi if confirm else ConfirmKpi(),
            fact_check=fact_check.kpi if fact_check else FactCheckKpi(),
            blocking_dedup_merged=blocking_dedup_merged(decisions),
            delta_files=len(history.delta_files) if history.delta_files is not None else len(files),
            full_files=len(files),
            new_findings=matched.new_findings,
            merged=matched.merged,
            recheck=recheck.kpi,
            findings=findings,
            static_findings=len(static_findings),
            skipped=_skipped(
                options, llm, toolbox, ran_discovery, confirm, fact_check, recheck, catalogs
            ),
            failed_stages=[f.stage for f in failures],
            calls=ledger.calls,
            tool_calls=len(ledger.tool_calls),
            wall_ms=int((time.perf_counter() - started) * 1000),
        )
    )
    notes = [f"{path}: {reason}" for path, reason in prepared.summarized]
    if checklist is not None and (note := checklist.not_evaluated_note(options.lang)):
        notes.append(note)
    result = RoundResult(
        pr=snapshot.meta,
        round_index=k,
        reviewed_at=datetime.now(UTC),
        findings=tuple(findings),
        strengths=dedupe_strengths(strengths_of(outcomes)),
        kpi=kpi,
        coverage=Coverage(
            reviewed_files=prepared.reviewed_paths,
            not_reviewed=tuple(
                f"{path} ({reason})" for path, reason in prepared.not_reviewed + prepared.summarized
            ),
            notes=tuple(notes),
        ),
        failures=failures,
        delta_files=history.delta_files or tuple(f.path for f in files),
        full_files=tuple(f.path for f in files),
        closed=recheck.cumulative_closed(history.closed),
        checklist=checklist.report if checklist is not None else None,
    )
    return RoundOutcome(
        result=result,
        calls=tuple(ledger.calls),
        tool_calls=tuple(ledger.tool_calls),
        pending=tuple(ledger.pending),
    )


def _pending(snapshot: PullRequestSnapshot, round_index: int, ledger: _Ledger) -> RoundOutcome:
    """Batch export stops at the first stage with unanswered requests: the stages after it
    would ask about inputs that are about to change (a cluster missing a rep's findings)."""
    return RoundOutcome(
        result=RoundResult(
            pr=snapshot.meta,
            round_index=round_index,
            reviewed_at=datetime.now(UTC),
            kpi=Kpi(round_index=round_index),
        ),
        calls=tuple(ledger.calls),
        tool_calls=tuple(ledger.tool_calls),
        pending=tuple(ledger.pending),
    )


async def _verify(
    snapshot: PullRequestSnapshot,
    unmatched_open: Sequence[ReportedFinding],
    targets: Sequence[Finding],
    static_report: StaticReport | None,
    llm: LLMClient | None,
    toolbox: Toolbox | None,
    options: ReviewOptions,
    history: RoundHistory,
) -> tuple[ConfirmOutcome | None, FactCheckOutcome | None, RecheckOutcome]:
    """Confirm and fact-check the blocking candidates while earlier findings are rechecked.

    The targets include earlier open findings that may still block: they are re-verified every
    round (never trusted from the round that raised them) and their verdicts simply go unused
    when recheck closes them.
    """

    async def skipped() -> None:
        return None

    confirm = (
        confirm_candidates(
            targets,
            client=llm,
            toolbox=toolbox,
            lang=options.lang,
            head=snapshot.head,
            base=snapshot.base,
            max_steps=options.agent_max_steps,
        )
        if llm is not None and options.confirm and targets
        else skipped()
    )
    fact_check = (
        fact_check_findings(
            targets,
            head=snapshot.head,
            base=snapshot.base,
            client=llm,
            toolbox=toolbox,
            lang=options.lang,
            round_index=options.round_index,
            max_steps=options.agent_max_steps,
        )
        if options.fact_check and targets
        else skipped()
    )
    recheck = recheck_open_findings(
        unmatched_open,
        line_map=history.line_map,
        head=snapshot.head,
        head_sha=snapshot.meta.head_sha,
        pr_files=snapshot.files,
        client=llm,
        static_findings_now=(
            static_report.findings if static_report and not static_report.errors else None
        ),
        round_index=options.round_index,
        lang=options.lang,
        toolbox=toolbox,
        max_steps=options.agent_max_steps,
    )
    return await asyncio.gather(confirm, fact_check, recheck)


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


def _skipped(
    options: ReviewOptions,
    llm: LLMClient | None,
    toolbox: Toolbox | None,
    ran_discovery: bool,
    confirm: ConfirmOutcome | None,
    fact_check: FactCheckOutcome | None,
    recheck: RecheckOutcome,
    catalogs: Sequence[Catalog],
) -> list[str]:
    """Stages that made no decision this round, so their KPI zeros are not read as results."""
    skipped = []
    if not options.static_enabled:
        skipped.append("static")
    if not ran_discovery:
        skipped.append("discover")
    if options.agentic_reps and toolbox is None:
        skipped.append("agentic")
    if llm is None:
        skipped.append("synthesize_llm")
    if confirm is None:
        skipped.append("confirm")
    if fact_check is None:
        skipped.append("fact_check")
    if recheck.unchecked:
        skipped.append("recheck_llm")
    if not catalogs:
        skipped.append("checklists")
    return skipped
