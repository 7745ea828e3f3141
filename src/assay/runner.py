"""Reviewing a local repository end to end: snapshot → round → store.

This is the edge that wires side effects together (git, the model endpoint, the database); the
round itself (``pipeline.orchestrator.review_round``) touches none of them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from assay.config import RepoConfig, Settings, parse_repo_config
from assay.errors import ConfigError
from assay.forge.base import PullRequestSnapshot
from assay.forge.git import GitRepo
from assay.forge.local import local_snapshot
from assay.llm.batch import write_batch_requests
from assay.llm.client import LLMClient
from assay.pipeline.orchestrator import Progress, ReviewOptions, RoundOutcome, review_round
from assay.store import PullRequestKey, Store

__all__ = ["LLMMode", "LocalReview", "LocalReviewRequest", "review_local"]

LLMMode = Literal["auto", "off", "batch-export"]


@dataclass(frozen=True)
class LocalReviewRequest:
    """What to review and how; ``None`` means "the repository's config, else the default"."""

    repo: Path = Path(".")
    base: str | None = None
    head: str = "HEAD"
    pr_id: str | None = None
    lang: Literal["en", "zh"] | None = None
    reps: int | None = None
    agentic_reps: int | None = None
    block_support: int | None = None
    llm_mode: LLMMode = "auto"
    batch_file: Path | None = None
    """Where ``batch-export`` writes the pending requests."""
    no_cache: bool = False


@dataclass(frozen=True)
class LocalReview:
    outcome: RoundOutcome
    config: RepoConfig
    exported: int | None = None
    """Batch export: requests written to the batch file (the round is not complete)."""
    round_id: int | None = None

    @property
    def complete(self) -> bool:
        return self.outcome.complete


def review_local(
    request: LocalReviewRequest,
    settings: Settings,
    *,
    store: Store,
    progress: Progress | None = None,
) -> LocalReview:
    """Review ``request.head`` against ``request.base`` in a local repository.

    Raises:
        GitError, UnknownRefError: not a repository, or a ref that does not resolve.
        ConfigError: invalid ``.assay.toml`` or options.
        LLMUnreachable: a model is configured but cannot be reached.
    """
    if request.llm_mode == "batch-export" and request.batch_file is None:
        raise ConfigError("--llm batch-export needs a file: --llm batch-export FILE")
    llm_settings = settings.llm() if request.llm_mode != "off" else None
    if request.llm_mode == "batch-export" and llm_settings is None:
        raise ConfigError("batch export needs a model: set ASSAY_MODEL (and ASSAY_LLM_BASE_URL)")
    with GitRepo.open(request.repo) as repo:
        snapshot = local_snapshot(repo, base=request.base, head=request.head, pr_id=request.pr_id)
        config = parse_repo_config(snapshot.repo_config_text)
        pr_key = PullRequestKey(forge="local", repo=snapshot.identity)
        review = config.review
        reps = _first(request.reps, settings.reps, review.reps)
        options = ReviewOptions(
            lang=request.lang or review.lang,
            reps=reps,
            agentic_reps=min(
                _first(request.agentic_reps, settings.agentic_reps, review.agentic_reps), reps
            ),
            block_support=_first(
                request.block_support, settings.block_support, review.block_support
            ),
            confirm=review.confirm,
            fact_check=review.fact_check,
            agent_max_steps=review.agent_max_steps,
            max_patch_tokens=review.max_patch_tokens,
            max_shards=review.max_shards,
            static_enabled=config.static.enabled,
            round_index=store.rounds.round_index_for(pr_key, snapshot.meta.head_sha),
        )
        client = (
            LLMClient(
                llm_settings,
                store.replay_cache,
                mode="batch-export" if request.llm_mode == "batch-export" else "live",
                no_cache=request.no_cache,
            )
            if llm_settings is not None
            else None
        )
        outcome = asyncio.run(_run(snapshot, client, options, progress))
    if outcome.pending:
        assert request.batch_file is not None  # batch-export mode is the only source of pending
        exported = write_batch_requests(outcome.pending, request.batch_file)
        return LocalReview(outcome=outcome, config=config, exported=exported)
    round_id = store.rounds.save_round(pr_key, outcome.result)
    store.record_calls(round_id, outcome.calls)
    return LocalReview(outcome=outcome, config=config, round_id=round_id)


def _first(*values: int | None) -> int:
    """The first value that is set: command line, then environment, then ``.assay.toml``."""
    return next(value for value in values if value is not None)


async def _run(
    snapshot: PullRequestSnapshot,
    client: LLMClient | None,
    options: ReviewOptions,
    progress: Progress | None,
) -> RoundOutcome:
    if client is None:
        return await review_round(snapshot, llm=None, options=options, progress=progress)
    async with client:
        return await review_round(snapshot, llm=client, options=options, progress=progress)
