"""Builders for the rounds tests: real git repositories, findings, line maps between heads."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.diff import parse_unified_diff
from assay.diff.linemap import LineMap, build_line_map
from assay.diff.types import Anchor, AnchorMode, Side
from assay.forge.git import GitRepo
from assay.llm import LLMSettings
from assay.model import Claim, Finding, FindingSource, ReportedFinding, Severity
from assay.pipeline.gate import SupportedFinding
from assay.testing import ScriptedLLMServer

__all__ = [
    "Repo",
    "lines_text",
    "reported",
    "settings_for",
    "supported",
]


class Repo:
    """A git repository in a temporary directory, edited file by file and committed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *arguments: str) -> str:
        done = subprocess.run(
            ["git", *arguments], cwd=self.path, check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    def write(self, relative: str, content: str) -> None:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")

    def read(self, relative: str) -> str:
        return (self.path / relative).read_text(encoding="utf-8")

    def remove(self, relative: str) -> None:
        self.git("rm", "-q", "--", relative)

    def move(self, old: str, new: str) -> None:
        self.git("mv", "--", old, new)

    def commit(self, message: str = "change") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def line_map(self, old: str, new: str) -> LineMap:
        """The line map old → new, from the real ``GitRepo.diff``."""
        with GitRepo.open(self.path) as repo:
            return build_line_map(parse_unified_diff(repo.diff(old, new)))


def lines_text(count: int, prefix: str = "line") -> str:
    """``count`` distinct lines, ``<prefix> 1`` … (a file whose lines are easy to follow)."""
    return "".join(f"{prefix} {number}\n" for number in range(1, count + 1))


def reported(
    finding_id: str,
    title: str,
    path: str,
    line: int,
    *,
    severity: Severity = Severity.P2,
    end_line: int | None = None,
    evidence: str = "",
    category: str = "correctness",
    votes: int = 3,
    first_seen_round: int = 1,
    source: FindingSource = FindingSource.LLM,
    rule: str | None = None,
    claims: Sequence[Claim] = (),
    blocking: bool = False,
) -> ReportedFinding:
    """An earlier round's finding, anchored on its own line."""
    return ReportedFinding(
        id=finding_id,
        finding=Finding(
            severity=severity,
            category=category,
            title=title,
            path=path,
            line=line,
            end_line=end_line,
            evidence=evidence,
            source=source,
            rule=rule,
            claims=tuple(claims),
        ),
        severity=severity,
        blocking=blocking,
        votes=votes,
        first_seen_round=first_seen_round,
        anchor=Anchor(mode=AnchorMode.LINE, path=path, line=line, side=Side.RIGHT),
    )


def supported(
    title: str,
    path: str,
    line: int,
    *,
    severity: Severity = Severity.P2,
    votes: int = 3,
    evidence: str = "",
    category: str = "correctness",
    source: FindingSource = FindingSource.LLM,
    rule: str | None = None,
) -> SupportedFinding:
    """A finding of the current round with its votes (the match input)."""
    return SupportedFinding(
        Finding(
            severity=severity,
            category=category,
            title=title,
            path=path,
            line=line,
            evidence=evidence,
            source=source,
            rule=rule,
        ),
        votes=votes,
    )


def settings_for(server: ScriptedLLMServer, **overrides: Any) -> LLMSettings:
    """Settings for the scripted server: no backoff, one re-ask, short timeout."""
    values: dict[str, Any] = {
        "base_url": server.base_url,
        "model": "assay-test",
        "backoff_base_s": 0.0,
        "transport_retries": 1,
        "reasks": 1,
        "timeout_s": 5.0,
        "max_tokens": 1000,
    }
    values.update(overrides)
    return LLMSettings(**values)
