"""``grep`` over the checkout: ripgrep when it can give the same answer, Python otherwise.

The answer is defined by Python's ``re`` (see ``_grep_engine``). ripgrep runs the search when
the pattern has an exact equivalent in its syntax (``_rust_regex``); it is linear-time and
much faster on large trees. Otherwise, or when ripgrep is missing or fails, the Python engine
runs in a child process with a timeout, so a catastrophically backtracking pattern costs a
tool error, not a stuck round. Both engines search the same files (regular files, symbolic
links not followed, hidden files included, ignore files ignored) and skip the same ones
(binary, not UTF-8), and the lines shown come from the same decoding, so the text the model
gets does not depend on the engine.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import structlog

from assay.tools._errors import ToolError
from assay.tools._grep_engine import decode_text_file, display_line
from assay.tools._paths import GlobPattern
from assay.tools._rust_regex import to_rust_regex

__all__ = ["GrepHits", "GrepQuery", "find_ripgrep", "run_grep"]

log = structlog.get_logger(__name__)

_ENGINE_SCRIPT = Path(__file__).with_name("_grep_engine.py")
_RIPGREP_NAME = "rg.exe" if os.name == "nt" else "rg"
_MIN_RIPGREP_MAJOR = 13
_RIPGREP_FLAGS = (
    "--no-config",  # no RIPGREP_CONFIG_PATH of the user's
    "--hidden",
    "--no-ignore",  # tracked files listed in a .gitignore are still files of the change
    "--encoding=none",  # raw bytes: no BOM sniffing, as the Python engine reads them
    "--line-number",
    "--with-filename",
    "--no-heading",
    "--null",
    "--color=never",
)


@dataclass(frozen=True)
class GrepQuery:
    """One search, validated."""

    pattern: str
    """A Python regular expression (already escaped for a fixed-string search)."""
    glob: GlobPattern | None
    max_shown: int
    line_chars: int
    timeout_s: float


@dataclass(frozen=True)
class GrepHits:
    """What a search found."""

    counts: tuple[tuple[str, int], ...]
    """Matching lines per file, in path order (files without a match left out)."""
    shown: tuple[tuple[str, int, str], ...]
    """The first matching lines: path, line number, text (cut)."""
    engine: str
    """``"ripgrep"`` or ``"python"`` (for the logs; the answer does not depend on it)."""


def run_grep(root: Path, query: GrepQuery, ripgrep: Path | None) -> GrepHits:
    """Search the checkout.

    Args:
        root: The checkout's directory (resolved).
        query: The search.
        ripgrep: The ``rg`` binary, or ``None`` for the Python engine only.

    Returns:
        The hits.

    Raises:
        ToolError: The search timed out or could not run.
    """
    rust_pattern = to_rust_regex(query.pattern) if ripgrep is not None else None
    if ripgrep is not None and rust_pattern is not None:
        found = _run_ripgrep(root, query, ripgrep, rust_pattern)
        if found is not None:
            return found
    return _run_python(root, query)


@functools.cache
def find_ripgrep() -> Path | None:
    """Locate a usable ``rg`` (13 or newer): beside this Python first, then on ``PATH``.

    The ``ripgrep`` wheel installs ``rg`` into the environment's scripts directory, which is
    not on ``PATH`` when the environment is not activated.

    Returns:
        The binary, or ``None``.
    """
    candidates = [
        Path(sysconfig.get_path("scripts")) / _RIPGREP_NAME,
        Path(sys.executable).parent / _RIPGREP_NAME,
    ]
    on_path = shutil.which(_RIPGREP_NAME)
    if on_path:
        candidates.append(Path(on_path))
    for candidate in candidates:
        if candidate.is_file() and _ripgrep_version_ok(candidate):
            return candidate
    return None


def _ripgrep_version_ok(binary: Path) -> bool:
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    match = re.match(rb"ripgrep (\d+)\.", done.stdout)
    return done.returncode == 0 and match is not None and int(match[1]) >= _MIN_RIPGREP_MAJOR


def _run_ripgrep(root: Path, query: GrepQuery, binary: Path, pattern: str) -> GrepHits | None:
    """ripgrep's line numbers, decoded and shown like the Python engine; ``None``: use Python."""
    command = [str(binary), *_RIPGREP_FLAGS, "--regexp", pattern, "--", "."]
    try:
        done = subprocess.run(
            command,
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=query.timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise ToolError(f"grep timed out after {query.timeout_s:g} s; narrow the search") from error
    except OSError as error:
        log.warning("tools.ripgrep_failed", error=str(error))
        return None
    if done.returncode not in (0, 1):
        # A pattern ripgrep refuses (size limits) or an unreadable file: Python decides.
        log.info("tools.ripgrep_fallback", status=done.returncode, stderr=done.stderr[:300])
        return None
    lines_by_file = _parse_ripgrep_output(done.stdout)
    counts: list[tuple[str, int]] = []
    shown: list[tuple[str, int, str]] = []
    for path in sorted(lines_by_file):
        if query.glob is not None and not query.glob.matches(path):
            continue
        try:
            lines = decode_text_file((root / path).read_bytes())
        except OSError:
            continue
        if lines is None:
            continue  # binary or not UTF-8: the Python engine skips it too
        numbers = sorted(number for number in lines_by_file[path] if number <= len(lines))
        if not numbers:
            continue
        counts.append((path, len(numbers)))
        for number in numbers[: max(0, query.max_shown - len(shown))]:
            shown.append((path, number, display_line(lines[number - 1], query.line_chars)))
    return GrepHits(counts=tuple(counts), shown=tuple(shown), engine="ripgrep")


def _parse_ripgrep_output(output: bytes) -> dict[str, set[int]]:
    """Read ``./path NUL number : text LF`` records (a path may hold a newline, never a NUL)."""
    found: dict[str, set[int]] = {}
    position = 0
    while position < len(output):
        path_end = output.find(b"\0", position)
        number_end = output.find(b":", path_end + 1) if path_end >= 0 else -1
        if number_end < 0:
            break
        path = output[position:path_end].decode("utf-8", "surrogateescape").removeprefix("./")
        number = output[path_end + 1 : number_end]
        if number.isdigit():
            found.setdefault(path, set()).add(int(number))
        line_end = output.find(b"\n", number_end)
        position = len(output) if line_end < 0 else line_end + 1
    return found


def _run_python(root: Path, query: GrepQuery) -> GrepHits:
    files = [
        path for path in _regular_files(root) if query.glob is None or query.glob.matches(path)
    ]
    request = {
        "root": str(root),
        "files": files,
        "pattern": query.pattern,
        "max_shown": query.max_shown,
        "line_chars": query.line_chars,
    }
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", str(_ENGINE_SCRIPT)],
            input=json.dumps(request, ensure_ascii=True).encode("ascii"),
            capture_output=True,
            timeout=query.timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise ToolError(
            f"grep timed out after {query.timeout_s:g} s: the pattern may backtrack "
            "catastrophically (nested repetition such as (a+)+ or .*.*); simplify it"
        ) from error
    if done.returncode != 0:
        log.warning("tools.grep_engine_failed", status=done.returncode, stderr=done.stderr[-500:])
        raise ToolError("grep failed to run; try a simpler pattern")
    try:
        result = json.loads(done.stdout)
    except ValueError as error:
        log.warning("tools.grep_engine_output", stdout=done.stdout[:300])
        raise ToolError("grep failed to run; try a simpler pattern") from error
    return GrepHits(
        counts=tuple((str(path), int(count)) for path, count in result["counts"]),
        shown=tuple((str(path), int(number), str(text)) for path, number, text in result["shown"]),
        engine="python",
    )


def _regular_files(root: Path) -> list[str]:
    """Every regular file below ``root``, relative and sorted; symbolic links are not followed."""
    found: list[str] = []
    pending = [""]
    while pending:
        relative = pending.pop()
        try:
            entries = list(os.scandir(root / relative if relative else root))
        except OSError:
            continue
        for entry in entries:
            path = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_dir(follow_symlinks=False):
                pending.append(path)
            elif entry.is_file(follow_symlinks=False):
                found.append(path)
    return sorted(found)
