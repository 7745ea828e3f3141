"""Pull requests and their rounds: round numbering, saving and loading RoundResults."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, delete, func, select
from sqlalchemy.orm import Session

from assay.model import RoundResult
from assay.store.schema import FindingRow, PullRequestRow, RoundRow, as_utc

__all__ = ["PullRequestKey", "RoundStore", "RoundSummary"]


@dataclass(frozen=True)
class PullRequestKey:
    """Who owns a list of rounds: ``github:owner/repo#12`` or ``local:/path/to/repo@branch``."""

    forge: str
    repo: str
    number: int | None = None
    branch: str | None = None

    @property
    def key(self) -> str:
        if self.number is not None:
            return f"{self.forge}:{self.repo}#{self.number}"
        return f"{self.forge}:{self.repo}@{self.branch or 'HEAD'}"


@dataclass(frozen=True)
class RoundSummary:
    round_index: int
    head_sha: str
    base_sha: str
    verdict: str
    findings: int
    blocking: int
    created_at: datetime


class RoundStore:
    """Rounds of pull requests in the store. Round k is the k-th distinct head reviewed."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def round_index_for(self, pr: PullRequestKey, head_sha: str) -> int:
        """The round number a review of ``head_sha`` gets: its old number on a rerun, else next."""
        with Session(self._engine) as session:
            pr_id = self._pr_id(session, pr)
            if pr_id is None:
                return 1
            existing = session.scalar(
                select(RoundRow.round_index).where(
                    RoundRow.pr_id == pr_id, RoundRow.head_sha == head_sha
                )
            )
            if existing is not None:
                return existing
            latest = session.scalar(
                select(func.max(RoundRow.round_index)).where(RoundRow.pr_id == pr_id)
            )
            return (latest or 0) + 1

    def save_round(self, pr: PullRequestKey, result: RoundResult) -> int:
        """Store ``result`` (replacing an earlier review of the same head); returns the row id."""
        now = datetime.now(UTC)
        with Session(self._engine) as session, session.begin():
            pr_id = self._pr_id(session, pr)
            if pr_id is None:
                row = PullRequestRow(
                    key=pr.key, forge=pr.forge, repo=pr.repo, number=pr.number, created_at=now
                )
                session.add(row)
                session.flush()
                pr_id = row.id
            old = session.scalar(
                select(RoundRow).where(
                    RoundRow.pr_id == pr_id, RoundRow.head_sha == result.pr.head_sha
                )
            )
            if old is not None:
                session.execute(delete(FindingRow).where(FindingRow.round_id == old.id))
                old.result = result.model_dump(mode="json")
                old.verdict = result.verdict.value
                old.base_sha = result.pr.base_sha
                old.created_at = now
                round_row = old
            else:
                round_row = RoundRow(
                    pr_id=pr_id,
                    round_index=result.round_index,
                    head_sha=result.pr.head_sha,
                    base_sha=result.pr.base_sha,
                    verdict=result.verdict.value,
                    result=result.model_dump(mode="json"),
                    created_at=now,
                )
                session.add(round_row)
            session.flush()
            session.add_all(
                FindingRow(
                    round_id=round_row.id,
                    finding_id=reported.id,
                    severity=reported.severity.value,
                    original_severity=(
                        reported.original_severity.value if reported.original_severity else None
                    ),
                    blocking=reported.blocking,
                    source=reported.finding.source.value,
                    rule=reported.finding.rule,
                    path=reported.finding.path,
                    line=reported.finding.line,
                    title=reported.finding.title,
                    votes=reported.votes,
                    first_seen_round=reported.first_seen_round,
                    data=reported.model_dump(mode="json"),
                )
                for reported in result.findings
            )
            return round_row.id

    def list_rounds(self, pr: PullRequestKey) -> list[RoundSummary]:
        with Session(self._engine) as session:
            pr_id = self._pr_id(session, pr)
            if pr_id is None:
                return []
            rows = session.scalars(
                select(RoundRow).where(RoundRow.pr_id == pr_id).order_by(RoundRow.round_index)
            ).all()
            summaries = []
            for row in rows:
                result = RoundResult.model_validate(row.result)
                summaries.append(
                    RoundSummary(
                        round_index=row.round_index,
                        head_sha=row.head_sha,
                        base_sha=row.base_sha,
                        verdict=row.verdict,
                        findings=len(result.findings),
                        blocking=len(result.blocking),
                        created_at=as_utc(row.created_at),
                    )
                )
            return summaries

    def load_round(self, pr: PullRequestKey, round_index: int) -> RoundResult | None:
        with Session(self._engine) as session:
            pr_id = self._pr_id(session, pr)
            if pr_id is None:
                return None
            data = session.scalar(
                select(RoundRow.result).where(
                    RoundRow.pr_id == pr_id, RoundRow.round_index == round_index
                )
            )
            return None if data is None else RoundResult.model_validate(data)

    def round_id(self, pr: PullRequestKey, head_sha: str) -> int | None:
        with Session(self._engine) as session:
            pr_id = self._pr_id(session, pr)
            if pr_id is None:
                return None
            return session.scalar(
                select(RoundRow.id).where(RoundRow.pr_id == pr_id, RoundRow.head_sha == head_sha)
            )

    @staticmethod
    def _pr_id(session: Session, pr: PullRequestKey) -> int | None:
        return session.scalar(select(PullRequestRow.id).where(PullRequestRow.key == pr.key))
