"""Read-only access to a git repository through the ``git`` command line.

Every command runs without a shell, with an argument list, in the C locale, with terminal
prompts disabled and with user pagers, external diff drivers and textconv filters switched
off, so the output is the same on every machine and nothing configured by the user (or by a
repository under review) runs as a side effect.

Example::

    with GitRepo.open(".") as repo:
        base = repo.merge_base(repo.default_base_ref(), "HEAD")
        diff = repo.diff(base, repo.rev_parse("HEAD"))
        text = repo.read_blob("HEAD", "README.md")
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from assay.errors import GitError, UnknownRefError

__all__ = ["CommitInfo", "GitRepo", "git_environment"]

# Variables that would point git at another repository, index or diff driver than the one
# we opened (they are set, for example, when Assay runs inside a git hook).
_DROPPED_ENVIRONMENT = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_EXTERNAL_DIFF",
        "GIT_DIFF_OPTS",
        "GIT_PAGER",
        "PAGER",
    }
)
_OVERRIDDEN_ENVIRONMENT = {
    "LC_ALL": "C",
    "LANG": "C",
    "GIT_TERMINAL_PROMPT": "0",
    # Reads must not take the index lock that a concurrent `git` of the user needs.
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
}
_GIT_PREFIX = ("git", "-c", "core.quotepath=false", "--no-pager")
_DIFF_OPTIONS = (
    "--no-ext-diff",
    "--no-color",
    "--no-textconv",
    "--no-relative",
    "--full-index",
    "-M",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)
_OBJECT_ID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_BATCH_HEADER = re.compile(rb"^([0-9a-f]{40}(?:[0-9a-f]{24})?) ([a-z]+) ([0-9]+)$")
_DEFAULT_TIMEOUT_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """One commit's metadata."""

    sha: str
    author: str
    """``Name <email>`` of the author."""
    subject: str
    body: str
    committed_at: datetime
    """Committer date, timezone-aware."""


def git_environment() -> dict[str, str]:
    """The environment git runs with: no variables pointing at another repository, fixed locale."""
    environment = {
        name: value for name, value in os.environ.items() if name not in _DROPPED_ENVIRONMENT
    }
    environment.update(_OVERRIDDEN_ENVIRONMENT)
    return environment


def _first_line(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines()]
    return next((line for line in lines if line), "no error output")


def _check_ref_syntax(ref: str, repository: Path) -> None:
    # A leading dash would be read as an option, and NUL or a newline cannot be passed to
    # the batch reader: neither is a valid ref name anyway.
    if not ref or ref.startswith("-") or any(char in ref for char in "\0\n\r"):
        raise UnknownRefError(f"unknown ref {ref!r} in {repository}")


class _BatchReader:
    """One long-lived ``git cat-file --batch`` (or ``--batch-check``) process."""

    def __init__(
        self, repository: Path, environment: dict[str, str], *, check_only: bool = False
    ) -> None:
        self._repository = repository
        self._environment = environment
        self._mode = "--batch-check" if check_only else "--batch"
        self._process: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes]], _BatchReader] | None = None

    def lookup(self, object_name: str) -> tuple[str, str, bytes] | None:
        """Return ``(object id, type, content)`` for ``object_name``, or ``None`` if missing.

        In ``--batch-check`` mode the content is always empty.
        """
        process = self._started()
        stdin, stdout = _pipes(process)
        try:
            stdin.write(object_name.encode("utf-8") + b"\n")
            stdin.flush()
            header = stdout.readline().rstrip(b"\n")
            match = _BATCH_HEADER.match(header)
            if match is None:
                if header.endswith((b" missing", b" ambiguous")):
                    return None
                self.close()  # out of step (or the process died): start afresh next time
                raise GitError(
                    f"git cat-file answered {header[:200]!r} for {object_name!r} "
                    f"in {self._repository}"
                )
            object_id, object_type = match.group(1).decode(), match.group(2).decode()
            if self._mode == "--batch-check":
                return object_id, object_type, b""
            size = int(match.group(3))
            content = stdout.read(size)
            terminator = stdout.read(1)
        except (OSError, ValueError) as error:
            self.close()
            raise GitError(f"git cat-file failed in {self._repository}: {error}") from error
        if len(content) != size or terminator != b"\n":
            self.close()
            raise GitError(f"git cat-file stopped early in {self._repository}")
        return object_id, object_type, content

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
        self._process = None
        self._finalizer = None

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self.close()
        try:
            process = subprocess.Popen(
                [*_GIT_PREFIX, "cat-file", self._mode],
                cwd=self._repository,
                env=self._environment,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as error:
            raise GitError(f"cannot run git: {error}") from error
        self._process = process
        # Stops the process even when the owner forgets close(): an orphaned Popen would
        # otherwise warn (ResourceWarning) when it is collected.
        self._finalizer = weakref.finalize(self, _stop_process, process)
        return process


def _pipes(process: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    if process.stdin is None or process.stdout is None:  # pragma: no cover - always piped
        raise GitError("git cat-file has no pipes")
    return process.stdin, process.stdout


def _stop_process(process: subprocess.Popen[bytes]) -> None:
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class GitRepo:
    """A git repository (work tree or bare), read through the ``git`` CLI.

    Create it with :meth:`open`; close it (or use it as a context manager) to stop the
    object-reader process that :meth:`read_blob` starts on first use.
    """

    def __init__(self, path: Path, *, is_bare: bool, timeout: float) -> None:
        self.path = path
        """The top level of the work tree, or the git directory of a bare repository."""
        self.is_bare = is_bare
        self._timeout = timeout
        self._environment = git_environment()
        self._blobs = _BatchReader(path, self._environment)
        self._objects = _BatchReader(path, self._environment, check_only=True)
        self._lock = threading.Lock()
        self._commits_by_object_id: dict[str, str] = {}

    @classmethod
    def open(cls, path: str | Path, *, timeout: float = _DEFAULT_TIMEOUT_SECONDS) -> GitRepo:
        """Open the repository containing ``path``.

        Args:
            path: A directory inside a work tree, or a bare repository.
            timeout: Seconds any single git command may take.

        Returns:
            The repository, with ``path`` resolved to its top level.

        Raises:
            GitError: ``path`` is not inside a git repository, or git cannot run.
        """
        directory = Path(path).expanduser().absolute()
        if not directory.is_dir():
            problem = "not a directory" if directory.exists() else "no such directory"
            raise GitError(f"not a git repository: {directory} ({problem})")
        probe = cls(directory, is_bare=False, timeout=timeout)
        bare = probe._run(["rev-parse", "--is-bare-repository"], check=False)
        if bare.returncode != 0:
            raise GitError(f"not a git repository: {directory}")
        if bare.stdout.strip() == b"true":
            top = probe._text(["rev-parse", "--absolute-git-dir"])
            return cls(Path(top), is_bare=True, timeout=timeout)
        top_level = probe._run(["rev-parse", "--show-toplevel"], check=False)
        if top_level.returncode != 0 or not top_level.stdout.strip():
            raise GitError(f"not a git work tree or bare repository: {directory}")
        return cls(Path(_decode_line(top_level.stdout)), is_bare=False, timeout=timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the object-reader processes, if any were started."""
        with self._lock:
            self._blobs.close()
            self._objects.close()

    def __repr__(self) -> str:
        return f"GitRepo({str(self.path)!r})"

    # Revisions

    def rev_parse(self, ref: str) -> str:
        """Return the full SHA of the commit ``ref`` names.

        Raises:
            UnknownRefError: ``ref`` does not name a commit.
        """
        _check_ref_syntax(ref, self.path)
        result = self._run(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
            check=False,
        )
        if result.returncode != 0:
            raise UnknownRefError(f"unknown ref {ref!r} in {self.path}")
        return _decode_line(result.stdout)

    def commit_exists(self, sha: str) -> bool:
        """Whether ``sha`` (or any ref) names a commit present in this repository."""
        try:
            self.rev_parse(sha)
        except UnknownRefError:
            return False
        return True

    def merge_base(self, a: str, b: str) -> str:
        """Return the best common ancestor of ``a`` and ``b``.

        Raises:
            UnknownRefError: ``a`` or ``b`` does not name a commit.
            GitError: the two histories share no commit.
        """
        first, second = self.rev_parse(a), self.rev_parse(b)
        result = self._run(["merge-base", first, second], check=False)
        if result.returncode == 1 and not result.stdout.strip():
            raise GitError(f"no merge base between {a!r} and {b!r} in {self.path}")
        if result.returncode != 0:
            raise GitError(f"git merge-base failed in {self.path}: {_first_line(result.stderr)}")
        return _decode_line(result.stdout)

    def is_ancestor(self, a: str, b: str) -> bool:
        """Whether commit ``a`` is an ancestor of (or equal to) commit ``b``."""
        first, second = self.rev_parse(a), self.rev_parse(b)
        result = self._run(["merge-base", "--is-ancestor", first, second], check=False)
        if result.returncode in (0, 1):
            return result.returncode == 0
        raise GitError(f"git merge-base failed in {self.path}: {_first_line(result.stderr)}")

    def current_branch(self) -> str | None:
        """The short name of the checked-out branch, or ``None`` when HEAD is detached."""
        result = self._run(["symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
        if result.returncode != 0:
            return None
        return _decode_line(result.stdout) or None

    def default_base_ref(self, head: str = "HEAD") -> str:
        """Pick the ref a review of ``head`` compares against when none is given.

        In order: the upstream of ``head``'s branch, ``origin/HEAD`` (as the branch it points
        to), then ``head~1``.

        Raises:
            UnknownRefError: ``head`` does not name a commit.
            GitError: none of the candidates exists (a repository with a single commit).
        """
        self.rev_parse(head)
        upstream = self._run(
            ["rev-parse", "--verify", "--quiet", "--symbolic-full-name", f"{head}@{{upstream}}"],
            check=False,
        )
        upstream_name = _decode_line(upstream.stdout) if upstream.returncode == 0 else ""
        if upstream_name and self.commit_exists(upstream_name):
            return _short_ref_name(upstream_name)
        if self.commit_exists("refs/remotes/origin/HEAD"):
            target = self._run(
                ["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"], check=False
            )
            return _decode_line(target.stdout) if target.returncode == 0 else "origin/HEAD"
        if self.commit_exists(f"{head}~1"):
            return f"{head}~1"
        raise GitError(
            f"cannot choose a base for {head!r} in {self.path}: its branch has no upstream, "
            "there is no origin/HEAD and it has no parent commit; pass --base <ref>"
        )

    def commit_info(self, rev: str) -> CommitInfo:
        """Author, subject, body and committer date of one commit."""
        sha = self.rev_parse(rev)
        output = self._run(
            [
                "log",
                "-1",
                "--no-show-signature",
                "--no-color",
                "--format=%H%x00%an <%ae>%x00%cI%x00%s%x00%b",
                sha,
                "--",
            ]
        ).stdout.decode("utf-8", "replace")
        fields = output.split("\0", 4)
        if len(fields) != 5:
            raise GitError(f"unexpected git log output for {rev!r} in {self.path}")
        full_sha, author, committed_at, subject, body = fields
        return CommitInfo(
            sha=full_sha,
            author=author,
            subject=subject,
            body=body.strip("\n"),
            committed_at=datetime.fromisoformat(committed_at),
        )

    # Trees and diffs

    def diff(self, base_sha: str, head_sha: str, *, context: int = 3) -> bytes:
        """The unified diff from ``base_sha`` to ``head_sha``, with renames detected.

        Binary files appear as ``Binary files … differ`` lines (no binary patch).

        Args:
            base_sha: The old side.
            head_sha: The new side.
            context: Lines of context around each change.

        Returns:
            The raw diff bytes (file contents need not be UTF-8).
        """
        if context < 0:
            raise ValueError(f"context must be >= 0, not {context}")
        base, head = self.rev_parse(base_sha), self.rev_parse(head_sha)
        return self._run(["diff", *_DIFF_OPTIONS, f"-U{context}", base, head, "--"]).stdout

    def changed_paths(self, base: str, head: str) -> list[str]:
        """Paths changed between ``base`` and ``head`` (the new path of a renamed file)."""
        first, second = self.rev_parse(base), self.rev_parse(head)
        output = self._run(
            ["diff", "--no-ext-diff", "--no-relative", "-M", "--name-only", "-z", first, second]
        ).stdout
        return _split_nul(output)

    def list_files(self, rev: str) -> list[str]:
        """Every file path in the tree of ``rev``, sorted as git sorts them."""
        sha = self.rev_parse(rev)
        output = self._run(["ls-tree", "-r", "--name-only", "-z", "--full-tree", sha]).stdout
        return _split_nul(output)

    def read_blob(self, rev: str, path: str) -> bytes | None:
        """The content of ``path`` at ``rev``, or ``None`` when no file is there.

        Uses one long-lived ``git cat-file --batch`` process, so many reads are cheap.

        Args:
            rev: A commit (SHA, branch, tag, ``HEAD~1`` …).
            path: Repository-relative path, ``/``-separated.

        Raises:
            UnknownRefError: ``rev`` does not name a commit.
        """
        found = self._lookup(rev, path, self._blobs)
        if found is None:
            return None
        object_type, content = found
        return content if object_type == "blob" else None

    def exists(self, rev: str, path: str) -> bool:
        """Whether ``path`` names a file or a directory at ``rev`` (without reading it)."""
        return self._lookup(rev, path, self._objects) is not None

    # Plumbing

    def _lookup(self, rev: str, path: str, reader: _BatchReader) -> tuple[str, bytes] | None:
        commit = self._resolve_commit_for_batch(rev)
        relative = path.lstrip("/")
        if not relative or relative.startswith(("./", "../")) or "\0" in relative:
            return None
        if "\n" in relative or "\r" in relative:
            # The batch protocol is line-based: fall back to one command with an argument.
            return self._lookup_once(f"{commit}:{relative}")
        with self._lock:
            found = reader.lookup(f"{commit}:{relative}")
        return None if found is None else (found[1], found[2])

    def _lookup_once(self, object_name: str) -> tuple[str, bytes] | None:
        kind = self._run(["cat-file", "-t", object_name], check=False)
        if kind.returncode != 0:
            return None
        object_type = _decode_line(kind.stdout)
        content = self._run(["cat-file", object_type, object_name]).stdout
        return object_type, content

    def _resolve_commit_for_batch(self, rev: str) -> str:
        # Full object ids never change meaning, so they are resolved once; names like HEAD
        # are resolved on every call because they move.
        cached = self._commits_by_object_id.get(rev)
        if cached is not None:
            return cached
        sha = self.rev_parse(rev)
        if _OBJECT_ID.match(rev):
            self._commits_by_object_id[rev] = sha
        return sha

    def _text(self, arguments: Sequence[str]) -> str:
        return _decode_line(self._run(arguments).stdout)

    def _run(
        self, arguments: Sequence[str], *, check: bool = True
    ) -> subprocess.CompletedProcess[bytes]:
        command = [*_GIT_PREFIX, *arguments]
        try:
            result = subprocess.run(
                command,
                cwd=self.path,
                env=self._environment,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=self._timeout,
                check=False,
            )
        except FileNotFoundError as error:
            raise GitError("git is not installed (no 'git' executable on PATH)") from error
        except subprocess.TimeoutExpired as error:
            raise GitError(
                f"git {arguments[0]} timed out after {self._timeout:g}s in {self.path}"
            ) from error
        except OSError as error:
            raise GitError(f"cannot run git in {self.path}: {error}") from error
        if check and result.returncode != 0:
            raise GitError(
                f"git {arguments[0]} failed in {self.path}: {_first_line(result.stderr)}"
            )
        return result


def _decode_line(output: bytes) -> str:
    return output.decode("utf-8", "replace").rstrip("\n")


def _split_nul(output: bytes) -> list[str]:
    return [name.decode("utf-8", "replace") for name in output.split(b"\0") if name]


def _short_ref_name(full_name: str) -> str:
    for prefix in ("refs/remotes/", "refs/heads/", "refs/tags/"):
        if full_name.startswith(prefix):
            return full_name.removeprefix(prefix)
    return full_name
