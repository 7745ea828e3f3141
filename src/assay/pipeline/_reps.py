"""Scheduling the discovery reps: every rep reviews every shard, all at once."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal, Protocol

from assay.forge.base import PullRequestSnapshot
from assay.llm.client import LLMClient
from assay.pipeline.discover import DiscoveryInput, DiscoveryOutcome, discover
from assay.pipeline.prepare import PreparedDiff, Shard
from assay.tools import Toolbox

__all__ = ["RepProgress", "discover_all"]


class RepProgress(Protocol):
    def rep_done(self, done: int, total: int) -> None: ...

    def tokens(self, prompt_tokens: int, completion_tokens: int) -> None: ...


async def discover_all(
    snapshot: PullRequestSnapshot,
    prepared: PreparedDiff,
    llm: LLMClient,
    *,
    reps: int,
    agentic_reps: int,
    lang: Literal["en", "zh"],
    toolbox: Toolbox | None,
    max_steps: int,
    progress: RepProgress,
) -> list[DiscoveryOutcome]:
    """One outcome per rep, merged over its shards (a rep fails if any of its shards failed).

    The first ``agentic_reps`` reps get the toolbox (when there is one); all (rep, shard)
    requests run concurrently under the client's one concurrency bound.
    """
    done = 0

    async def one_rep(rep: int) -> DiscoveryOutcome:
        nonlocal done
        tools = toolbox if rep < agentic_reps else None
        shard_outcomes = await asyncio.gather(
            *(
                discover(
                    rep_input(snapshot, prepared, shard, rep, lang),
                    llm,
                    rep=rep,
                    seed=rep,
                    toolbox=tools,
                    max_steps=max_steps,
                )
                for shard in prepared.shards
            )
        )
        outcome = _merge_shards(shard_outcomes)
        done += 1
        progress.rep_done(done, reps)
        progress.tokens(
            sum(c.prompt_tokens for c in outcome.calls),
            sum(c.completion_tokens for c in outcome.calls),
        )
        return outcome

    return list(await asyncio.gather(*(one_rep(rep) for rep in range(reps))))


def rep_input(
    snapshot: PullRequestSnapshot,
    prepared: PreparedDiff,
    shard: Shard,
    rep: int,
    lang: Literal["en", "zh"],
) -> DiscoveryInput:
    """What one rep sees of one shard.

    Reps differ by seed and by the order in which they walk the files, never by instructions,
    so the long part of every request (instructions, metadata, diff) is one shared prefix.
    """
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
        lang=lang,
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
        tool_calls=tuple(t for o in outcomes for t in o.tool_calls),
    )
