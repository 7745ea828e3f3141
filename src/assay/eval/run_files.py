"""The files of a run's output directory, and reading them back for a re-score.

- ``assay.db``: the store (its replay cache keeps every model exchange);
- ``eval.json``: the :class:`Manifest` (cases and their defects, configurations, reviewer);
- ``reviews/<label>.json``: one :class:`CaseReview` per case, per configuration.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.errors import ConfigError
from assay.eval.cases import EvalCase, RepositorySource, TruthDefect
from assay.eval.judge import JudgeVerdict
from assay.eval.simulator import SimulatorConfig
from assay.llm.client import CallRecord
from assay.model import RoundResult

__all__ = [
    "DB_FILE",
    "MANIFEST_FILE",
    "REVIEWS_DIR",
    "CaseReview",
    "Manifest",
    "StoredCase",
    "StoredEnsemble",
    "case_stub",
    "db_url",
    "read_manifest",
    "read_reviews",
    "write_manifest",
    "write_reviews",
]

DB_FILE = "assay.db"
MANIFEST_FILE = "eval.json"
REVIEWS_DIR = "reviews"


class CaseReview(BaseModel):
    """One case reviewed under one configuration, as stored for re-scoring."""

    model_config = ConfigDict(frozen=True)

    case: str
    pr_id: str
    result: RoundResult | None = None
    calls: list[CallRecord] = Field(default_factory=list)
    wall_ms: int = 0
    """The round's own wall time (``kpi.wall_ms``)."""
    total_ms: int = 0
    """Around the whole review: snapshot, round, store."""
    error: str | None = None
    judge: JudgeVerdict | None = None


class StoredCase(BaseModel):
    """A case in the manifest: its name and defects, so re-scoring needs no case files."""

    model_config = ConfigDict(frozen=True)

    name: str
    language: str
    title: str
    defects: list[TruthDefect]


class StoredEnsemble(BaseModel):
    """A configuration in the manifest (``block_support`` resolved)."""

    model_config = ConfigDict(frozen=True)

    reps: int
    block_support: int
    checks: bool
    agentic_reps: int | None = None
    label: str


class Manifest(BaseModel):
    """``eval.json``: what a run evaluated, enough to re-score it without the cases."""

    model_config = ConfigDict(frozen=True)

    version: int = 1
    cases_path: str
    cases: list[StoredCase]
    configs: list[StoredEnsemble]
    simulator: SimulatorConfig | None = None
    model: str
    lang: Literal["en", "zh"] = "en"
    judge: bool = False
    notes: list[str] = Field(default_factory=list)


def db_url(out_dir: Path) -> str:
    """The SQLAlchemy URL of the run's store (an SQLite file in ``out_dir``)."""
    return f"sqlite:///{(out_dir / DB_FILE).resolve()}"


def write_manifest(out_dir: Path, manifest: Manifest) -> None:
    """Write ``eval.json``."""
    (out_dir / MANIFEST_FILE).write_text(manifest.model_dump_json(indent=2) + "\n", "utf-8")


def read_manifest(out_dir: Path) -> Manifest:
    """Read ``eval.json``.

    Raises:
        ConfigError: ``out_dir`` holds no run, or the file is unreadable.
    """
    path = out_dir / MANIFEST_FILE
    if not path.is_file():
        raise ConfigError(f"{out_dir}: no {MANIFEST_FILE}; is this an evaluation's --out?")
    try:
        return Manifest.model_validate_json(path.read_text("utf-8"))
    except ValueError as error:
        raise ConfigError(f"{path}: unreadable: {error}") from None


def write_reviews(out_dir: Path, label: str, reviews: Sequence[CaseReview]) -> None:
    """Write one configuration's reviews to ``reviews/<label>.json``."""
    directory = out_dir / REVIEWS_DIR
    directory.mkdir(exist_ok=True)
    payload = [json.loads(review.model_dump_json()) for review in reviews]
    (directory / f"{label}.json").write_text(json.dumps(payload, indent=1) + "\n", "utf-8")


def read_reviews(out_dir: Path, label: str, cases: Sequence[EvalCase]) -> list[CaseReview]:
    """Read one configuration's reviews (those of ``cases`` only).

    Raises:
        ConfigError: The file is missing (the run did not finish) or unreadable.
    """
    path = out_dir / REVIEWS_DIR / f"{label}.json"
    if not path.is_file():
        raise ConfigError(f"{path}: missing; the run did not finish")
    try:
        items = json.loads(path.read_text("utf-8"))
        reviews = [CaseReview.model_validate(item) for item in items]
    except ValueError as error:  # JSON and validation errors alike
        raise ConfigError(f"{path}: unreadable: {error}") from None
    known = {case.name for case in cases}
    return [review for review in reviews if review.case in known]


def case_stub(stored: StoredCase) -> EvalCase:
    """A case as the manifest stores it: enough to re-match (its source is never built)."""
    return EvalCase(
        name=stored.name,
        title=stored.title,
        description="",
        language=stored.language,
        defects=tuple(stored.defects),
        source=RepositorySource(repo=Path("."), base=None, head="HEAD"),
    )
