"""Reviewing a local repository end to end: snapshot + history → round → store.

This is the edge that wires side effects together (git, the model endpoint, the repository
tools, the database); the round itself (``pipeline.orchestrator.review_round``) touches none
of them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from assay.checklists import Catalog, resolve_catalogs
from assay.config import RepoConfig, Settings, parse_repo_config
from assay.diff import parse_unified_diff
from assay.diff.linemap import build_line_map
from assay.errors import ConfigError
from assay.forge.base import PullRequestSnapshot
from assay.forge.git import GitRepo
from assay.forge.local import local_snapshot
from assay.llm.batch import write_batch_requests
from assay.llm.client import LLMClient
from assay.pipeline.orchestrator import (
    Progress,
    ReviewOptions,
    RoundHistory,
    RoundOutcome,
    review_round,
)
from assay.store import PullRequestKey, Store
from assay.store.history import prior_round, used_finding_ids
from assay.tools import Toolbox, Workspace

__all__ = ["LLMMode", "LocalReview", "LocalReviewRequest", "review_local"]

LLMMode = Literal["auto", "off", "batch-export"]


@dataclass(frozen=True)
class LocalReviewRequest:
    """What to review and how; ``None`` means "the environment, else the repository's config,
    else the default"."""

    repo: Path = Path(".")
    base: str | None = None
    head: str = "HEAD"
    pr_id: str | None = None
    lang: Literal["en", "zh"] | None = None
    reps: int | None = None
    agentic_reps: int | None = None
    block_support: int | None = None
    confirm: bool | None = None
    fact_check: bool | None = None
    llm_mode: LLMMode = "auto"
    batch_file: Path | None = None
    """Where ``batch-export`` writes the pending requests."""
    no_cache: bool = False


@dataclass(frozen=True)
class LocalReview:
    outcome: RoundOutcome
    config: RepoConfig
    pr_key: PullRequestKey
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
        ConfigError: invalid ``.assay.toml``, checklist files or options.
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
        round_index = store.rounds.round_index_for(pr_key, snapshot.meta.head_sha)
        options = _options(request, settings, config, round_index)
        history = _history(repo, store, pr_key, snapshot, round_index)
        catalogs = (
            resolve_catalogs(config.checklists, snapshot.base) if config.checklists.enabled else ()
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
        # The checkout for tools is made on the first tool call only (and removed after).
        with Workspace(
            repo, head=snapshot.meta.head_sha, base=snapshot.meta.merge_base_sha
        ) as workspace:
            toolbox = Toolbox(workspace) if client is not None else None
            outcome = asyncio.run(
                _run(snapshot, client, options, history, toolbox, catalogs, progress)
            )
    if outcome.pending:
        assert request.batch_file is not None  # batch-export mode is the only source of pending
        exported = write_batch_requests(outcome.pending, request.batch_file)
        return LocalReview(outcome=outcome, config=config, pr_key=pr_key, exported=exported)
    round_id = store.rounds.save_round(pr_key, outcome.result)
    store.record_calls(round_id, outcome.calls)
    store.record_tool_calls(round_id, outcome.tool_calls)
    return LocalReview(outcome=outcome, config=config, pr_key=pr_key, round_id=round_id)


def _options(
    request: LocalReviewRequest, settings: Settings, config: RepoConfig, round_index: int
) -> ReviewOptions:
    review = config.review
    reps = _first(request.reps, settings.reps, review.reps)
    return ReviewOptions(
        lang=request.lang or review.lang,
        reps=reps,
        agentic_reps=min(
            _first(request.agentic_reps, settings.agentic_reps, review.agentic_reps), reps
        ),
        block_support=_first(request.block_support, settings.block_support, review.block_support),
        confirm=review.confirm if request.confirm is None else request.confirm,
        fact_check=review.fact_check if request.fact_check is None else request.fact_check,
        agent_max_steps=review.agent_max_steps,
        max_patch_tokens=review.max_patch_tokens,
        max_shards=review.max_shards,
        static_enabled=config.static.enabled,
        round_index=round_index,
    )


def _history(
    repo: GitRepo,
    store: Store,
    pr_key: PullRequestKey,
    snapshot: PullRequestSnapshot,
    round_index: int,
) -> RoundHistory:
    """Open findings of the previous round, and how lines moved since its head.

    After a force-push that dropped the previous head, there is no line map: the round is a
    full review (``delta_files`` = every file) and recheck cannot shortcut on unchanged lines.
    """
    prior = prior_round(store.engine, pr_key, before_round=round_index)
    if prior is None:
        return RoundHistory()
    reserved = used_finding_ids(store.engine, pr_key, before_round=round_index)
    if not repo.commit_exists(prior.head_sha):
        return RoundHistory(
            open_findings=prior.open_findings, closed=prior.closed, reserved_ids=reserved
        )
    delta = parse_unified_diff(repo.diff(prior.head_sha, snapshot.meta.head_sha))
    return RoundHistory(
        open_findings=prior.open_findings,
        closed=prior.closed,
        line_map=build_line_map(delta),
        delta_files=tuple(f.path for f in delta),
        reserved_ids=reserved,
    )


def _first(*values: int | None) -> int:
    """The first value that is set: command line, then environment, then ``.assay.toml``."""
    return next(value for value in values if value is not None)


async def _run(
    snapshot: PullRequestSnapshot,
    client: LLMClient | None,
    options: ReviewOptions,
    history: RoundHistory,
    toolbox: Toolbox | None,
    catalogs: tuple[Catalog, ...],
    progress: Progress | None,
) -> RoundOutcome:
    async def go() -> RoundOutcome:
        return await review_round(
            snapshot,
            llm=client,
            options=options,
            history=history,
            toolbox=toolbox,
            catalogs=catalogs,
            progress=progress,
        )

    if client is None:
        return await go()
    async with client:
        return await go()
