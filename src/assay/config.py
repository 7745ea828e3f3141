"""Configuration: settings from the environment, and the repository's ``.assay.toml``.

Both are built once (in ``cli.py`` or the service) and passed down; no stage reads the
environment. The repository file is read from the BASE revision, so a pull request cannot weaken
its own review.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from assay.errors import ConfigError
from assay.llm.settings import LLMSettings, ResponseFormat

__all__ = [
    "REPO_CONFIG_FILE",
    "ChecklistsConfig",
    "RepoConfig",
    "Settings",
    "default_db_url",
    "parse_repo_config",
]

REPO_CONFIG_FILE = ".assay.toml"

Lang = Literal["en", "zh"]


class Settings(BaseSettings):
    """Settings from the environment (prefix ``ASSAY_``).

    The model endpoint falls back to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``. With no endpoint
    or no model configured, reviews run the static-first pass only.
    """

    model_config = SettingsConfigDict(env_prefix="ASSAY_", extra="ignore")

    llm_base_url: str | None = None
    """OpenAI-compatible endpoint (default: ``OPENAI_BASE_URL``)."""
    llm_api_key: str | None = None
    """API key (default: ``OPENAI_API_KEY``; ``none`` for local servers)."""
    model: str | None = None
    """Model name sent with every request. Required for LLM review."""
    db_url: str | None = None
    """SQLAlchemy URL of the store (default: an SQLite file in the XDG data directory)."""
    max_tokens: int = 4096
    llm_timeout_s: float = 120.0
    llm_concurrency: int = 8
    llm_transport_retries: int = 4
    llm_reasks: int = 2
    temperature: float = 0.2
    response_format: ResponseFormat = "json_schema"
    """``json_schema`` | ``json_object_schema`` (llama.cpp) | ``json_object`` | ``none``."""
    reps: int | None = None
    """Overrides ``[review] reps`` of ``.assay.toml``."""
    agentic_reps: int | None = None
    block_support: int | None = None

    def llm(self) -> LLMSettings | None:
        """The endpoint settings, or ``None`` when no model is configured."""
        base_url = self.llm_base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url or not self.model:
            return None
        api_key = self.llm_api_key or os.environ.get("OPENAI_API_KEY") or "none"
        try:
            return LLMSettings(
                base_url=base_url,
                api_key=api_key,
                model=self.model,
                max_tokens=self.max_tokens,
                timeout_s=self.llm_timeout_s,
                concurrency=self.llm_concurrency,
                transport_retries=self.llm_transport_retries,
                reasks=self.llm_reasks,
                temperature=self.temperature,
                response_format=self.response_format,
            )
        except ValidationError as error:
            raise ConfigError(f"invalid model settings: {_first_error(error)}") from None

    def resolved_db_url(self) -> str:
        return self.db_url or default_db_url()


def default_db_url() -> str:
    """``sqlite:///$XDG_DATA_HOME/assay/assay.db`` (``~/.local/share`` when unset)."""
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return f"sqlite:///{Path(data_home) / 'assay' / 'assay.db'}"


class ReviewConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    lang: Lang = "en"
    """Language of the review and of the model's findings."""
    timezone: str = "UTC"
    """Time zone of the ``Reviewed:`` line: an IANA name or ``UTC+8``."""
    reps: int = Field(default=5, ge=1, le=16)
    """Independent discovery runs per round (the denominator of votes)."""
    agentic_reps: int = Field(default=2, ge=0, le=16)
    """How many of the reps may explore the repository with tools (the first ones)."""
    block_support: int = Field(default=3, ge=1)
    """Votes a P0/P1 model finding needs before it may block."""
    confirm: bool = True
    """Re-examine blocking candidates with an agentic confirm stage (off: support, and the
    fact-check when on, decide alone)."""
    fact_check: bool = True
    """Check blocking candidates' claims (off: they are not required to hold)."""
    agent_max_steps: int = Field(default=8, ge=1, le=64)
    """Tool-calling steps an agentic stage may take before it must answer."""
    max_patch_tokens: int = Field(default=60_000, ge=1_000)
    """Token budget for the diff part of one discovery request (one shard)."""
    max_shards: int = Field(default=8, ge=1, le=64)
    """At most this many shards; what does not fit is named as not reviewed."""


class StaticConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True


class ChecklistsConfig(BaseModel):
    """The ``[checklists]`` table: which checklist catalogs a review scores the change against.

    Example::

        [checklists]
        files = [".assay/rtp-llm-checklist.toml"]   # read from the BASE revision
        skip_items = ["G.6.1.20"]
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    """Evaluate checklists at all."""
    builtin: tuple[str, ...] | None = None
    """Names of the shipped catalogs to use (``None``, the default: all of them; ``[]``: none)."""
    files: tuple[str, ...] = ()
    """Repository checklist files (same TOML format), paths from the repository root."""
    skip_items: tuple[str, ...] = ()
    """Item ids never evaluated or counted."""


class RepoConfig(BaseModel):
    """The repository's ``.assay.toml``, read from the base revision.

    Example::

        [review]
        lang = "zh"
        timezone = "UTC+8"
        reps = 1
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    review: ReviewConfig = Field(default_factory=ReviewConfig)
    static: StaticConfig = Field(default_factory=StaticConfig)
    checklists: ChecklistsConfig = Field(default_factory=ChecklistsConfig)


def parse_repo_config(text: str | None, *, source: str = REPO_CONFIG_FILE) -> RepoConfig:
    """Parse ``.assay.toml`` text (``None`` → defaults).

    Raises:
        ConfigError: invalid TOML or unknown/invalid keys, naming the file and the key.
    """
    if text is None:
        return RepoConfig()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: invalid TOML: {error}") from None
    try:
        return RepoConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(f"{source}: {_first_error(error)}") from None


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])
