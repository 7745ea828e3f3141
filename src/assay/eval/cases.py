"""Benchmark cases: what a case is on disk and how it is loaded.

A case is a directory ``<name>/`` holding:

- ``case.toml``: the pull request's ``title`` and ``description`` (what a reviewer sees as PR
  metadata), its ``language``, and where the code comes from. Either a recipe (the default)::

      title = "Add user search"
      description = "Searches users by name."
      language = "python"
      delete = ["old_module.py"]        # optional: files the pull request removes

  with the files at the base commit under ``base/`` and the files the pull request adds or
  changes under ``head/`` (an overlay: ``head/`` holds only what differs); or an existing
  repository::

      repo = "/path/to/clone"          # or a git bundle (``repo.bundle``), relative to the case
      base = "0c65673a"                 # any ref; defaults to the repository's upstream
      head = "a050e422"

- ``truth.json``: the known defects, a JSON list (empty for a clean case) of
  ``{"path", "line_start", "line_end", "category", "severity", "description"}``, lines 1-based
  and inclusive on the head version; ``needle`` (optional) is text that must appear on
  ``line_start``, so a case that is edited cannot silently drift from its truth.

A case may also be a ``.tar.gz`` archive of such a directory (extracted safely, without links
or absolute paths). ``assay.eval.repos`` builds a case's repository.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from assay.errors import ConfigError
from assay.model import Severity, Side

__all__ = [
    "CASE_FILE",
    "TRUTH_FILE",
    "EvalCase",
    "RecipeSource",
    "RepositorySource",
    "TruthDefect",
    "load_case",
    "load_cases",
    "parse_truth",
]

CASE_FILE = "case.toml"
TRUTH_FILE = "truth.json"

_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")


class TruthDefect(BaseModel):
    """One known defect of a case: where it is, what kind, how bad.

    ``path`` and the lines may be ``None`` for external benchmarks whose golden comments have
    no location (they can then only be matched by the LLM judge). ``severity`` may be ``None``
    when the benchmark does not rate severity (such a defect never counts as blocking-worthy).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str | None = None
    line_start: int | None = Field(default=None, ge=1)
    line_end: int | None = Field(default=None, ge=1)
    category: str = "correctness"
    severity: Severity | None = None
    description: str = ""
    side: Side = Side.RIGHT
    needle: str | None = None
    """Text that must occur on ``line_start`` of the head file (checked when a case is built)."""

    @model_validator(mode="after")
    def _coherent(self) -> TruthDefect:
        if self.line_start is not None and self.path is None:
            raise ValueError("a defect with a line needs a path")
        if self.line_end is not None and self.line_start is None:
            raise ValueError("line_end without line_start")
        if (
            self.line_end is not None
            and self.line_start is not None
            and self.line_end < self.line_start
        ):
            raise ValueError(f"line_end {self.line_end} is before line_start {self.line_start}")
        return self

    @property
    def first_line(self) -> int | None:
        return self.line_start

    @property
    def last_line(self) -> int | None:
        return self.line_end if self.line_end is not None else self.line_start

    @property
    def may_block(self) -> bool:
        """Severe enough that a reviewer should block on it (P0/P1)."""
        return self.severity is not None and self.severity.may_block


@dataclass(frozen=True)
class RecipeSource:
    """Build the repository from ``base/`` plus the ``head/`` overlay."""

    base_dir: Path
    head_dir: Path
    delete: tuple[str, ...] = ()


@dataclass(frozen=True)
class RepositorySource:
    """Review two refs of an existing repository (a directory, or a git bundle to clone)."""

    repo: Path
    base: str | None
    head: str


@dataclass(frozen=True)
class EvalCase:
    """A pull request with known defects."""

    name: str
    title: str
    description: str
    language: str
    defects: tuple[TruthDefect, ...]
    source: RecipeSource | RepositorySource
    origin: Path | None = None
    """The case directory (or archive) it was loaded from."""

    @property
    def is_clean(self) -> bool:
        return not self.defects


class _CaseFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str = Field(min_length=1, max_length=300)
    description: str = Field(default="", max_length=20_000)
    language: str = "unknown"
    delete: list[str] = Field(default_factory=list)
    repo: str | None = None
    base: str | None = None
    head: str | None = None


def parse_truth(
    text: str, *, source: str = TRUTH_FILE, require_location: bool = True
) -> tuple[TruthDefect, ...]:
    """Parse a ``truth.json`` document.

    Args:
        text: The JSON text: a list of defects.
        source: Named in errors.
        require_location: Every defect must have ``path``, ``line_start`` and ``severity``
            (Assay's own cases do; external formats may not).

    Returns:
        The defects, in file order; ``line_end`` defaults to ``line_start``.

    Raises:
        ConfigError: Not JSON, not a list, or a defect that does not validate.
    """
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ConfigError(f"{source}: invalid JSON: {error}") from None
    if not isinstance(data, list):
        raise ConfigError(f"{source}: expected a JSON list of defects, got {type(data).__name__}")
    defects = []
    for index, item in enumerate(data):
        try:
            defect = TruthDefect.model_validate(item)
        except ValidationError as error:
            raise ConfigError(f"{source}[{index}]: {_first_error(error)}") from None
        if require_location and (
            defect.path is None or defect.line_start is None or defect.severity is None
        ):
            raise ConfigError(f"{source}[{index}]: path, line_start and severity are required")
        if defect.line_start is not None and defect.line_end is None:
            defect = defect.model_copy(update={"line_end": defect.line_start})
        if defect.path is not None:
            defect = defect.model_copy(update={"path": _relative_path(defect.path, source)})
        defects.append(defect)
    return tuple(defects)


def load_case(case_dir: Path) -> EvalCase:
    """Load one case directory (see the module docstring for its layout).

    Args:
        case_dir: The directory holding ``case.toml`` and ``truth.json``.

    Returns:
        The case; its name is the directory's name.

    Raises:
        ConfigError: A missing or invalid file.
    """
    case_path = case_dir / CASE_FILE
    truth_path = case_dir / TRUTH_FILE
    if not case_path.is_file():
        raise ConfigError(f"{case_dir}: no {CASE_FILE}")
    if not truth_path.is_file():
        raise ConfigError(f"{case_dir}: no {TRUTH_FILE} (write [] for a clean case)")
    try:
        case_file = _CaseFile.model_validate(tomllib.loads(case_path.read_text(encoding="utf-8")))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{case_path}: invalid TOML: {error}") from None
    except ValidationError as error:
        raise ConfigError(f"{case_path}: {_first_error(error)}") from None
    defects = parse_truth(truth_path.read_text(encoding="utf-8"), source=str(truth_path))
    source: RecipeSource | RepositorySource
    if case_file.repo is not None:
        if case_file.head is None:
            raise ConfigError(f"{case_path}: a case with `repo` needs `head`")
        repo = Path(case_file.repo).expanduser()
        source = RepositorySource(
            repo=repo if repo.is_absolute() else case_dir / repo,
            base=case_file.base,
            head=case_file.head,
        )
    else:
        if not (case_dir / "base").is_dir() and not (case_dir / "head").is_dir():
            raise ConfigError(f"{case_dir}: a recipe case needs base/ and/or head/")
        source = RecipeSource(
            base_dir=case_dir / "base",
            head_dir=case_dir / "head",
            delete=tuple(_relative_path(path, str(case_path)) for path in case_file.delete),
        )
    return EvalCase(
        name=case_dir.name,
        title=case_file.title,
        description=case_file.description,
        language=case_file.language,
        defects=defects,
        source=source,
        origin=case_dir,
    )


def load_cases(path: Path, *, extract_to: Path) -> list[EvalCase]:
    """Load every case under ``path``.

    ``path`` may be one case directory, a directory of cases (each a subdirectory or a
    ``.tar.gz``), or an archive of either. Cases are returned sorted by name.

    Args:
        path: Where the cases are.
        extract_to: A scratch directory for archives (the caller removes it).

    Returns:
        The cases.

    Raises:
        ConfigError: Nothing found, duplicate names, or an invalid case or archive.
    """
    if path.is_file() and path.name.endswith(_ARCHIVE_SUFFIXES):
        return load_cases(_extract(path, extract_to), extract_to=extract_to)
    if not path.is_dir():
        raise ConfigError(f"{path}: not a directory or a .tar.gz of cases")
    if (path / CASE_FILE).is_file():
        return [load_case(path)]
    cases = []
    for entry in sorted(path.iterdir()):
        if entry.is_dir() and (entry / CASE_FILE).is_file():
            cases.append(load_case(entry))
        elif entry.is_file() and entry.name.endswith(_ARCHIVE_SUFFIXES):
            cases.extend(load_cases(_extract(entry, extract_to), extract_to=extract_to))
    if not cases:
        raise ConfigError(f"{path}: no cases (a case is a directory with {CASE_FILE})")
    names = [case.name for case in cases]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ConfigError(f"{path}: duplicate case names: {', '.join(duplicates)}")
    return sorted(cases, key=lambda case: case.name)


def _extract(archive: Path, extract_to: Path) -> Path:
    """Extract a case archive under ``extract_to`` and return the directory to load from."""
    target = extract_to / archive.name.removesuffix(".tar.gz").removesuffix(".tgz")
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    try:
        with tarfile.open(archive, "r:gz") as bundle:
            members = bundle.getmembers()
            for member in members:
                if not (member.isfile() or member.isdir()):
                    raise ConfigError(f"{archive}: {member.name!r} is not a file or directory")
            # The "data" filter refuses absolute paths, `..` and special files.
            bundle.extractall(target, filter="data")
    except (tarfile.TarError, OSError) as error:
        raise ConfigError(f"{archive}: cannot extract: {error}") from None
    entries = [entry for entry in target.iterdir() if not entry.name.startswith(".")]
    # An archive of one case directory holds that directory; unwrap it.
    if len(entries) == 1 and entries[0].is_dir() and not (target / CASE_FILE).exists():
        return entries[0]
    return target


def _relative_path(path: str, source: str) -> str:
    # Paths come from case files: refuse what could point outside the repository.
    normalized = path.strip().replace("\\", "/")
    while normalized.startswith("./"):
        normalized = normalized[2:]
    pure = PurePosixPath(normalized)
    if not normalized or pure.is_absolute() or ".." in pure.parts:
        raise ConfigError(f"{source}: {path!r} is not a relative path inside the repository")
    return pure.as_posix()


def _first_error(error: ValidationError) -> str:
    first: Mapping[str, Any] = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])
