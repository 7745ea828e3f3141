"""Stage 1, prepare: split the diff into shards that fit the model, and say what is left out.

Every changed file lands in exactly one of three places:

- a **shard** (reviewed line by line by every rep): whole when it fits the token budget, else
  split at hunk boundaries into several partial files;
- **summarized** (named with its size, not sent): generated, vendored, lockfiles, minified
  files, and files marked ``linguist-generated``/``linguist-vendored`` in ``.gitattributes`` at
  the base revision;
- **not reviewed** (named with the reason): binary files, renames and mode changes without
  text, a single hunk larger than the budget, and whatever exceeds ``max_shards``.

``coverage`` is the fraction of changed lines of reviewable text files (not binary, not
summarized) that a shard holds; ``truncated`` is true when the budget or the shard cap, not the
kind of file, left changed lines out.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from assay.diff.types import FileDiff, FileStatus, Hunk

__all__ = ["PreparedDiff", "Shard", "generated_by_attributes", "prepare_diff"]

_GENERATED_PATTERNS = (
    "*.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "go.sum",
    "*.min.js",
    "*.min.css",
    "*.map",
    "*_pb2.py",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.pb.cc",
    "*.pb.h",
)
_VENDORED_DIRECTORIES = ("vendor/", "third_party/", "node_modules/")
_GENERATED_ATTRIBUTES = frozenset({"linguist-generated", "linguist-vendored"})


@dataclass(frozen=True)
class Shard:
    """One request's worth of diff: the same shard goes to every rep."""

    index: int
    files: tuple[FileDiff, ...]
    """Whole files, or partial files holding a subset of their hunks, in diff order."""
    tokens: int


@dataclass(frozen=True)
class PreparedDiff:
    shards: tuple[Shard, ...]
    summarized: tuple[tuple[str, str], ...]
    """``(path, note)`` for files named to the model but not sent (generated, vendored, …)."""
    not_reviewed: tuple[tuple[str, str], ...]
    """``(path, reason)`` for changed files (or hunks) no reviewer saw."""
    changed_lines_total: int
    changed_lines_reviewed: int
    patch_bytes: int
    truncated: bool

    @property
    def coverage(self) -> float:
        if self.changed_lines_total == 0:
            return 1.0
        return round(self.changed_lines_reviewed / self.changed_lines_total, 4)

    @cached_property
    def reviewed_paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.path for shard in self.shards for f in shard.files))


def prepare_diff(
    files: Sequence[FileDiff],
    *,
    max_patch_tokens: int,
    estimate_tokens: Callable[[str], int],
    max_shards: int = 8,
    generated: Callable[[str], bool] = lambda _path: False,
) -> PreparedDiff:
    """Pack the reviewable files into shards of at most ``max_patch_tokens`` each.

    Args:
        files: The parsed diff, in diff order.
        max_patch_tokens: Token budget of the diff part of one request.
        estimate_tokens: Token estimate of a text (no tokenizer downloads).
        max_shards: At most this many shards; the rest is named as not reviewed.
        generated: Extra "is this path generated?" test (``.gitattributes`` at base).
    """
    summarized: list[tuple[str, str]] = []
    not_reviewed: list[tuple[str, str]] = []
    units: list[tuple[FileDiff, int]] = []
    total = 0
    truncated = False
    for file in files:
        reason = _unreviewable_reason(file)
        if reason is not None:
            not_reviewed.append((file.path, reason))
            continue
        if _is_generated(file.path) or generated(file.path):
            summarized.append(
                (file.path, f"generated or vendored, +{file.added_lines} -{file.removed_lines}")
            )
            continue
        total += _changed(file.hunks)
        whole = estimate_tokens(file.patch)
        if whole <= max_patch_tokens:
            units.append((file, whole))
            continue
        for hunk in file.hunks:  # too big whole: split at hunk boundaries
            part = _partial(file, (hunk,))
            cost = estimate_tokens(part.patch)
            if cost > max_patch_tokens:
                not_reviewed.append((file.path, f"hunk {hunk.header} over the token budget"))
                truncated = True
            else:
                units.append((part, cost))
    shards, overflow = _pack(units, max_patch_tokens, max_shards)
    for file, _cost in overflow:
        not_reviewed.append((file.path, f"beyond {max_shards} shards"))
        truncated = True
    reviewed = sum(_changed(f.hunks) for shard in shards for f in shard.files)
    return PreparedDiff(
        shards=tuple(shards),
        summarized=tuple(summarized),
        not_reviewed=tuple(not_reviewed),
        changed_lines_total=total,
        changed_lines_reviewed=reviewed,
        patch_bytes=sum(len(f.patch.encode("utf-8")) for s in shards for f in s.files),
        truncated=truncated,
    )


def generated_by_attributes(gitattributes: str | None) -> Callable[[str], bool]:
    """A path test from ``.gitattributes`` text: ``linguist-generated``/``-vendored`` set.

    Patterns follow gitattributes for the common cases: a pattern without ``/`` matches the
    file name at any depth; with ``/`` it matches the path from the root; ``**`` spans
    directories. The last matching line wins, as in git.
    """
    rules: list[tuple[str, bool]] = []
    for raw in (gitattributes or "").splitlines():
        parts = raw.split()
        if not parts or parts[0].startswith("#"):
            continue
        pattern, attributes = parts[0], parts[1:]
        for attribute in attributes:
            name, _, value = attribute.lstrip("-!").partition("=")
            if name in _GENERATED_ATTRIBUTES:
                is_set = not attribute.startswith(("-", "!")) and value.lower() not in {"false"}
                rules.append((pattern, is_set))

    def is_generated(path: str) -> bool:
        verdict = False
        for pattern, is_set in rules:
            if _attribute_pattern_matches(pattern, path):
                verdict = is_set
        return verdict

    return is_generated


def _attribute_pattern_matches(pattern: str, path: str) -> bool:
    if "/" not in pattern.rstrip("/"):
        return fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern) or any(
            fnmatch.fnmatchcase(part, pattern.rstrip("/")) for part in path.split("/")[:-1]
        )
    anchored = pattern.lstrip("/")
    if anchored.endswith("/**"):
        return path.startswith(anchored[:-2])
    return fnmatch.fnmatchcase(path, anchored.replace("**/", "*"))


def _pack(
    units: Sequence[tuple[FileDiff, int]], budget: int, max_shards: int
) -> tuple[list[Shard], list[tuple[FileDiff, int]]]:
    """Fill shards in diff order; a unit that does not fit starts the next shard."""
    groups: list[list[tuple[FileDiff, int]]] = []
    used = 0
    for unit in units:
        if not groups or used + unit[1] > budget:
            groups.append([])
            used = 0
        groups[-1].append(unit)
        used += unit[1]
    kept, overflow = groups[:max_shards], [u for group in groups[max_shards:] for u in group]
    shards = [
        Shard(
            index=i, files=_merge_partials([f for f, _ in group]), tokens=sum(c for _, c in group)
        )
        for i, group in enumerate(kept)
    ]
    return shards, overflow


def _merge_partials(files: Sequence[FileDiff]) -> tuple[FileDiff, ...]:
    """Adjacent partial files of the same path in one shard become one partial file."""
    merged: list[FileDiff] = []
    for file in files:
        if merged and merged[-1].path == file.path:
            merged[-1] = _partial(merged[-1], merged[-1].hunks + file.hunks)
        else:
            merged.append(file)
    return tuple(merged)


def _partial(file: FileDiff, hunks: tuple[Hunk, ...]) -> FileDiff:
    header_end = file.patch.find("\n@@")
    header = file.patch[: header_end + 1] if header_end >= 0 else ""
    return file.model_copy(
        update={"hunks": hunks, "patch": header + "".join(_hunk_text(h) for h in hunks)}
    )


def _hunk_text(hunk: Hunk) -> str:
    markers = {"added": "+", "removed": "-", "context": " "}
    lines = [f"{hunk.header} {hunk.section}".rstrip()]
    lines += [f"{markers[line.kind.value]}{line.text}" for line in hunk.lines]
    return "\n".join(lines) + "\n"


def _changed(hunks: Sequence[Hunk]) -> int:
    return sum(1 for hunk in hunks for line in hunk.lines if line.kind.value != "context")


def _unreviewable_reason(file: FileDiff) -> str | None:
    if file.is_binary:
        return "binary file"
    if not file.hunks:
        if file.status is FileStatus.RENAMED:
            return "renamed without changes"
        if file.old_mode != file.new_mode:
            return "mode change only"
        return "no textual change"
    return None


def _is_generated(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    if any(path.startswith(d) or f"/{d}" in path for d in _VENDORED_DIRECTORIES):
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in _GENERATED_PATTERNS)
