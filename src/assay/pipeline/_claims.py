"""Deterministic claim checkers: what a claim says about the repository, checked without a model.

Each checker reads one revision (head or base, as the claim says) through a ``RevisionReader``
and answers ``verified``, ``refuted`` or ``unverified`` with a ``detail`` saying what it saw.
``unverified`` is the honest answer whenever the check itself is uncertain (a heuristic, a scan
cut short, a file too large or binary): an unverified claim cannot make a finding block, and it
does not downgrade one the way a refuted claim does.

How each kind is checked (``docs/gate.md`` has the full rules):

- ``line_contains``: line ``line`` of ``path`` contains ``needle`` (exact substring first, then
  ignoring whitespace differences); then lines within ``LINE_TOLERANCE`` of it, and the detail
  says which line matched. A ``path`` that does not exist is resolved to the one file whose path
  ends with it (a model may drop leading directories); no such file refutes the claim, several
  leave it unverified.
- ``pattern_count``: ``needle`` is a fixed string (never a regex: a pattern from a pull request
  could backtrack for hours); counted in ``path`` (a file, a directory or a glob) or in the whole
  revision. Both readings of "occurs N times" verify: occurrences and matching lines.
- ``symbol_defined`` / ``symbol_undefined``: Python files are parsed (``ast``); other files use
  a keyword-declaration heuristic whose only certain answers are "declared by a keyword form"
  and "the name does not occur at all".
- ``file_exists`` / ``file_absent``: the exact path at the revision.

Work is bounded: files over ``MAX_FILE_BYTES`` and binary files are not read as text, and a
revision-wide scan reads at most ``MAX_SCAN_BYTES``; a count or a search that could not see
everything it needed is unverified, unless what it saw already refutes the claim.
"""

from __future__ import annotations

import builtins
import fnmatch
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from assay.forge.base import RevisionReader
from assay.model import Claim, ClaimCheck, ClaimKind, ClaimStatus
from assay.pipeline._claim_symbols import Certainty, SymbolLookup, lookup_symbol

__all__ = [
    "LINE_TOLERANCE",
    "MAX_FILE_BYTES",
    "MAX_SCAN_BYTES",
    "RevisionText",
    "check_deterministic_claim",
    "clean_path",
    "free_claim_obstacle",
    "hedge_in",
]

MAX_FILE_BYTES = 1_000_000
"""Files larger than this are not read as text (a claim about them is unverified)."""
MAX_SCAN_BYTES = 32_000_000
"""Bytes one revision-wide scan may read (and the text cache may hold) per fact-check run."""
LINE_TOLERANCE = 2
"""A ``line_contains`` needle found this many lines away from the cited line still verifies."""

_BINARY_SNIFF_BYTES = 8000
_SHOWN_CHARS = 120
_GLOB_CHARS = frozenset("*?[")
_SYMBOL = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")

# Words that make a statement a guess. "不可能" (impossible) is a firm statement, not a hedge.
_HEDGES = re.compile(
    r"\b(?:probably|possibly|perhaps|maybe|may|might|could|likely|unlikely|presumably|"
    r"potentially|apparently|seemingly|seems?|appears?\s+to|suspect(?:ed|s)?|not\s+sure|"
    r"unclear|i\s+think|i\s+believe|i\s+guess)\b"
    r"|(?<!不)可能|也许|或许|大概|似乎|好像|看起来|估计|应该是|疑似|不确定|猜测|推测|恐怕|未必|或将",
    re.IGNORECASE,
)
# ``path:line`` cited in a claim's text (``free_claim_obstacle`` keeps only paths with a directory
# or an extension, so "localhost:8080" is not taken for a file).
_TEXT_REFERENCE = re.compile(r"(?<![\w/.\-])(?P<path>[\w.\-]+(?:/[\w.\-]+)*):(?P<line>\d+)")

FileStatus = Literal["ok", "absent", "binary", "too_large"]


@dataclass(frozen=True)
class FileText:
    status: FileStatus
    text: str = ""


class RevisionText:
    """The text files of one revision, read on demand through its reader and cached (bounded).

    One instance serves every claim of a fact-check run, so a file several claims cite is read
    once. Only text is cached, at most ``MAX_SCAN_BYTES`` of it.

    Args:
        reader: The revision's reader.
        name: ``"head"`` or ``"base"`` (named in details).
    """

    def __init__(self, reader: RevisionReader, name: str) -> None:
        self.name = name
        self._reader = reader
        self._cache: dict[str, FileText] = {}
        self._cached_bytes = 0
        self._paths: tuple[str, ...] | None = None
        self._path_set: frozenset[str] = frozenset()

    def paths(self) -> tuple[str, ...]:
        """Every file path of the revision (listed once)."""
        if self._paths is None:
            self._paths = tuple(self._reader.list_files())
            self._path_set = frozenset(self._paths)
        return self._paths

    def exists(self, path: str) -> bool:
        return self._reader.exists(path)

    def file(self, path: str) -> FileText:
        """The file's text, or why there is none (absent, binary, larger than the limit)."""
        cached = self._cache.get(path)
        if cached is not None:
            return cached
        data = self._reader.read(path)
        if data is None:
            found = FileText("absent")
        elif len(data) > MAX_FILE_BYTES:
            found = FileText("too_large")
        elif b"\0" in data[:_BINARY_SNIFF_BYTES]:
            found = FileText("binary")
        else:
            found = FileText("ok", data.decode("utf-8", errors="replace"))
        size = len(found.text)
        if self._cached_bytes + size <= MAX_SCAN_BYTES:
            self._cache[path] = found
            self._cached_bytes += size
        return found

    def candidates(self, path: str) -> tuple[str, ...]:
        """``(path,)`` if it is a file here, else every file whose path ends with ``/path``
        (a model may drop leading directories)."""
        listed = self.paths()
        if path in self._path_set:
            return (path,)
        suffix = "/" + path
        return tuple(candidate for candidate in listed if candidate.endswith(suffix))


@dataclass
class _Scan:
    """What a revision-wide scan could and could not read."""

    files: int = 0
    read_bytes: int = 0
    too_large: int = 0
    binary: int = 0
    cut_short: bool = False

    @property
    def complete(self) -> bool:
        """Every text file in scope was read (binary files do not count: they hold no code)."""
        return not self.too_large and not self.cut_short

    def note(self) -> str:
        parts = [f"{self.files} file(s) scanned"]
        if self.binary:
            parts.append(f"{self.binary} binary skipped")
        if self.too_large:
            parts.append(f"{self.too_large} over {MAX_FILE_BYTES} bytes not read")
        if self.cut_short:
            parts.append(f"scan stopped at {MAX_SCAN_BYTES} bytes")
        return ", ".join(parts)


def _scan(revision: RevisionText, paths: Iterable[str], scan: _Scan) -> Iterator[tuple[str, str]]:
    for path in paths:
        found = revision.file(path)
        if found.status == "too_large":
            scan.too_large += 1
            continue
        if found.status == "binary":
            scan.binary += 1
            continue
        if found.status != "ok":
            continue
        if scan.read_bytes + len(found.text) > MAX_SCAN_BYTES:
            scan.cut_short = True
            return
        scan.read_bytes += len(found.text)
        scan.files += 1
        yield path, found.text


def clean_path(path: str | None) -> str | None:
    """A repository-relative ``/`` path, or ``None`` when it is empty or tries to leave the
    repository (``..``, NUL, newlines)."""
    if path is None:
        return None
    cleaned = path.strip().replace("\\", "/")
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    cleaned = cleaned.lstrip("/")
    parts = cleaned.split("/")
    if not cleaned or ".." in parts or any(char in cleaned for char in "\0\n\r"):
        return None
    return cleaned


def hedge_in(text: str) -> str | None:
    """The first hedging word of ``text`` ("probably", "may", "可能" …), or ``None``."""
    found = _HEDGES.search(text)
    return found.group(0) if found is not None else None


def free_claim_obstacle(claim: Claim, *, head: RevisionText, base: RevisionText) -> str | None:
    """Why a free-text claim cannot be checked against the repository, or ``None`` if it can.

    A hedged claim is a guess, not a fact; a claim that cites a file that is not there, or a
    line past its end, is about code that is not there. Either is unverified without asking a
    model (a model asked about absent code tends to agree).

    Args:
        claim: A ``free`` claim.
        head: The head revision's text.
        base: The base revision's text.

    Returns:
        The reason, or ``None``.
    """
    hedge = hedge_in(claim.text)
    if hedge is not None:
        return f"hedged (“{hedge}”): a guess, not a checkable fact"
    revision = head if claim.revision == "head" else base
    references: list[tuple[str, int | None]] = []
    if claim.path is not None and claim.path.strip():
        cleaned = clean_path(claim.path)
        if cleaned is None:
            return "the claim's path is not usable"
        references.append((cleaned, claim.line))
    for match in _TEXT_REFERENCE.finditer(claim.text):
        cited = match.group("path")
        extension = cited.rpartition("/")[2].rpartition(".")[2]
        if "/" in cited or (extension != cited and extension[:1].isalpha()):
            references.append((cited, int(match.group("line"))))
    for path, line in references:
        missing = _missing(path, line, revision)
        if missing is not None:
            return missing
    return None


def _missing(path: str, line: int | None, revision: RevisionText) -> str | None:
    candidates = revision.candidates(path)
    if not candidates:
        prefix = path.rstrip("/") + "/"
        if any(listed.startswith(prefix) for listed in revision.paths()):
            return None  # a directory
        return f"cites {path}, which does not exist at {revision.name}"
    if line is None or len(candidates) > 1:
        return None
    found = revision.file(candidates[0])
    if found.status != "ok":
        return None
    length = len(found.text.split("\n"))
    if line > length:
        return f"cites {path}:{line}, but the file has {length} lines at {revision.name}"
    return None


def check_deterministic_claim(
    claim: Claim, *, head: RevisionText, base: RevisionText
) -> ClaimCheck | None:
    """Check a claim of a deterministic kind against its revision.

    Args:
        claim: The claim (untrusted: its path, needle and numbers come from a model).
        head: The head revision's text.
        base: The base revision's text.

    Returns:
        The check, or ``None`` for a ``free`` claim (a model checks those).
    """
    if claim.kind is ClaimKind.FREE:
        return None
    revision = head if claim.revision == "head" else base
    if claim.kind is ClaimKind.PATTERN_COUNT:
        return _pattern_count(claim, revision)
    if claim.kind in (ClaimKind.SYMBOL_DEFINED, ClaimKind.SYMBOL_UNDEFINED):
        return _symbol(claim, revision)
    path = clean_path(claim.path)
    if path is None:
        return _check(claim, ClaimStatus.UNVERIFIED, "no usable path in the claim")
    if claim.kind is ClaimKind.LINE_CONTAINS:
        return _line_contains(claim, path, revision)
    exists = revision.exists(path)
    wanted = claim.kind is ClaimKind.FILE_EXISTS
    where = "exists" if exists else "does not exist"
    status = ClaimStatus.VERIFIED if exists == wanted else ClaimStatus.REFUTED
    return _check(claim, status, f"{path} {where} at {revision.name}")


def _check(claim: Claim, status: ClaimStatus, detail: str) -> ClaimCheck:
    return ClaimCheck(claim=claim, status=status, detail=detail, method="deterministic")


def _shown(text: str) -> str:
    return " ".join(text.split())[:_SHOWN_CHARS]


# line_contains


def _line_contains(claim: Claim, path: str, revision: RevisionText) -> ClaimCheck:
    needle = (claim.needle or "").strip()
    if not needle or claim.line is None:
        return _check(claim, ClaimStatus.UNVERIFIED, "the claim names no line or no text")
    candidates = revision.candidates(path)
    if not candidates:
        return _check(claim, ClaimStatus.REFUTED, f"{path} does not exist at {revision.name}")
    if len(candidates) > 1:
        detail = f"{path} matches {len(candidates)} files at {revision.name}"
        return _check(claim, ClaimStatus.UNVERIFIED, detail)
    resolved = candidates[0]
    found = revision.file(resolved)
    if found.status != "ok":
        detail = f"{resolved} is {found.status.replace('_', ' ')}: not read as text"
        return _check(claim, ClaimStatus.UNVERIFIED, detail)
    shown_path = resolved if resolved == path else f"{resolved} (cited as {path})"
    lines = found.text.split("\n")
    span = max(1, len(needle.splitlines()))
    cited = claim.line
    # The cited line first, then its neighbours, nearest first.
    order = [cited] + [
        cited + sign * offset for offset in range(1, LINE_TOLERANCE + 1) for sign in (-1, 1)
    ]
    for number in order:
        how = _segment_contains(lines, number, span, needle)
        if how is None:
            continue
        where = f"line {cited}" if number == cited else f"line {number} ({number - cited:+d})"
        return _check(claim, ClaimStatus.VERIFIED, f"{shown_path} {where} contains it{how}")
    if cited > len(lines):
        seen = f"{shown_path} has {len(lines)} lines"
    else:
        seen = f"{shown_path} line {cited} is `{_shown(lines[cited - 1])}`"
    elsewhere = [
        number
        for number in range(1, len(lines) + 1)
        if _segment_contains(lines, number, span, needle) is not None
    ]
    tail = f"; it occurs at line(s) {', '.join(map(str, elsewhere[:5]))}" if elsewhere else ""
    detail = f"{seen}; the text is not within ±{LINE_TOLERANCE} lines{tail}"
    return _check(claim, ClaimStatus.REFUTED, detail)


def _segment_contains(lines: Sequence[str], number: int, span: int, needle: str) -> str | None:
    """``""`` when lines ``number``… contain ``needle`` exactly, a note when they do only with
    whitespace folded, ``None`` when they do not."""
    if number < 1 or number > len(lines):
        return None
    segment = "\n".join(lines[number - 1 : number - 1 + span])
    if needle in segment:
        return ""
    if " ".join(needle.split()) in " ".join(segment.split()):
        return " (ignoring whitespace)"
    return None


# pattern_count


@dataclass(frozen=True)
class _Scope:
    paths: tuple[str, ...]
    label: str
    problem: str | None = None
    """Why the scope is uncertain (a path that matches several files)."""


def _scope(path: str | None, revision: RevisionText) -> _Scope:
    """The files a count or a search covers: one file, a directory, a glob or everything."""
    listed = revision.paths()
    if path is None:
        return _Scope(listed, f"all of {revision.name}")
    label = f"{path} at {revision.name}"
    if _GLOB_CHARS & set(path):
        return _Scope(tuple(p for p in listed if fnmatch.fnmatchcase(p, path)), label)
    candidates = revision.candidates(path)
    if len(candidates) == 1:
        return _Scope(candidates, f"{candidates[0]} at {revision.name}")
    if len(candidates) > 1:
        return _Scope((), label, f"{path} matches {len(candidates)} files")
    prefix = path.rstrip("/") + "/"
    return _Scope(tuple(p for p in listed if p.startswith(prefix)), label)


def _claim_path(claim: Claim) -> tuple[str | None, bool]:
    """The claim's cleaned path (``None``: none given) and whether a given path was unusable."""
    if claim.path is None or not claim.path.strip():
        return None, False
    cleaned = clean_path(claim.path)
    return cleaned, cleaned is None


def _pattern_count(claim: Claim, revision: RevisionText) -> ClaimCheck:
    needle, claimed = claim.needle, claim.count
    if not needle or claimed is None:
        return _check(claim, ClaimStatus.UNVERIFIED, "the claim names no text or no count")
    path, unusable = _claim_path(claim)
    if unusable:
        return _check(claim, ClaimStatus.UNVERIFIED, "the claim's path is not usable")
    scope = _scope(path, revision)
    if scope.problem is not None:
        return _check(claim, ClaimStatus.UNVERIFIED, scope.problem)
    if not scope.paths:
        status = ClaimStatus.REFUTED if claimed > 0 else ClaimStatus.UNVERIFIED
        return _check(claim, status, f"no file matches {scope.label}")
    scan = _Scan()
    occurrences = matching_lines = 0
    multi_line = "\n" in needle
    for _, text in _scan(revision, scope.paths, scan):
        found = text.count(needle)
        if found:
            occurrences += found
            matching_lines += (
                found if multi_line else sum(needle in line for line in text.split("\n"))
            )
    seen = (
        f"{occurrences} occurrence(s) on {matching_lines} line(s) in {scope.label}, "
        f"claimed {claimed} ({scan.note()})"
    )
    if claimed in (occurrences, matching_lines) and scan.complete:
        return _check(claim, ClaimStatus.VERIFIED, seen)
    if matching_lines > claimed or scan.complete:
        # Counts only grow with more files: a partial count already above the claim refutes it.
        return _check(claim, ClaimStatus.REFUTED, seen)
    return _check(claim, ClaimStatus.UNVERIFIED, f"{seen}; the count is only a lower bound")


# symbol_defined / symbol_undefined


def _symbol(claim: Claim, revision: RevisionText) -> ClaimCheck:
    symbol = (claim.needle or "").strip().removesuffix("()")
    if not _SYMBOL.fullmatch(symbol):
        return _check(claim, ClaimStatus.UNVERIFIED, f"`{_shown(symbol)}` is not a symbol name")
    wants_defined = claim.kind is ClaimKind.SYMBOL_DEFINED
    path, unusable = _claim_path(claim)
    if unusable:
        return _check(claim, ClaimStatus.UNVERIFIED, "the claim's path is not usable")
    if not wants_defined and symbol in vars(builtins) and (path or ".py").endswith(".py"):
        # Not defined in the file, yet never a NameError: the claim's point would be wrong.
        return _check(claim, ClaimStatus.UNVERIFIED, f"{symbol} is a Python builtin")
    scope = _scope(path, revision)
    if scope.problem is not None:
        return _check(claim, ClaimStatus.UNVERIFIED, scope.problem)
    if not scope.paths:
        status = ClaimStatus.REFUTED if wants_defined else ClaimStatus.UNVERIFIED
        return _check(claim, status, f"no file matches {scope.label}")
    lookup = _find_symbol(symbol, scope.paths, revision)
    detail = f"{symbol} in {scope.label}: {lookup.detail}"
    if lookup.answer == "unknown" or (lookup.answer == "nested" and not wants_defined):
        return _check(claim, ClaimStatus.UNVERIFIED, detail)
    if lookup.answer == "nested":
        return _check(claim, ClaimStatus.VERIFIED, detail)
    holds = (lookup.answer == "defined") == wants_defined
    return _check(claim, ClaimStatus.VERIFIED if holds else ClaimStatus.REFUTED, detail)


def _find_symbol(symbol: str, paths: Sequence[str], revision: RevisionText) -> SymbolLookup:
    scan = _Scan()
    found: dict[Certainty, str] = {}
    for path, text in _scan(revision, paths, scan):
        lookup = lookup_symbol(symbol, path, text)
        if lookup.answer == "defined":
            return SymbolLookup("defined", f"{path}: {lookup.detail}")
        found.setdefault(lookup.answer, f"{path}: {lookup.detail}")
    for answer in ("nested", "unknown"):
        if answer in found:
            return SymbolLookup(answer, found[answer])
    if not scan.complete:
        return SymbolLookup("unknown", f"not found, but the scan was incomplete ({scan.note()})")
    return SymbolLookup("absent", f"not defined ({scan.note()})")
