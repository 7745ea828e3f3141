"""Builders shared by the checklist tests: diffs, findings, PR metadata, git repositories."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assay.diff.types import (
    Anchor,
    AnchorMode,
    DiffLine,
    FileDiff,
    FileStatus,
    Hunk,
    LineKind,
    Side,
)
from assay.forge.base import PullRequestSnapshot
from assay.forge.git import GitRepo
from assay.forge.local import local_snapshot
from assay.llm import LLMSettings
from assay.model import Finding, FindingSource, PullRequestMeta, ReportedFinding, Severity
from assay.testing import ChatRequest, ScriptedLLMServer

_ASKED_IDS = re.compile(r"one result for each of these \d+ item ids: (?P<ids>.+)\.$", re.MULTILINE)

DOCS = Path(__file__).resolve().parents[2] / "docs"
RTP_EXAMPLE = DOCS / "examples" / "rtp-llm-checklist.toml"


def changed_file(
    path: str,
    *,
    added: int = 3,
    removed: int = 0,
    status: FileStatus = FileStatus.MODIFIED,
    start: int = 10,
) -> FileDiff:
    """A file diff with ``added`` added lines from head line ``start`` (and ``removed`` lines)."""
    lines = [
        DiffLine(kind=LineKind.REMOVED, old_line=start + n, new_line=None, text=f"old {n}")
        for n in range(removed)
    ] + [
        DiffLine(kind=LineKind.ADDED, old_line=None, new_line=start + n, text=f"new {n}")
        for n in range(added)
    ]
    if status is FileStatus.DELETED:
        lines = [
            DiffLine(kind=LineKind.REMOVED, old_line=1 + n, new_line=None, text=f"old {n}")
            for n in range(max(removed, 1))
        ]
    hunk = Hunk(
        old_start=start if status is not FileStatus.ADDED else 0,
        old_count=sum(1 for line in lines if line.kind is LineKind.REMOVED),
        new_start=start if status is not FileStatus.DELETED else 0,
        new_count=sum(1 for line in lines if line.kind is LineKind.ADDED),
        lines=tuple(lines),
    )
    return FileDiff(path=path, status=status, hunks=(hunk,))


def pr_meta(
    description: str = "Adds a cache.\n\nWhy: the service recomputes it.",
) -> PullRequestMeta:
    return PullRequestMeta(
        number=7,
        title="Add a cache",
        author="dev",
        description=description,
        base_ref="main",
        head_ref="feature",
        base_sha="a" * 40,
        head_sha="b" * 40,
        merge_base_sha="a" * 40,
    )


def reported(
    finding_id: str,
    title: str,
    path: str,
    line: int,
    *,
    severity: Severity = Severity.P2,
    evidence: str = "",
    suggestion: str = "",
    rule: str | None = None,
) -> ReportedFinding:
    source = FindingSource.STATIC if rule is not None else FindingSource.LLM
    return ReportedFinding(
        id=finding_id,
        finding=Finding(
            severity=severity,
            category="correctness",
            title=title,
            path=path,
            line=line,
            evidence=evidence,
            suggestion=suggestion,
            source=source,
            rule=rule,
        ),
        severity=severity,
        anchor=Anchor(mode=AnchorMode.LINE, path=path, line=line, side=Side.RIGHT),
    )


class DictReader:
    """A ``RevisionReader`` over a dict (for head reads in unit tests of pure checks)."""

    def __init__(self, files: dict[str, str] | None = None) -> None:
        self._files = files or {}

    def read(self, path: str) -> bytes | None:
        text = self._files.get(path)
        return None if text is None else text.encode("utf-8")

    def exists(self, path: str) -> bool:
        return path in self._files

    def list_files(self) -> Sequence[str]:
        return sorted(self._files)


def settings_for(server: ScriptedLLMServer, **overrides: Any) -> LLMSettings:
    values: dict[str, Any] = {
        "base_url": server.base_url,
        "model": "assay-test",
        "backoff_base_s": 0.0,
        "transport_retries": 0,
        "reasks": 1,
        "timeout_s": 5.0,
        "max_tokens": 4000,
    }
    values.update(overrides)
    return LLMSettings(**values)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def write_files(repo: Path, files: dict[str, str | None]) -> None:
    for path, content in files.items():
        target = repo / path
        if content is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")


def make_pr_repo(
    root: Path,
    base: dict[str, str | None],
    head: dict[str, str | None],
    *,
    message: str = "Change things\n\nBecause they needed changing.",
) -> Path:
    """A repository whose ``main`` holds ``base`` and whose ``feature`` applies ``head``."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_files(repo, base)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    write_files(repo, head)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return repo


@contextmanager
def snapshot_of(repo: Path) -> Iterator[PullRequestSnapshot]:
    """The local pull request ``feature`` into ``main``."""
    with GitRepo.open(repo) as opened:
        yield local_snapshot(opened, base="main", head="feature")


def asked_ids(request: ChatRequest) -> list[str]:
    """The item ids a checklist request asks about (from its first user message)."""
    first_user = next(m for m in request.messages if m.get("role") == "user")
    match = _ASKED_IDS.search(str(first_user["content"]))
    assert match is not None
    return match["ids"].split(", ")
