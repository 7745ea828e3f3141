"""The round's KPI block, from real counts, and the critical path of its model calls."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from assay.llm.client import CallRecord
from assay.model import ConfirmKpi, FactCheckKpi, Kpi, RecheckKpi, ReportedFinding, TokenUsage

__all__ = ["PHASES", "KpiInputs", "build_kpi", "critical_path_ms"]

# Stages in the order the orchestrator runs them; stages of one phase run side by side.
PHASES: tuple[frozenset[str], ...] = (
    frozenset({"discover"}),
    frozenset({"synthesize"}),
    frozenset({"confirm", "fact_check", "recheck"}),
    frozenset({"checklist"}),
)


@dataclass(frozen=True)
class KpiInputs:
    reps: int
    agentic_reps: int
    model: str
    round_index: int
    ran_discovery: bool
    discover_ok: int
    discover_fail: int
    truncated: bool
    patch_bytes: int
    coverage: float
    shards: int
    clusters: int
    synth_fail: int
    confirm: ConfirmKpi
    fact_check: FactCheckKpi
    blocking_dedup_merged: int
    delta_files: int
    full_files: int
    new_findings: int
    merged: int
    recheck: RecheckKpi
    findings: Sequence[ReportedFinding]
    static_findings: int
    skipped: Sequence[str]
    failed_stages: Sequence[str]
    calls: Sequence[CallRecord]
    tool_calls: int
    wall_ms: int


def build_kpi(inputs: KpiInputs) -> Kpi:
    blocking = [f for f in inputs.findings if f.blocking]
    calls = inputs.calls
    return Kpi(
        reps=inputs.reps if inputs.ran_discovery else 0,
        agentic_reps=inputs.agentic_reps if inputs.ran_discovery else 0,
        diff_truncated=inputs.truncated,
        patch_bytes=inputs.patch_bytes if inputs.ran_discovery else 0,
        coverage=inputs.coverage if inputs.ran_discovery else 0.0,
        shards=inputs.shards if inputs.ran_discovery else 0,
        discover_ok=inputs.discover_ok,
        discover_fail=inputs.discover_fail,
        discover_attempts=sum(c.attempts for c in calls if c.stage == "discover"),
        clusters=inputs.clusters,
        synth_fail=inputs.synth_fail,
        confirm=inputs.confirm,
        blocking_dedup_merged=inputs.blocking_dedup_merged,
        fact_check=inputs.fact_check,
        model=inputs.model,
        round_index=inputs.round_index,
        delta_files=inputs.delta_files,
        full_files=inputs.full_files,
        new_findings=inputs.new_findings,
        merged=inputs.merged,
        recheck=inputs.recheck,
        blocking=len(blocking),
        blocking_on_unchanged=sum(1 for f in blocking if not f.on_changed_line),
        static_findings=inputs.static_findings,
        skipped=list(inputs.skipped),
        failed_stages=sorted(set(inputs.failed_stages)),
        llm=TokenUsage(
            calls=len(calls),
            cached_calls=sum(1 for c in calls if c.cached),
            prompt_tokens=sum(c.prompt_tokens for c in calls),
            completion_tokens=sum(c.completion_tokens for c in calls),
            cached_prompt_tokens=sum(c.cached_prompt_tokens for c in calls),
        ),
        tool_calls=inputs.tool_calls,
        critical_path_ms=critical_path_ms(calls),
        wall_ms=inputs.wall_ms,
    )


def critical_path_ms(calls: Sequence[CallRecord]) -> int:
    """The longest chain of dependent model calls, in endpoint time.

    Phases run one after another; inside a phase, calls of one chain (one asyncio task: an
    agentic loop, a call and its re-asks) are sequential and chains are independent. So the
    critical path is the sum over phases of the longest chain's total service time.
    """
    total = 0
    for phase in PHASES:
        chains: dict[int, int] = defaultdict(int)
        for call in calls:
            if call.stage in phase:
                chains[call.chain] += call.service_ms
        total += max(chains.values(), default=0)
    return total
