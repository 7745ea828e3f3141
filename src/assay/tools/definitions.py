"""The tools as the model sees them: argument models, descriptions, OpenAI function definitions.

The pydantic argument models are the contract: they validate what the model sends and generate
the JSON schema of each function's ``parameters``. Definitions are a pure function of the
limits, so every request of every rep carries byte-identical tool definitions (a shared prefix
for the provider's cache, a stable key for the replay cache).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "TOOL_NAMES",
    "GitShowArguments",
    "GrepArguments",
    "ListFilesArguments",
    "ReadFileArguments",
    "ToolLimits",
    "tool_definitions",
]


@dataclass(frozen=True)
class ToolLimits:
    """How much one tool call may read and return.

    Example::

        Toolbox(workspace, limits=ToolLimits(read_max_lines=200))
    """

    read_max_lines: int = 400
    """Lines one ``read_file``/``git_show`` call shows."""
    read_max_bytes: int = 40_000
    """Bytes (UTF-8, numbering included) one ``read_file``/``git_show`` call shows."""
    line_chars: int = 1_000
    """Characters shown of one line of a file; longer lines are cut, saying so."""
    grep_default_results: int = 50
    grep_max_results: int = 200
    """The most matching lines one ``grep`` shows (``max_results`` is capped to it)."""
    grep_line_chars: int = 300
    """Characters shown of one matching line."""
    grep_files_listed: int = 50
    """Files listed with their count of matching lines."""
    grep_timeout_s: float = 20.0
    """A search that runs longer is stopped and answered with an error."""
    list_default_results: int = 200
    list_max_results: int = 1_000
    output_max_chars: int = 48_000
    """Characters of any one answer, whatever the tool."""


class _Arguments(BaseModel):
    # Unknown arguments are refused, so a misspelt one ("file" for "path") is reported, not
    # silently dropped.
    model_config = ConfigDict(extra="forbid", frozen=True)


_PATH_DESCRIPTION = "File path relative to the repository root, e.g. 'src/app.py'."


class ReadFileArguments(_Arguments):
    """Arguments of ``read_file``."""

    path: str = Field(description=_PATH_DESCRIPTION)
    start: int = Field(default=1, ge=1, description="First line to show (1-based).")
    end: int | None = Field(
        default=None,
        ge=1,
        description="Last line to show (inclusive); omit it to show as much as the limit allows.",
    )


class GrepArguments(_Arguments):
    """Arguments of ``grep``."""

    pattern: str = Field(
        min_length=1,
        max_length=1000,
        description="A regular expression (Python re syntax; (?i) for case-insensitive), or a "
        "plain string with fixed=true.",
    )
    path_glob: str | None = Field(
        default=None,
        description="Only search files selected by this glob, e.g. '*.py', 'src/**/*.ts', "
        "'tests'; omit it to search every file.",
    )
    fixed: bool = Field(default=False, description="Search for the pattern as a plain string.")
    max_results: int | None = Field(
        default=None, ge=1, description="The most matching lines to show."
    )


class ListFilesArguments(_Arguments):
    """Arguments of ``list_files``."""

    glob: str = Field(
        default="**",
        description="Which paths: '**' for all, '*.py' for names at any depth, 'src/api' for a "
        "directory, 'src/**/test_*.py'.",
    )
    max_results: int | None = Field(default=None, ge=1, description="The most paths to list.")


class GitShowArguments(_Arguments):
    """Arguments of ``git_show``."""

    rev: Literal["head", "base"] = Field(
        description="'base': the file before the change; 'head': after it."
    )
    path: str = Field(description=_PATH_DESCRIPTION)
    start: int = Field(default=1, ge=1, description="First line to show (1-based).")
    end: int | None = Field(
        default=None,
        ge=1,
        description="Last line to show (inclusive); omit it to show as much as the limit allows.",
    )


@dataclass(frozen=True)
class _ToolSpec:
    name: str
    arguments: type[_Arguments]
    describe: Callable[[ToolLimits], str]


_SANDBOX = (
    "Paths are relative to the repository root; absolute paths, '..' and symbolic links that "
    "lead outside the repository are refused."
)

_TOOL_SPECS: tuple[_ToolSpec, ...] = (
    _ToolSpec(
        "read_file",
        ReadFileArguments,
        lambda limits: (
            "Read lines of a file of the pull request's head revision, numbered ('  12 | code'). "
            f"At most {limits.read_max_lines} lines or {limits.read_max_bytes} bytes per call; "
            f"the answer says how to read on. {_SANDBOX}"
        ),
    ),
    _ToolSpec(
        "grep",
        GrepArguments,
        lambda limits: (
            "Search every file of the head revision, line by line, for a regular expression "
            "(Python re syntax) or, with fixed=true, a plain string. Answers the total number "
            "of matching lines, the count per file and the first matching lines as "
            f"'path:line: text' (max_results, default {limits.grep_default_results}, at most "
            f"{limits.grep_max_results}). Binary files, files that are not UTF-8 and symbolic "
            "links are not searched."
        ),
    ),
    _ToolSpec(
        "list_files",
        ListFilesArguments,
        lambda limits: (
            "List the paths of the head revision that a glob selects; symbolic links and "
            f"submodules are marked. max_results defaults to {limits.list_default_results}, at "
            f"most {limits.list_max_results}."
        ),
    ),
    _ToolSpec(
        "git_show",
        GitShowArguments,
        lambda limits: (
            "Read lines of a file as it is at the base revision (before the change) or the head "
            "revision (after it), from git, numbered like read_file; use it to compare a file "
            f"with its previous version. At most {limits.read_max_lines} lines or "
            f"{limits.read_max_bytes} bytes per call. Symbolic links are not followed. "
            f"{_SANDBOX}"
        ),
    ),
)

TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in _TOOL_SPECS)
"""``read_file``, ``grep``, ``list_files``, ``git_show``."""


def tool_definitions(limits: ToolLimits | None = None) -> list[dict[str, Any]]:
    """Return the OpenAI ``tools`` array for the repository tools.

    Args:
        limits: The limits the descriptions state (the defaults when ``None``).

    Returns:
        One ``{"type": "function", "function": {name, description, parameters}}`` per tool.
    """
    chosen = limits or ToolLimits()
    return [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.describe(chosen),
                "parameters": _parameters_schema(spec.arguments),
            },
        }
        for spec in _TOOL_SPECS
    ]


@functools.cache
def _parameters_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema: dict[str, Any] = _without_titles(model.model_json_schema())
    schema.pop("description", None)  # the class docstring, written for Python readers
    return schema


def _without_titles(schema: Any) -> Any:
    """Drop pydantic's ``title`` keys: they repeat the names and cost tokens on every step."""
    if isinstance(schema, list):
        return [_without_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    cleaned: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key == "properties" and isinstance(value, dict):
            cleaned[key] = {name: _without_titles(item) for name, item in value.items()}
        else:
            cleaned[key] = _without_titles(value)
    return cleaned
