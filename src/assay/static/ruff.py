"""Run ruff on the changed Python files and keep what it says about changed lines.

The files are written into a fresh temporary directory (their head content only; nothing is
executed) and checked by the ruff binary Assay itself depends on, through its JSON output.

``--isolated`` makes ruff ignore every configuration file: the checked files come from the pull
request, and a ``pyproject.toml`` or ``ruff.toml`` it adds or edits must not be able to switch
rules off, widen ``per-file-ignores`` or exclude files from its own review. The rule set is ours
(``rules.RUFF_SELECT``). In-line ``# noqa`` comments are still honoured: they are visible in the
diff, where reviewers see them.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import structlog
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from assay.errors import AssayError
from assay.model import Claim, ClaimKind, Finding
from assay.static.rules import (
    RUFF_IGNORE,
    RUFF_SELECT,
    SYNTAX_ERROR,
    UNDEFINED_NAME_IN_ANNOTATION,
    Language,
    RuleHit,
    build_finding,
    code_span,
    line_contains_claim,
    line_text,
    source_lines,
)

if TYPE_CHECKING:
    from assay.static import ChangedPythonFile

__all__ = [
    "DEFAULT_TARGET_VERSION",
    "RuffDiagnostic",
    "RuffFailed",
    "RuffFix",
    "RuffLocation",
    "RuffOutcome",
    "find_ruff",
    "ruff_findings",
    "run_ruff",
]

log = structlog.get_logger(__name__)

DEFAULT_TARGET_VERSION = "py314"
"""The newest Python ruff 0.17 knows. Newer syntax in a 3.12+ repository is then not reported
as a syntax error; pass the repository's oldest supported version to catch syntax it lacks."""

_BATCH = 200
"""Files per ruff invocation, to stay far below the OS limit on argument length."""


class RuffFailed(AssayError):
    """ruff could not be found, crashed, timed out or printed something that is not its JSON."""


class RuffLocation(BaseModel):
    """A 1-based position; ``column`` counts characters, not bytes."""

    model_config = ConfigDict(frozen=True)

    row: int
    column: int


class RuffFix(BaseModel):
    model_config = ConfigDict(frozen=True)

    message: str | None = None
    applicability: str | None = None


class RuffDiagnostic(BaseModel):
    """One entry of ``ruff check --output-format json`` (fields Assay uses; others ignored)."""

    model_config = ConfigDict(frozen=True)

    code: str | None
    """``F821``; ``invalid-syntax`` (ruff ≥ 0.9) or ``None`` (older) for syntax errors."""
    name: str | None = None
    message: str
    location: RuffLocation
    end_location: RuffLocation
    filename: str
    fix: RuffFix | None = None
    url: str | None = None


_DIAGNOSTICS = TypeAdapter(list[RuffDiagnostic])


class RuffOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    findings: tuple[Finding, ...] = ()
    diagnostics_total: int = 0
    """Everything ruff reported, on changed lines or not."""
    skipped: tuple[str, ...] = ()
    """Paths that could not be checked (unsafe or unwritable), with the reason."""


def find_ruff() -> str | None:
    """The ruff binary of Assay's own environment, else the first ``ruff`` on ``PATH``."""
    try:
        # The ruff package ships no type information; find_ruff_bin() returns a str path.
        from ruff import find_ruff_bin  # type: ignore[import-untyped]

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError):  # not installed, or installed without its binary
        return shutil.which("ruff")


def ruff_findings(
    files: Sequence[ChangedPythonFile],
    *,
    lang: Language,
    ruff_bin: str,
    target_version: str = DEFAULT_TARGET_VERSION,
    timeout_seconds: float = 60.0,
) -> RuffOutcome:
    """Check the files with ruff and word the diagnostics on changed lines as findings.

    A diagnostic is kept when its rows (start through end) touch an added line. A syntax error is
    kept whenever its file has added lines, because the parser reports where it gave up (often the
    line after an unclosed bracket, or the end of the file), not where the mistake is; only the
    first syntax error of a file is kept, later ones are usually its echoes.

    Args:
        files: Changed files at head; those without added lines are not checked.
        lang: Language of titles and suggestions.
        ruff_bin: Path of the ruff executable.
        target_version: ruff's ``--target-version``.
        timeout_seconds: Per ruff invocation.

    Returns:
        The findings and counts.

    Raises:
        RuffFailed: ruff could not be run or its output is not the documented JSON.
    """
    by_path = {file.path: file for file in files if file.changed_lines}
    checked: dict[str, bytes] = {}
    skipped: list[str] = []
    for path, file in sorted(by_path.items()):
        if _safe_relative_path(path) is None:
            skipped.append(f"{path}: not a safe relative path")
        else:
            checked[path] = file.content
    diagnostics = run_ruff(
        checked, ruff_bin=ruff_bin, target_version=target_version, timeout_seconds=timeout_seconds
    )
    by_file: dict[str, list[RuffDiagnostic]] = {}
    for path, diagnostic in diagnostics:
        by_file.setdefault(path, []).append(diagnostic)
    findings = [
        finding
        for path, file_diagnostics in by_file.items()
        for finding in _file_findings(by_path[path], file_diagnostics, lang)
    ]
    return RuffOutcome(
        findings=tuple(findings), diagnostics_total=len(diagnostics), skipped=tuple(skipped)
    )


def run_ruff(
    files: dict[str, bytes],
    *,
    ruff_bin: str,
    target_version: str = DEFAULT_TARGET_VERSION,
    timeout_seconds: float = 60.0,
) -> list[tuple[str, RuffDiagnostic]]:
    """Run ``ruff check`` on in-memory files and return its diagnostics by repository path.

    Args:
        files: Repository-relative path → content; every path must be a safe relative path.
        ruff_bin: Path of the ruff executable.
        target_version: ruff's ``--target-version``.
        timeout_seconds: Per ruff invocation.

    Returns:
        ``(path, diagnostic)`` pairs in ruff's order (by file, then position).

    Raises:
        RuffFailed: ruff could not be run or its output is not the documented JSON.
    """
    if not files:
        return []
    with tempfile.TemporaryDirectory(prefix="assay-ruff-") as scratch:
        root = Path(scratch)
        on_disk: dict[str, str] = {}
        for path, content in files.items():
            relative = _safe_relative_path(path)
            if relative is None:
                raise RuffFailed(f"refusing to write {path!r}: not a safe relative path")
            target = root.joinpath(*relative.parts)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
            except OSError as error:
                raise RuffFailed(f"cannot stage {path!r} for ruff: {error}") from error
            on_disk[os.path.realpath(target)] = path
        results: list[tuple[str, RuffDiagnostic]] = []
        for batch in _batches(sorted(on_disk), _BATCH):
            for diagnostic in _run_batch(
                ruff_bin, batch, cwd=root, target_version=target_version, timeout=timeout_seconds
            ):
                repo_path = on_disk.get(os.path.realpath(root / diagnostic.filename))
                if repo_path is None:
                    raise RuffFailed(
                        f"ruff reported a file it was not given: {diagnostic.filename}"
                    )
                results.append((repo_path, diagnostic))
        return results


def _run_batch(
    ruff_bin: str, paths: Sequence[str], *, cwd: Path, target_version: str, timeout: float
) -> list[RuffDiagnostic]:
    # Absolute paths: a file named "-x.py" must never be read as an option.
    command = [
        ruff_bin,
        "check",
        "--isolated",
        "--no-cache",
        "--exit-zero",
        "--output-format",
        "json",
        "--target-version",
        target_version,
        "--select",
        ",".join(RUFF_SELECT),
        "--ignore",
        ",".join(RUFF_IGNORE),
        "--",
        *paths,
    ]
    started = time.monotonic()
    try:
        # A fixed argument list and no shell: nothing in a file name reaches a shell.
        completed = subprocess.run(
            command, cwd=cwd, capture_output=True, timeout=timeout, check=False
        )
    except FileNotFoundError as error:
        raise RuffFailed(f"ruff not found at {ruff_bin!r}") from error
    except (OSError, subprocess.TimeoutExpired) as error:
        raise RuffFailed(f"ruff could not run: {error}") from error
    duration_ms = int((time.monotonic() - started) * 1000)
    log.info(
        "static.ruff", files=len(paths), returncode=completed.returncode, duration_ms=duration_ms
    )
    if completed.returncode != 0:
        stderr = completed.stderr.decode("utf-8", errors="replace").strip()
        raise RuffFailed(f"ruff exited with {completed.returncode}: {stderr[:2000]}")
    try:
        return _DIAGNOSTICS.validate_json(completed.stdout)
    except ValidationError as error:
        raise RuffFailed(f"ruff output is not the expected JSON: {error}") from error


def _file_findings(
    file: ChangedPythonFile, diagnostics: Sequence[RuffDiagnostic], lang: Language
) -> list[Finding]:
    kept = _on_changed_lines(diagnostics, file.changed_lines)
    if not kept:
        return []
    lines = source_lines(file.content)
    # A stub never runs, and neither does an annotation, necessarily: see _annotation_spans.
    is_stub = file.path.endswith(".pyi")
    needs_spans = not is_stub and any(diagnostic.code == "F821" for diagnostic in kept)
    annotations = _annotation_spans(file.content) if needs_spans else []
    return [
        _finding(
            diagnostic,
            file.path,
            lines,
            lang,
            spec_key=UNDEFINED_NAME_IN_ANNOTATION
            if diagnostic.code == "F821"
            and (is_stub or _inside(annotations, lines, diagnostic.location))
            else None,
        )
        for diagnostic in kept
    ]


def _on_changed_lines(
    diagnostics: Sequence[RuffDiagnostic], changed_lines: frozenset[int]
) -> list[RuffDiagnostic]:
    """The diagnostics touching added lines, plus the file's first syntax error wherever it is."""
    syntax_errors = [d for d in diagnostics if d.code in (None, SYNTAX_ERROR, "E999")]
    kept = [d for d in diagnostics if d not in syntax_errors and _touches(d, changed_lines)]
    return syntax_errors[:1] + kept


def _finding(
    diagnostic: RuffDiagnostic,
    path: str,
    lines: Sequence[str],
    lang: Language,
    *,
    spec_key: str | None,
) -> Finding:
    code = diagnostic.code or SYNTAX_ERROR
    start, end = diagnostic.location, diagnostic.end_location
    row = max(start.row, 1)
    end_row = _inclusive_end_row(diagnostic)
    source_line = line_text(lines, row)
    name = _first_quoted(diagnostic.message)
    claims: list[Claim] = []
    if code == "F821" and name is not None:
        claims.append(
            Claim(
                kind=ClaimKind.SYMBOL_UNDEFINED,
                text=f"{code_span(name)} is neither defined nor imported in {path}",
                path=path,
                needle=name,
            )
        )
    if end.row == start.row and end.column > start.column:
        needle = source_line[start.column - 1 : end.column - 1]
        if needle.strip():
            claims.append(line_contains_claim(path, row, needle))
    hit = RuleHit(
        analyzer="ruff",
        code=code,
        rule_name=diagnostic.name,
        message=diagnostic.message,
        path=path,
        line=row,
        end_line=end_row if end_row > row else None,
        source_line=source_line,
        fields={"name": name} if name is not None else {},
        fix_message=diagnostic.fix.message if diagnostic.fix else None,
        claims=claims,
        spec_key=spec_key,
    )
    return build_finding(hit, lang)


_Span = tuple[tuple[int, int], tuple[int, int]]
"""``((line, byte column), (end line, end byte column))`` of an AST node, end exclusive."""


def _annotation_spans(content: bytes) -> list[_Span]:
    """Where annotations and string literals are: an undefined name there is not a certain failure.

    Annotations are lazy under ``from __future__ import annotations`` and in Python 3.14, never
    evaluated on local variables, and strings (``"Model"``, ``cast("T", x)``) hold forward
    references that only typing tools resolve.
    """
    try:
        module = ast.parse(content)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    # Before Python 3.12 the literal parts of an f-string span the whole f-string, names included.
    f_string_parts = {
        id(part)
        for node in ast.walk(module)
        if isinstance(node, ast.JoinedStr)
        for part in node.values
    }
    nodes: list[ast.AST] = []
    for node in ast.walk(module):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            nodes.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            nodes.append(node.returns)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in f_string_parts
        ):
            nodes.append(node)
    return [
        ((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset))
        for node in nodes
        if isinstance(node, ast.expr)
        and node.end_lineno is not None
        and node.end_col_offset is not None
    ]


def _inside(spans: Sequence[_Span], lines: Sequence[str], location: RuffLocation) -> bool:
    # ruff counts characters, the AST counts UTF-8 bytes.
    column = len(line_text(lines, location.row)[: location.column - 1].encode("utf-8"))
    point = (location.row, column)
    return any(start <= point < end for start, end in spans)


def _touches(diagnostic: RuffDiagnostic, changed_lines: frozenset[int]) -> bool:
    first = diagnostic.location.row
    return any(row in changed_lines for row in range(first, _inclusive_end_row(diagnostic) + 1))


def _inclusive_end_row(diagnostic: RuffDiagnostic) -> int:
    """The last row a diagnostic covers: a range ending at column 1 stops at the line before."""
    start, end = diagnostic.location, diagnostic.end_location
    if end.row > start.row and end.column <= 1:
        return end.row - 1
    return max(end.row, start.row)


_QUOTED = re.compile(r"`([^`]+)`")


def _first_quoted(message: str) -> str | None:
    """The first backtick-quoted token of a ruff message: the symbol it is about."""
    match = _QUOTED.search(message)
    return match.group(1) if match else None


def _safe_relative_path(path: str) -> PurePosixPath | None:
    """``path`` when it stays inside the directory it is joined to, else ``None``."""
    if not path or "\x00" in path or "\\" in path:
        return None
    candidate = PurePosixPath(path)
    if candidate.is_absolute() or any(part in ("", ".", "..") for part in candidate.parts):
        return None
    return candidate


def _batches(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for index in range(0, len(items), size):
        yield items[index : index + size]
