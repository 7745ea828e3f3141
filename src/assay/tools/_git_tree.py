"""Reading a commit's tree, and writing it out as real files for the tools to search.

The checkout is written from ``git ls-tree`` and one ``git cat-file --batch`` stream rather
than from ``git archive``: archive applies the *reviewed* repository's ``export-ignore`` and
``export-subst`` attributes, so a pull request could hide a file from the reviewer's tools or
rewrite what they see. Blobs are written byte for byte, never executable; the user's repository
is only read (no worktree, no index, no lock).

The same checks as ``tarfile``'s ``data`` filter are applied: no absolute or ``..`` paths, no
path written through a symbolic link (links are created last, files are opened with
``O_NOFOLLOW | O_EXCL``), no link that resolves outside the checkout (such links are not created
and are reported instead).
"""

from __future__ import annotations

import os
import posixpath
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from assay.errors import GitError

# The sanitized environment GitRepo runs git with (no GIT_DIR & co. from a hook, C locale).
from assay.forge.git import GitRepo, git_environment
from assay.tools._errors import ToolError
from assay.tools._paths import normalize_relative_path

__all__ = ["MaterializeStats", "TreeEntry", "materialize_tree", "read_tree"]

EntryKind = Literal["file", "symlink", "submodule"]

_FILE_MODES = frozenset({"100644", "100755", "100664"})
_SYMLINK_MODE = "120000"
_SUBMODULE_MODE = "160000"
_GIT_TIMEOUT_S = 300.0
_OPEN_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One path of a commit's tree (directories are implied by their files)."""

    path: str
    mode: str
    """Git's octal mode: ``100644``/``100755`` file, ``120000`` symbolic link, ``160000``
    submodule."""
    object_id: str

    @property
    def kind(self) -> EntryKind:
        """``"file"``, ``"symlink"`` or ``"submodule"``."""
        if self.mode == _SYMLINK_MODE:
            return "symlink"
        if self.mode == _SUBMODULE_MODE:
            return "submodule"
        return "file"


@dataclass(frozen=True)
class MaterializeStats:
    """What writing a checkout took."""

    files: int
    symlinks: int
    bytes_written: int
    seconds: float
    refused_links: Mapping[str, str] = field(default_factory=dict)
    """Symbolic links not created because they point outside the checkout: path → target."""
    skipped: tuple[str, ...] = ()
    """Tree paths that could not be written (unsafe names, conflicts, missing objects)."""


def read_tree(repo: GitRepo, commit: str) -> dict[str, TreeEntry]:
    """List every file, symbolic link and submodule of ``commit``'s tree.

    Paths that are not valid repository-relative paths (absolute, ``..``) are left out: a
    well-formed tree never has them, and a crafted one must not get them into the sandbox.

    Args:
        repo: The repository.
        commit: A full commit SHA.

    Returns:
        Path → entry, in git's order.

    Raises:
        GitError: ``git ls-tree`` failed.
    """
    output = _run_git(repo, ["ls-tree", "-r", "-z", "--full-tree", commit])
    entries: dict[str, TreeEntry] = {}
    for record in output.split(b"\0"):
        if not record:
            continue
        header, _, raw_path = record.partition(b"\t")
        fields = header.split(b" ")
        if len(fields) != 3:
            raise GitError(f"unexpected git ls-tree line {record[:200]!r} in {repo.path}")
        path = raw_path.decode("utf-8", "replace")
        try:
            clean = normalize_relative_path(path)
        except ToolError:
            continue
        if clean != path or not clean or ".git" in clean.lower().split("/"):
            continue  # git itself refuses a ".git" component; a crafted tree may have one
        entries[path] = TreeEntry(path, fields[0].decode(), fields[2].decode())
    return entries


def materialize_tree(
    repo: GitRepo, entries: Mapping[str, TreeEntry], destination: Path
) -> MaterializeStats:
    """Write the files and safe symbolic links of ``entries`` under ``destination``.

    Args:
        repo: The repository holding the objects.
        entries: From :func:`read_tree`.
        destination: An empty directory, already resolved.

    Returns:
        Counts, timing, refused links and skipped paths.

    Raises:
        GitError: The object stream failed.
    """
    started = time.perf_counter()
    wanted = [entry for entry in entries.values() if entry.mode in _FILE_MODES | {_SYMLINK_MODE}]
    _make_directories(destination, wanted)
    skipped: list[str] = []
    link_targets: dict[str, str] = {}
    files = bytes_written = 0
    for entry, content in _stream_blobs(repo, wanted):
        if content is None:
            skipped.append(entry.path)
        elif entry.kind == "symlink":
            link_targets[entry.path] = os.fsdecode(content)
        elif (size := _write_file(destination, entry.path, content)) is None:
            skipped.append(entry.path)
        else:
            files += 1
            bytes_written += size
    # Links last: no file above was written through a link made from the tree.
    refused = _create_links(destination, link_targets, skipped)
    return MaterializeStats(
        files=files,
        symlinks=len(link_targets) - len(refused),
        bytes_written=bytes_written,
        seconds=time.perf_counter() - started,
        refused_links=refused,
        skipped=tuple(skipped),
    )


def _make_directories(destination: Path, entries: Sequence[TreeEntry]) -> None:
    directories = sorted({posixpath.dirname(entry.path) for entry in entries} - {""})
    for directory in directories:
        try:
            os.makedirs(destination / directory, exist_ok=True)
        except OSError:
            continue  # a crafted tree with a path both file and directory: its files are skipped


def _write_file(destination: Path, path: str, content: bytes) -> int | None:
    """Write one file; its size, or ``None`` when the path cannot be created."""
    try:
        descriptor = os.open(destination / path, _OPEN_FLAGS, 0o644)
    except OSError:
        return None  # a duplicate path, or a parent that is not a directory
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(content)
    return len(content)


def _create_links(
    destination: Path, link_targets: Mapping[str, str], skipped: list[str]
) -> dict[str, str]:
    refused: dict[str, str] = {}
    created: list[str] = []
    for path, target in link_targets.items():
        if _link_escapes(path, target):
            refused[path] = target
            continue
        link = destination / path
        try:
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, link)
        except OSError:
            skipped.append(path)
            continue
        created.append(path)
    # A link may escape only through another link (a → b/x, b → ..): check the resolved paths.
    for path in created:
        link = destination / path
        try:
            inside = link.resolve().is_relative_to(destination)
        except (OSError, RuntimeError):
            inside = False
        if not inside:
            link.unlink()
            refused[path] = link_targets[path]
    return dict(sorted(refused.items()))


def _link_escapes(path: str, target: str) -> bool:
    if not target or "\0" in target or target.startswith("/"):
        return True
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return joined == ".." or joined.startswith(("../", "/"))


def _stream_blobs(
    repo: GitRepo, entries: Sequence[TreeEntry]
) -> Iterator[tuple[TreeEntry, bytes | None]]:
    """Yield each entry's blob from one ``git cat-file --batch`` (``None`` when missing)."""
    try:
        process = subprocess.Popen(
            ["git", "--no-pager", "cat-file", "--batch"],
            cwd=repo.path,
            env=git_environment(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError as error:
        raise GitError(f"cannot run git cat-file in {repo.path}: {error}") from error
    assert process.stdin is not None and process.stdout is not None  # both piped above
    # A writer thread feeds the object ids while this thread reads: writing everything first
    # would deadlock once both pipes are full.
    writer = threading.Thread(
        target=_feed_object_ids, args=(process.stdin, entries), name="assay-cat-file", daemon=True
    )
    writer.start()
    try:
        for entry in entries:
            yield entry, _read_batch_object(process.stdout, entry, repo)
    finally:
        process.stdout.close()
        writer.join()
        try:
            process.wait(timeout=_GIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _feed_object_ids(stdin: IO[bytes], entries: Sequence[TreeEntry]) -> None:
    try:
        for entry in entries:
            stdin.write(entry.object_id.encode("ascii") + b"\n")
        stdin.close()
    except (BrokenPipeError, ValueError):
        pass  # the reader stopped early (an error): it reports it


def _read_batch_object(stdout: IO[bytes], entry: TreeEntry, repo: GitRepo) -> bytes | None:
    header = stdout.readline().rstrip(b"\n").split(b" ")
    if len(header) == 2 and header[1] == b"missing":
        return None
    if len(header) != 3 or header[0].decode("ascii", "replace") != entry.object_id:
        raise GitError(f"git cat-file answered {b' '.join(header)[:200]!r} in {repo.path}")
    size = int(header[2])
    content = stdout.read(size)
    if len(content) != size or stdout.read(1) != b"\n":
        raise GitError(f"git cat-file stopped early in {repo.path}")
    return content if header[1] == b"blob" else None


def _run_git(repo: GitRepo, arguments: Sequence[str]) -> bytes:
    try:
        result = subprocess.run(
            ["git", "--no-pager", *arguments],
            cwd=repo.path,
            env=git_environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise GitError(f"git {arguments[0]} failed in {repo.path}: {error}") from error
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(
            f"git {arguments[0]} failed in {repo.path}: {message[0] if message else 'no output'}"
        )
    return result.stdout
