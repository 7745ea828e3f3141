"""Builders for the rounds the render tests need: valid models with only the relevant fields set."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from assay.diff.types import Anchor, AnchorMode, Side
from assay.model import (
    Claim,
    ClaimKind,
    Coverage,
    Finding,
    FindingSource,
    Kpi,
    PullRequestMeta,
    ReportedFinding,
    RoundResult,
    Severity,
    Strength,
)

__all__ = ["english_round", "full_sha", "reported", "round_result"]


def full_sha(prefix: str) -> str:
    """A 40-hex SHA starting with ``prefix`` (the pages show only the first 12)."""
    return (prefix + "0" * 40)[:40]


def reported(
    finding_id: str,
    severity: Severity,
    title: str,
    path: str,
    line: int,
    *,
    suggestion: str = "",
    evidence: str = "",
    category: str = "correctness",
    blocking: bool | None = None,
    votes: int = 1,
    first_seen_round: int = 1,
    anchor_mode: AnchorMode = AnchorMode.LINE,
    anchor_line: int | None = None,
    original_severity: Severity | None = None,
    gate_reason: str = "",
    checklist_items: Sequence[str] = (),
    source: FindingSource = FindingSource.LLM,
    rule: str | None = None,
    claims: Sequence[Claim] = (),
) -> ReportedFinding:
    """A reported finding; anchored on its own line unless ``anchor_mode`` says otherwise."""
    if anchor_mode in (AnchorMode.LINE, AnchorMode.NEAREST_HUNK):
        anchor = Anchor(
            mode=anchor_mode,
            path=path,
            line=anchor_line if anchor_line is not None else line,
            side=Side.RIGHT,
        )
    else:
        anchor = Anchor(mode=anchor_mode, path=path)
    return ReportedFinding(
        id=finding_id,
        finding=Finding(
            severity=original_severity or severity,
            category=category,
            title=title,
            path=path,
            line=line,
            evidence=evidence,
            suggestion=suggestion,
            source=source,
            rule=rule,
            claims=tuple(claims),
        ),
        severity=severity,
        original_severity=original_severity,
        blocking=severity.may_block if blocking is None else blocking,
        gate_reason=gate_reason,
        votes=votes,
        first_seen_round=first_seen_round,
        anchor=anchor,
        checklist_items=tuple(checklist_items),
    )


def round_result(
    findings: Sequence[ReportedFinding] = (),
    *,
    number: int | None = 1344,
    title: str = "fix: improve diagnostics",
    author: str = "octocat",
    head_ref: str = "fix/diagnostics",
    head_sha: str = full_sha("1f34a8aa9505"),
    base_sha: str = full_sha("f1a54a5f1171"),
    reviewed_at: datetime = datetime(2026, 8, 28, 7, 52, tzinfo=UTC),
    round_index: int = 1,
    strengths: Sequence[str | Strength] = (),
    kpi: Kpi | None = None,
    not_reviewed: Sequence[str] = (),
) -> RoundResult:
    """A round over a PR (or, with ``number=None``, a local branch)."""
    return RoundResult(
        pr=PullRequestMeta(
            number=number,
            title=title,
            author=author,
            base_ref="main",
            head_ref=head_ref,
            base_sha=base_sha,
            head_sha=head_sha,
            merge_base_sha=base_sha,
        ),
        round_index=round_index,
        reviewed_at=reviewed_at,
        findings=tuple(findings),
        strengths=tuple(s if isinstance(s, Strength) else Strength(text=s) for s in strengths),
        kpi=kpi if kpi is not None else Kpi(reps=5, discover_ok=5, round_index=round_index),
        coverage=Coverage(not_reviewed=tuple(not_reviewed)),
    )


def english_round(*, blocking: bool = True) -> RoundResult:
    """A small English round exercising every kind of item: blocking, downgraded, static,
    moved, file-level and body-only findings, strengths, and a file nobody reviewed.

    With ``blocking=False`` the two P0/P1 findings are left out (an LGTM round).
    """
    findings = [
        reported(
            "a0c1d2e3f4a5",
            Severity.P0,
            "Pool connections leak when a query raises, exhausting the pool",
            "app/db.py",
            88,
            category="resource-leak",
            votes=5,
            evidence=(
                "`acquire()` at app/db.py:80 takes a connection; the `except` branch at :86"
                " re-raises before `release(conn)` at :91 runs."
            ),
            suggestion="Release the connection in a `finally` block.",
            gate_reason="support 5/5 >= 3",
            checklist_items=("G.6.1.7",),
            claims=[
                Claim(
                    kind=ClaimKind.LINE_CONTAINS,
                    text="the except branch re-raises before release",
                    path="app/db.py",
                    line=86,
                    needle="raise",
                )
            ],
        ),
        reported(
            "b1c2d3e4f5a6",
            Severity.P1,
            "Pool size read from an environment variable that is never set",
            "app/pool.py",
            12,
            category="config",
            votes=4,
            first_seen_round=2,
            anchor_mode=AnchorMode.NEAREST_HUNK,
            anchor_line=30,
            evidence="POOL_SIZE is read at :12; no deployment file sets it, so the size is 0.",
            suggestion="Default to 10 when POOL_SIZE is unset.",
            gate_reason="support 4/5 >= 3",
        ),
        reported(
            "c2d3e4f5a6b7",
            Severity.P2,
            "Retry loop sleeps while holding the pool lock",
            "app/db.py",
            120,
            category="concurrency",
            votes=1,
            original_severity=Severity.P1,
            gate_reason="support 1/5 < 3",
            suggestion="Sleep after releasing the lock.",
        ),
        reported(
            "d3e4f5a6b7c8",
            Severity.P2,
            "Local variable `conn` is assigned to but never used",
            "app/db.py",
            95,
            category="unused-variable",
            source=FindingSource.STATIC,
            rule="F841",
            votes=0,
            suggestion="Remove the assignment.",
        ),
        reported(
            "e4f5a6b7c8d9",
            Severity.P3,
            "Pool docs still describe the old single-connection design",
            "docs/pool.md",
            3,
            category="docs",
            anchor_mode=AnchorMode.BODY,
            votes=2,
            suggestion="Describe the pool size and the timeout.",
        ),
        reported(
            "f5a6b7c8d9e0",
            Severity.P3,
            "Binary fixture added without saying how it was generated",
            "tests/fixtures/pool.bin",
            1,
            category="tests",
            anchor_mode=AnchorMode.FILE,
            votes=1,
            suggestion="Add the command that generates it to tests/fixtures/README.md.",
        ),
    ]
    if not blocking:
        findings = findings[2:]
    return round_result(
        findings,
        number=42,
        title="Add connection pooling",
        author="octocat",
        head_ref="feature/pool",
        round_index=3,
        strengths=[
            "The pool is created once per process and closed in the shutdown hook.",
            Strength(text="Timeouts are configurable per query", path="app/db.py", line=40),
        ],
        kpi=Kpi(
            reps=5,
            discover_ok=5,
            round_index=3,
            delta_files=2,
            full_files=4,
            blocking=2 if blocking else 0,
        ),
        not_reviewed=["vendor/pool.min.js"],
    )
