"""Readers for public code-review benchmarks, so the harness can run on their pull requests.

**AACR-Bench** (``alibaba/aacr-bench``, ``dataset/positive_samples.json``): a JSON list of pull
requests, each::

    {"githubPrUrl": "https://github.com/<owner>/<name>/pull/<n>",
     "source_commit": "<sha>",            # the base the PR is compared against
     "target_commit": "<sha>",            # the reviewed head
     "project_main_language": "C++", "change_line_count": 862, "category": "Bug Fix",
     "comments": [{"path": "src/a.cpp", "from_line": 1123, "to_line": 1126, "side": "right",
                   "category": "Code Defect", "note": "…", "is_ai_comment": true,
                   "source_model": "…", "context": "Diff Level"}]}

Comment categories are ``Code Defect``, ``Maintainability and Readability``, ``Performance`` and
``Security Vulnerability`` (mapped onto Assay's by ``matcher.canonical_category``); there is no
severity, so these defects never count as blocking-worthy. ``side`` is ``left`` (base lines) or
``right`` (head lines). A few comments have ``from_line > to_line``; the range is read as the
lines between the two.

**Martian Code Review Bench** (``withmartian/code-review-benchmark``,
``offline/golden_comments/<project>.json``): a JSON list of pull requests, each::

    {"pr_title": "…", "url": "https://github.com/<owner>/<name>/pull/<n>",
     "original_url": "…",                 # optional: the upstream PR it was copied from
     "comments": [{"comment": "…", "severity": "Critical|High|Medium|Low"}]}

Golden comments have **no file and no line**: only the LLM judge can match them. Severities map
Critical → P0, High → P1, Medium → P2, Low → P3.

Both readers are strict about what they use (required keys, types, known enum values) and
ignore keys they do not use, so a benchmark that adds a field still loads. Each pull request
becomes an :class:`ExternalPullRequest`; :func:`external_case` turns one into a case over a local
clone (network access is the user's: the harness never fetches).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.errors import ConfigError
from assay.eval.cases import EvalCase, RepositorySource, TruthDefect
from assay.model import Severity, Side

__all__ = [
    "ExternalPullRequest",
    "external_case",
    "read_aacr_samples",
    "read_martian_golden",
]

_PR_URL = re.compile(r"^https?://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/pull/(\d+)/?$")
_SHA = re.compile(r"^[0-9a-fA-F]{7,64}$")
_MARTIAN_SEVERITY = {
    "critical": Severity.P0,
    "high": Severity.P1,
    "medium": Severity.P2,
    "low": Severity.P3,
}


class ExternalPullRequest(BaseModel):
    """A benchmark pull request: where it lives and its known defects."""

    model_config = ConfigDict(frozen=True)

    id: str
    """``<owner>__<name>@<head sha 7>`` (AACR) or ``<owner>__<name>#<number>`` (Martian)."""
    benchmark: Literal["aacr-bench", "martian"]
    repo: str
    """``owner/name`` on GitHub."""
    number: int
    url: str
    title: str = ""
    language: str = "unknown"
    base: str | None = None
    """Base commit; ``None``: the repository's default branch."""
    head: str
    """Head commit, or ``refs/pull/<n>/head`` when the benchmark gives no SHA."""
    defects: tuple[TruthDefect, ...]


class _AacrComment(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    path: str = Field(min_length=1)
    from_line: int = Field(ge=1)
    to_line: int = Field(ge=1)
    side: Literal["left", "right"]
    category: str = Field(min_length=1)
    note: str


class _AacrRecord(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    githubPrUrl: str  # the benchmark's key, camel case
    source_commit: str
    target_commit: str
    project_main_language: str = "unknown"
    category: str = ""
    comments: list[_AacrComment]


class _MartianComment(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    comment: str = Field(min_length=1)
    severity: str
    category: str | None = None


class _MartianRecord(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    pr_title: str
    url: str
    comments: list[_MartianComment]


def read_aacr_samples(source: Path | str) -> list[ExternalPullRequest]:
    """Read AACR-Bench's ``positive_samples.json``.

    Args:
        source: The file, or its JSON text.

    Returns:
        One pull request per record, in file order.

    Raises:
        ConfigError: Not a JSON list, or a record that breaks the format (naming the record).
    """
    records = _json_list(source, "AACR-Bench samples")
    pulls = []
    for index, raw in enumerate(records):
        where = f"AACR-Bench record {index}"
        try:
            record = _AacrRecord.model_validate(raw)
        except ValidationError as error:
            raise ConfigError(f"{where}: {_first_error(error)}") from None
        owner, name, number = _parse_pr_url(record.githubPrUrl, where)
        for label, sha in (
            ("source_commit", record.source_commit),
            ("target_commit", record.target_commit),
        ):
            if not _SHA.match(sha):
                raise ConfigError(f"{where}: {label} {sha!r} is not a commit SHA")
        defects = tuple(
            TruthDefect(
                path=comment.path.strip().lstrip("/"),
                line_start=min(comment.from_line, comment.to_line),
                line_end=max(comment.from_line, comment.to_line),
                category=comment.category,
                severity=None,
                description=comment.note.strip(),
                side=Side.LEFT if comment.side == "left" else Side.RIGHT,
            )
            for comment in record.comments
        )
        pulls.append(
            ExternalPullRequest(
                id=f"{owner}__{name}@{record.target_commit[:7]}",
                benchmark="aacr-bench",
                repo=f"{owner}/{name}",
                number=number,
                url=record.githubPrUrl,
                title=record.category,
                language=record.project_main_language,
                base=record.source_commit,
                head=record.target_commit,
                defects=defects,
            )
        )
    return pulls


def read_martian_golden(source: Path | str) -> list[ExternalPullRequest]:
    """Read one Martian golden-comments file (``offline/golden_comments/<project>.json``).

    Args:
        source: The file, or its JSON text.

    Returns:
        One pull request per record, its defects without location.

    Raises:
        ConfigError: Not a JSON list, a bad URL, or an unknown severity (naming the record).
    """
    records = _json_list(source, "Martian golden comments")
    pulls = []
    for index, raw in enumerate(records):
        where = f"Martian record {index}"
        try:
            record = _MartianRecord.model_validate(raw)
        except ValidationError as error:
            raise ConfigError(f"{where}: {_first_error(error)}") from None
        owner, name, number = _parse_pr_url(record.url, where)
        defects = []
        for position, comment in enumerate(record.comments):
            severity = _MARTIAN_SEVERITY.get(comment.severity.strip().lower())
            if severity is None:
                raise ConfigError(
                    f"{where}, comment {position}: unknown severity {comment.severity!r} "
                    f"(expected one of {', '.join(s.capitalize() for s in _MARTIAN_SEVERITY)})"
                )
            defects.append(
                TruthDefect(
                    category=comment.category or "correctness",
                    severity=severity,
                    description=comment.comment.strip(),
                )
            )
        pulls.append(
            ExternalPullRequest(
                id=f"{owner}__{name}#{number}",
                benchmark="martian",
                repo=f"{owner}/{name}",
                number=number,
                url=record.url,
                title=record.pr_title,
                head=f"refs/pull/{number}/head",
                defects=tuple(defects),
            )
        )
    return pulls


def external_case(pull: ExternalPullRequest, repos_dir: Path) -> EvalCase:
    """A case reviewing ``pull`` in a local clone at ``repos_dir/<owner>/<name>``.

    The clone must hold both commits (for Martian, fetch ``refs/pull/<n>/head``); the harness
    never fetches.

    Args:
        pull: A benchmark pull request.
        repos_dir: Where clones live.

    Returns:
        The case (named by ``pull.id``).
    """
    owner, name = pull.repo.split("/", 1)
    return EvalCase(
        name=pull.id,
        title=pull.title,
        description="",
        language=pull.language,
        defects=pull.defects,
        source=RepositorySource(repo=repos_dir / owner / name, base=pull.base, head=pull.head),
    )


def _json_list(source: Path | str, what: str) -> list[Any]:
    text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ConfigError(f"{what}: invalid JSON: {error}") from None
    if not isinstance(data, list):
        raise ConfigError(f"{what}: expected a JSON list, got {type(data).__name__}")
    return data


def _parse_pr_url(url: str, where: str) -> tuple[str, str, int]:
    match = _PR_URL.match(url.strip())
    if match is None:
        raise ConfigError(f"{where}: {url!r} is not a GitHub pull request URL")
    return match.group(1), match.group(2), int(match.group(3))


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])
