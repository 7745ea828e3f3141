"""The repository tools bundled for an agent: definitions, dispatch, and a log of every call.

Example::

    toolbox = Toolbox(workspace)
    body = client.build_request(messages, tools=toolbox.definitions)
    ...
    result = toolbox.dispatch("read_file", '{"path": "src/app.py", "start": 40}')
    result.text    # "src/app.py, lines 40-120 of 120:\\n  40 | ..."
    result.record  # ToolCallRecord(tool="read_file", ok=True, ...)

Nothing the model sends can make :meth:`Toolbox.dispatch` raise: an unknown tool, arguments
that are not JSON or do not validate, a path outside the checkout, an invalid pattern all come
back as an ``error: …`` answer (``ok=False``) for the model to correct.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, ValidationError

from assay.errors import GitError
from assay.tools import _files
from assay.tools._errors import ToolError
from assay.tools._grep import find_ripgrep
from assay.tools._grep_tool import grep_tool
from assay.tools._text import ExcerptLimits, bound_output
from assay.tools.definitions import (
    TOOL_NAMES,
    GitShowArguments,
    GrepArguments,
    ListFilesArguments,
    ReadFileArguments,
    ToolLimits,
    tool_definitions,
)
from assay.tools.workspace import Workspace

__all__ = ["ToolCallRecord", "ToolResult", "Toolbox"]

log = structlog.get_logger(__name__)

_ARGUMENTS_KEPT = 2000
"""Characters of the raw arguments kept in a record."""
_ERRORS_QUOTED = 6


class ToolCallRecord(BaseModel):
    """One tool call, as the round stores it."""

    model_config = ConfigDict(frozen=True)

    tool: str
    """The tool's name as the model sent it (unknown names included)."""
    arguments: str
    """The arguments as the model sent them (JSON text, cut to 2000 characters)."""
    ok: bool
    error: str | None = None
    """Why the call was refused or failed; ``None`` when ``ok``."""
    output_chars: int
    """Characters of the answer sent back to the model."""
    duration_ms: int


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer for the model and the record of the call."""

    text: str
    record: ToolCallRecord

    @property
    def ok(self) -> bool:
        """Whether the tool answered (not refused or failed)."""
        return self.record.ok


_Handler = tuple[type[BaseModel], Callable[[Any], str]]


class Toolbox:
    """``read_file``, ``grep``, ``list_files`` and ``git_show`` over one workspace.

    Thread-safe; several agents may share one toolbox (each agent's result lists its own
    calls; :attr:`records` lists everyone's).

    Args:
        workspace: The repository the tools read.
        limits: Output and time bounds (defaults when ``None``).
        ripgrep: The ``rg`` binary; ``"auto"`` finds it (see :func:`find_ripgrep`), ``None``
            uses the pure-Python search only (same answers, slower).
    """

    def __init__(
        self,
        workspace: Workspace,
        *,
        limits: ToolLimits | None = None,
        ripgrep: Path | Literal["auto"] | None = "auto",
    ) -> None:
        self._workspace = workspace
        self._limits = limits or ToolLimits()
        self._ripgrep = find_ripgrep() if ripgrep == "auto" else ripgrep
        self._definitions = tool_definitions(self._limits)
        self._excerpt = ExcerptLimits(
            max_lines=self._limits.read_max_lines,
            max_bytes=self._limits.read_max_bytes,
            line_chars=self._limits.line_chars,
        )
        self._records: list[ToolCallRecord] = []
        self._lock = threading.Lock()
        self._handlers: dict[str, _Handler] = {
            "read_file": (ReadFileArguments, self._read_file),
            "grep": (GrepArguments, self._grep),
            "list_files": (ListFilesArguments, self._list_files),
            "git_show": (GitShowArguments, self._git_show),
        }

    @property
    def definitions(self) -> list[dict[str, Any]]:
        """The OpenAI ``tools`` array (the same list on every call; do not mutate it)."""
        return self._definitions

    @property
    def records(self) -> tuple[ToolCallRecord, ...]:
        """Every call made through this toolbox, in order."""
        with self._lock:
            return tuple(self._records)

    @property
    def ripgrep(self) -> Path | None:
        """The ``rg`` binary grep uses, or ``None`` (pure Python)."""
        return self._ripgrep

    @property
    def workspace(self) -> Workspace:
        """The repository the tools read."""
        return self._workspace

    def dispatch(self, name: str, arguments_json: str) -> ToolResult:
        """Run a tool call as the model sent it.

        Args:
            name: The function name.
            arguments_json: The ``arguments`` string (JSON text, possibly malformed).

        Returns:
            The answer (``error: …`` when refused) and its record, also kept in
            :attr:`records`.
        """
        started = time.perf_counter()
        try:
            text = self._run(name, arguments_json)
            error = None
        except ToolError as problem:
            error = str(problem)
            text = f"error: {error}"
        text = bound_output(text, self._limits.output_max_chars)
        record = ToolCallRecord(
            tool=name[:100],
            arguments=arguments_json[:_ARGUMENTS_KEPT],
            ok=error is None,
            error=error,
            output_chars=len(text),
            duration_ms=round((time.perf_counter() - started) * 1000),
        )
        with self._lock:
            self._records.append(record)
        log.info(
            "tools.call",
            tool=record.tool,
            ok=record.ok,
            output_chars=record.output_chars,
            duration_ms=record.duration_ms,
        )
        return ToolResult(text=text, record=record)

    def read_file(self, path: str, start: int = 1, end: int | None = None) -> ToolResult:
        """Call ``read_file`` (see :meth:`dispatch`)."""
        return self._call("read_file", path=path, start=start, end=end)

    def grep(
        self,
        pattern: str,
        path_glob: str | None = None,
        fixed: bool = False,
        max_results: int | None = None,
    ) -> ToolResult:
        """Call ``grep`` (see :meth:`dispatch`)."""
        return self._call(
            "grep", pattern=pattern, path_glob=path_glob, fixed=fixed, max_results=max_results
        )

    def list_files(self, glob: str = "**", max_results: int | None = None) -> ToolResult:
        """Call ``list_files`` (see :meth:`dispatch`)."""
        return self._call("list_files", glob=glob, max_results=max_results)

    def git_show(self, rev: str, path: str, start: int = 1, end: int | None = None) -> ToolResult:
        """Call ``git_show`` (see :meth:`dispatch`)."""
        return self._call("git_show", rev=rev, path=path, start=start, end=end)

    def _call(self, name: str, **arguments: Any) -> ToolResult:
        return self.dispatch(name, json.dumps(arguments, ensure_ascii=False))

    def _run(self, name: str, arguments_json: str) -> str:
        handler = self._handlers.get(name)
        if handler is None:
            raise ToolError(f"unknown tool {name!r}; the tools are {', '.join(TOOL_NAMES)}")
        model, run = handler
        arguments = _parse_arguments(model, arguments_json)
        try:
            return run(arguments)
        except (OSError, GitError) as error:
            log.warning("tools.failed", tool=name, error=str(error))
            raise ToolError(f"{name} could not read the repository") from error

    def _read_file(self, arguments: ReadFileArguments) -> str:
        return _files.read_file(
            self._workspace,
            arguments.path,
            start=arguments.start,
            end=arguments.end,
            limits=self._excerpt,
        )

    def _grep(self, arguments: GrepArguments) -> str:
        return grep_tool(
            self._workspace.root,
            pattern=arguments.pattern,
            path_glob=arguments.path_glob,
            fixed=arguments.fixed,
            max_results=arguments.max_results,
            limits=self._limits,
            ripgrep=self._ripgrep,
        )

    def _list_files(self, arguments: ListFilesArguments) -> str:
        limit = min(
            arguments.max_results or self._limits.list_default_results,
            self._limits.list_max_results,
        )
        return _files.list_files(self._workspace, arguments.glob, max_results=limit)

    def _git_show(self, arguments: GitShowArguments) -> str:
        return _files.git_show(
            self._workspace,
            arguments.rev,
            arguments.path,
            start=arguments.start,
            end=arguments.end,
            limits=self._excerpt,
        )


def _parse_arguments(model: type[BaseModel], arguments_json: str) -> BaseModel:
    text = arguments_json.strip() or "{}"
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ToolError(
            f"the arguments are not valid JSON ({error}); send one JSON object"
        ) from error
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ToolError(f"the arguments must be a JSON object, not {type(raw).__name__}")
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise ToolError("invalid arguments:\n" + _summarize(error)) from error


def _summarize(error: ValidationError) -> str:
    details = error.errors(include_url=False, include_context=False, include_input=False)
    lines = []
    for detail in details[:_ERRORS_QUOTED]:
        location = ".".join(str(part) for part in detail["loc"]) or "(arguments)"
        lines.append(f"- {location}: {detail['msg']}")
    if len(details) > _ERRORS_QUOTED:
        lines.append(f"- … and {len(details) - _ERRORS_QUOTED} more")
    return "\n".join(lines)
