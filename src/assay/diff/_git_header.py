"""The extended header of one file in a ``git diff``: paths, status, modes, binary marker.

``unidiff`` reads hunks well but not git's headers: it leaves C-quoted paths quoted, reports a
copy as a rename, takes the unchanged mode from the ``index`` line as if it were a change, and
cannot split ``diff --git a/x b/y b/x b/y`` (a path containing `` b/``). Git states every
fact we need on a line of its own, so we read them here and leave only hunks to ``unidiff``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.diff.types import FileStatus
from assay.errors import DiffError

__all__ = ["GitFileHeader", "parse_git_file_header", "strip_line_end", "unquote_c_path"]

_DEV_NULL = "/dev/null"
# Prefix pairs git writes: a/ b/ by default; c/ i/ w/ o/ with diff.mnemonicPrefix;
# 1/ 2/ for --no-index.
_PREFIX_PAIRS = frozenset({("a/", "b/"), ("c/", "w/"), ("c/", "i/"), ("i/", "w/"), ("o/", "w/")})
_PREFIX_PAIRS_WITH_NO_INDEX = _PREFIX_PAIRS | {("1/", "2/")}
_ESCAPED_BYTES = {
    "a": 0x07,
    "b": 0x08,
    "t": 0x09,
    "n": 0x0A,
    "v": 0x0B,
    "f": 0x0C,
    "r": 0x0D,
    '"': 0x22,
    "\\": 0x5C,
}
_OCTAL_ESCAPE = re.compile(r"[0-3][0-7]{2}")
_HEADER_VALUE = re.compile(
    r"^(old mode|new mode|deleted file mode|new file mode|rename from|rename to|copy from"
    r"|copy to|similarity index|dissimilarity index|index) (.*)$"
)


@dataclass(frozen=True, slots=True)
class GitFileHeader:
    """What the lines between ``diff --git`` and the first hunk say about one file."""

    path: str
    old_path: str | None
    status: FileStatus
    is_binary: bool
    old_mode: str | None
    new_mode: str | None
    hunks_start: int | None
    """Index (in the section's lines) of the ``---`` line, or ``None`` when there are no hunks."""
    end: int
    """Index just past the header; where the payload of a binary patch starts."""


def strip_line_end(line: str) -> str:
    """``line`` without its ``\\n`` or ``\\r\\n``."""
    if line.endswith("\n"):
        line = line[:-1]
    return line.removesuffix("\r")


def unquote_c_path(token: str) -> tuple[str, str]:
    """Decode a path git wrote C-quoted (``"tab\\there"``, ``"caf\\303\\251"``).

    Args:
        token: Text starting with the opening double quote.

    Returns:
        The decoded path and the text after the closing quote.

    Raises:
        DiffError: The quoting is malformed.
    """
    decoded = bytearray()
    index = 1
    while index < len(token):
        char = token[index]
        if char == '"':
            return decoded.decode("utf-8", "replace"), token[index + 1 :]
        if char != "\\":
            decoded += char.encode("utf-8")
            index += 1
            continue
        escape = token[index + 1 : index + 2]
        if escape in _ESCAPED_BYTES:
            decoded.append(_ESCAPED_BYTES[escape])
            index += 2
        elif _OCTAL_ESCAPE.fullmatch(token[index + 1 : index + 4]):
            decoded.append(int(token[index + 1 : index + 4], 8))
            index += 4
        else:
            raise DiffError(f"bad escape in quoted path: {token[:200]}")
    raise DiffError(f"unterminated quoted path: {token[:200]}")


def _path_value(text: str) -> str:
    """A path as written after ``rename from`` or ``---``: maybe quoted, maybe tab-terminated."""
    if text.startswith('"'):
        return unquote_c_path(text)[0]
    # Git ends ---/+++ names containing a space with a tab; other tools put a timestamp there.
    return text.split("\t", 1)[0]


def _split_diff_git_line(rest: str) -> tuple[str, str] | None:
    """Split the two names after ``diff --git``; ``None`` when they cannot be told apart."""
    if rest.startswith('"'):
        first, remainder = unquote_c_path(rest)
        if not remainder.startswith(" "):
            return None
        second = remainder[1:]
        return first, unquote_c_path(second)[0] if second.startswith('"') else second
    if '"' in rest and rest.endswith('"'):
        # An unquoted name cannot contain a double quote, so the quoted one starts at ` "`.
        first, _, second = rest.partition(' "')
        return first, unquote_c_path('"' + second)[0]
    # Both names unquoted and possibly containing spaces. Without a rename both name the
    # same path, so the line is symmetric around its middle space.
    if len(rest) % 2 == 1:
        middle = len(rest) // 2
        first, second = rest[:middle], rest[middle + 1 :]
        if rest[middle] == " " and first[2:] == second[2:]:
            return first, second
    first, separator, second = rest.partition(" b/")
    return (first, "b/" + second) if separator else None


def _prefixes(first: str, second: str) -> tuple[str, str]:
    pair = (first[:2], second[:2])
    return pair if pair in _PREFIX_PAIRS_WITH_NO_INDEX else ("", "")


@dataclass(slots=True)
class _HeaderFacts:
    rename_from: str | None = None
    rename_to: str | None = None
    copy_from: str | None = None
    copy_to: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    deleted: bool = False
    added: bool = False
    is_binary: bool = False
    minus_path: str | None = None
    plus_path: str | None = None
    hunks_start: int | None = None
    end: int = 0


def _read_header_lines(lines: list[str]) -> _HeaderFacts:
    facts = _HeaderFacts(end=len(lines))
    for index in range(1, len(lines)):
        line = strip_line_end(lines[index])
        if (
            line.startswith("--- ")
            and index + 1 < len(lines)
            and lines[index + 1].startswith("+++ ")
        ):
            facts.minus_path = line[4:]
            facts.plus_path = strip_line_end(lines[index + 1])[4:]
            facts.hunks_start, facts.end = index, index
            return facts
        if line.startswith("@@"):
            raise DiffError(f"hunk without ---/+++ file names after: {strip_line_end(lines[0])}")
        if line.startswith("Binary files ") or line == "GIT binary patch":
            facts.is_binary = True
            facts.end = index + 1
            return facts
        match = _HEADER_VALUE.match(line)
        if match is not None:
            _record(facts, match.group(1), match.group(2))
    return facts


def _record(facts: _HeaderFacts, key: str, value: str) -> None:
    if key == "old mode":
        facts.old_mode = value
    elif key == "new mode":
        facts.new_mode = value
    elif key == "deleted file mode":
        facts.deleted, facts.old_mode = True, value
    elif key == "new file mode":
        facts.added, facts.new_mode = True, value
    elif key == "rename from":
        facts.rename_from = _path_value(value)
    elif key == "rename to":
        facts.rename_to = _path_value(value)
    elif key == "copy from":
        facts.copy_from = _path_value(value)
    elif key == "copy to":
        facts.copy_to = _path_value(value)


def _file_name(raw: str | None, prefix: str) -> str | None:
    if raw is None:
        return None
    name = _path_value(raw)
    if name == _DEV_NULL:
        return None
    return name.removeprefix(prefix) if prefix else name


def parse_git_file_header(lines: list[str]) -> GitFileHeader:
    """Read the header of one file's section of a ``git diff``.

    Args:
        lines: The section's lines (with line ends), starting with its ``diff --git`` line.

    Returns:
        Paths (unquoted, without ``a/``/``b/``), status, modes, binary marker and where the
        hunks start.

    Raises:
        DiffError: The file names cannot be read.
    """
    first_line = strip_line_end(lines[0])
    names = _split_diff_git_line(first_line.removeprefix("diff --git "))
    old_prefix, new_prefix = _prefixes(*names) if names else ("a/", "b/")
    header_old = names[0].removeprefix(old_prefix) if names else None
    header_new = names[1].removeprefix(new_prefix) if names else None
    facts = _read_header_lines(lines)

    old_path = (
        facts.rename_from
        or facts.copy_from
        or _file_name(facts.minus_path, old_prefix)
        or (None if facts.added else header_old)
    )
    new_path = (
        facts.rename_to
        or facts.copy_to
        or _file_name(facts.plus_path, new_prefix)
        or (None if facts.deleted else header_new)
    )
    if facts.deleted:
        status, path = FileStatus.DELETED, old_path or header_old
    elif facts.added:
        status, path = FileStatus.ADDED, new_path or header_new
    elif facts.copy_from is not None or facts.copy_to is not None:
        status, path = FileStatus.COPIED, new_path
    elif facts.rename_from is not None or facts.rename_to is not None:
        status, path = FileStatus.RENAMED, new_path
    else:
        status, path = FileStatus.MODIFIED, new_path or old_path
    if not path:
        raise DiffError(f"cannot read the file names in: {first_line[:200]}")
    keeps_old_path = status in (FileStatus.RENAMED, FileStatus.COPIED) and old_path != path
    return GitFileHeader(
        path=path,
        old_path=old_path if keeps_old_path else None,
        status=status,
        is_binary=facts.is_binary,
        old_mode=facts.old_mode,
        new_mode=facts.new_mode,
        hunks_start=facts.hunks_start,
        end=facts.end,
    )
