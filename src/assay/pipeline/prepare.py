"""Stage 1, prepare: decide what each reviewer sees, and say exactly what is left out."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from assay.diff.types import FileDiff, FileStatus

__all__ = ["PreparedDiff", "prepare_diff"]

# Files a model gains nothing from reading line by line; they are named, not sent.
_GENERATED_PATTERNS = (
    "*.lock",
    "package-lock.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "poetry.lock",
    "uv.lock",
    "Cargo.lock",
    "go.sum",
    "*.min.js",
    "*.min.css",
    "*.map",
    "*_pb2.py",
    "*_pb2_grpc.py",
    "*.pb.go",
    "vendor/*",
    "third_party/*",
    "node_modules/*",
)


@dataclass(frozen=True)
class PreparedDiff:
    """The diff split into what the model reviews and what it does not."""

    reviewable: tuple[FileDiff, ...]
    """Files sent to discovery, in the diff's order."""
    skipped: tuple[tuple[str, str], ...]
    """``(path, reason)`` for every changed file the model does not see."""
    changed_lines_total: int
    changed_lines_reviewed: int
    patch_bytes: int
    """Bytes of patch text sent to discovery."""
    truncated: bool
    """True when the token budget, not the file kind, left files out."""

    @property
    def coverage(self) -> float:
        if self.changed_lines_total == 0:
            return 1.0
        return round(self.changed_lines_reviewed / self.changed_lines_total, 4)


def prepare_diff(
    files: Sequence[FileDiff],
    *,
    max_patch_tokens: int,
    estimate_tokens: Callable[[str], int],
) -> PreparedDiff:
    """Choose the files discovery reviews within ``max_patch_tokens``.

    Binary files, pure renames and mode changes have no lines to review; generated files and
    lockfiles are named but not sent. The rest go in diff order until the budget is spent; a file
    that does not fit is skipped whole (a half file misleads the model) and the round is marked
    truncated.
    """
    reviewable: list[FileDiff] = []
    skipped: list[tuple[str, str]] = []
    total = reviewed = patch_bytes = 0
    used_tokens = 0
    truncated = False
    for file in files:
        changed = file.added_lines + file.removed_lines
        total += changed
        reason = _not_reviewable_reason(file)
        if reason is None:
            cost = estimate_tokens(file.patch)
            if used_tokens + cost > max_patch_tokens:
                reason = "over the token budget"
                truncated = True
            else:
                used_tokens += cost
        if reason is not None:
            skipped.append((file.path, reason))
            continue
        reviewable.append(file)
        reviewed += changed
        patch_bytes += len(file.patch.encode("utf-8"))
    return PreparedDiff(
        reviewable=tuple(reviewable),
        skipped=tuple(skipped),
        changed_lines_total=total,
        changed_lines_reviewed=reviewed,
        patch_bytes=patch_bytes,
        truncated=truncated,
    )


def _not_reviewable_reason(file: FileDiff) -> str | None:
    if file.is_binary:
        return "binary file"
    if not file.hunks:
        if file.status is FileStatus.RENAMED:
            return "renamed without changes"
        if file.old_mode != file.new_mode:
            return "mode change only"
        return "no textual change"
    if any(fnmatch.fnmatch(file.path, pattern) for pattern in _GENERATED_PATTERNS) or any(
        fnmatch.fnmatch(file.path.rsplit("/", 1)[-1], pattern) for pattern in _GENERATED_PATTERNS
    ):
        return "generated or vendored file"
    return None
