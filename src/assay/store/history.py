"""What a new round needs to know about a pull request's earlier rounds (read-only queries).

Everything is derived from what each round stored: its whole ``RoundResult`` (``rounds.result``)
and its findings (``findings``). A round's ``findings`` hold every finding open at its head
(found again, new, or carried by the recheck) and its ``closed`` list is cumulative, so the
latest round before round k alone says what is open and what was closed before k.

Example::

    prior = prior_round(engine, key, before_round=3)
    if prior is not None and repo.commit_exists(prior.head_sha):
        line_map = build_line_map(parse_unified_diff(repo.diff(prior.head_sha, head_sha)))
    open_findings = prior.open_findings if prior else ()
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from assay.model import ClosedFinding, ReportedFinding, RoundResult
from assay.store.rounds import PullRequestKey
from assay.store.schema import FindingRow, PullRequestRow, RoundRow, as_utc

__all__ = [
    "PriorRound",
    "closed_before",
    "known_pull_requests",
    "open_findings_before",
    "previous_reviewed_head",
    "prior_round",
    "used_finding_ids",
]


@dataclass(frozen=True)
class PriorRound:
    """The latest stored round before a given one."""

    round_index: int
    head_sha: str
    base_sha: str
    reviewed_at: datetime
    result: RoundResult

    @property
    def open_findings(self) -> tuple[ReportedFinding, ...]:
        """Findings open at its head, located at its head (the match and recheck inputs)."""
        return self.result.findings

    @property
    def closed(self) -> tuple[ClosedFinding, ...]:
        """Every finding closed up to and including that round, newest first."""
        return self.result.closed


def prior_round(engine: Engine, pr: PullRequestKey, *, before_round: int) -> PriorRound | None:
    """The latest stored round of ``pr`` numbered below ``before_round``.

    A rerun of round k (same head) therefore sees round k-1, never its own earlier result.

    Args:
        engine: The store's engine.
        pr: The pull request.
        before_round: The round being reviewed.

    Returns:
        The round, or ``None`` when the pull request has no earlier round.
    """
    with Session(engine) as session:
        row = session.scalars(
            select(RoundRow)
            .join(PullRequestRow, PullRequestRow.id == RoundRow.pr_id)
            .where(PullRequestRow.key == pr.key, RoundRow.round_index < before_round)
            .order_by(RoundRow.round_index.desc())
            .limit(1)
        ).first()
        if row is None:
            return None
        return PriorRound(
            round_index=row.round_index,
            head_sha=row.head_sha,
            base_sha=row.base_sha,
            reviewed_at=as_utc(row.created_at),
            result=RoundResult.model_validate(row.result),
        )


def previous_reviewed_head(engine: Engine, pr: PullRequestKey, *, before_round: int) -> str | None:
    """The head sha of the latest round before ``before_round`` (``None``: none).

    Whether that commit still exists (a force-push may have dropped it) is the caller's
    question for its repository (``GitRepo.commit_exists``).
    """
    with Session(engine) as session:
        return session.scalars(
            select(RoundRow.head_sha)
            .join(PullRequestRow, PullRequestRow.id == RoundRow.pr_id)
            .where(PullRequestRow.key == pr.key, RoundRow.round_index < before_round)
            .order_by(RoundRow.round_index.desc())
            .limit(1)
        ).first()


def open_findings_before(
    engine: Engine, pr: PullRequestKey, *, before_round: int
) -> tuple[ReportedFinding, ...]:
    """The PR's open findings as of the latest round before ``before_round`` (``()``: none)."""
    prior = prior_round(engine, pr, before_round=before_round)
    return prior.open_findings if prior is not None else ()


def closed_before(
    engine: Engine, pr: PullRequestKey, *, before_round: int
) -> tuple[ClosedFinding, ...]:
    """The cumulative closed list as of the latest round before ``before_round``, newest first."""
    prior = prior_round(engine, pr, before_round=before_round)
    return prior.closed if prior is not None else ()


def used_finding_ids(engine: Engine, pr: PullRequestKey, *, before_round: int) -> frozenset[str]:
    """Every finding id the PR used in rounds before ``before_round`` (reported or closed).

    A new finding must not take one of them (``match_findings(reserved_ids=…)``): an id names
    one defect for the life of the pull request.
    """
    with Session(engine) as session:
        reported = session.scalars(
            select(FindingRow.finding_id)
            .join(RoundRow, RoundRow.id == FindingRow.round_id)
            .join(PullRequestRow, PullRequestRow.id == RoundRow.pr_id)
            .where(PullRequestRow.key == pr.key, RoundRow.round_index < before_round)
            .distinct()
        ).all()
    closed = closed_before(engine, pr, before_round=before_round)
    return frozenset(reported) | {finding.id for finding in closed}


def known_pull_requests(engine: Engine) -> tuple[str, ...]:
    """The keys of every pull request with stored rounds, sorted (for "no such PR" messages)."""
    with Session(engine) as session:
        keys = session.scalars(
            select(PullRequestRow.key)
            .join(RoundRow, RoundRow.pr_id == PullRequestRow.id)
            .distinct()
            .order_by(PullRequestRow.key)
        ).all()
    return tuple(keys)
