"""A real git repository with everything the sandbox must handle, built in a temp dir.

``main`` (the base) and ``feature`` (the head) differ in a few files; head holds symbolic links
inside and outside the repository, a binary file, a path with spaces, a submodule entry, files
that are not UTF-8, CRLF, a BOM, hidden and git-ignored (but tracked) files, and attributes that
``git archive`` would apply.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

SECRET = "SECRET_TOKEN_0123456789"
BIG_FILE_LINES = 1000

CALC_BASE = "def add(a, b):\n    return a + b\n"
CALC_HEAD = CALC_BASE + "\n\ndef total(values):\n    return summ(values)\n"


@dataclass(frozen=True)
class ToolRepo:
    """The repository and what lies beside it."""

    path: Path
    outside_dir: Path
    """A directory next to the repository holding a secret file that links point at."""
    base: str
    head: str


_GIT_ENVIRONMENT = {
    "GIT_AUTHOR_NAME": "Assay Test",
    "GIT_AUTHOR_EMAIL": "test@assay.invalid",
    "GIT_COMMITTER_NAME": "Assay Test",
    "GIT_COMMITTER_EMAIL": "test@assay.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    # Hermetic on its own: module-scoped fixtures run before the suite's autouse environment.
    environment = {**os.environ, **_GIT_ENVIRONMENT}
    done = subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=environment
    )
    return done.stdout.strip()


def _write(repo: Path, path: str, content: str | bytes) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_bytes(content.encode("utf-8"))


def build_tool_repo(parent: Path) -> ToolRepo:
    """Create the repository under ``parent`` (``parent/repo``, ``parent/outside``)."""
    outside = parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    repo = parent / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    _write(repo, "src/calc.py", CALC_BASE)
    _write(repo, "src/old.py", "OLD = True\n")
    _write(repo, "docs/guide.md", "# Guide\n\nCall add() to add.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")

    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "src/old.py").unlink()
    _write(repo, "src/calc.py", CALC_HEAD)
    _write(repo, "src/new.py", "from calc import add\n\nNEEDLE = add(1, 2)  # needle\n")
    _write(repo, "dir with space/my file.py", "TOKEN = 'needle in a spaced path'\n")
    _write(repo, "blob.bin", b"\x89PNG\r\n\x1a\n\x00\x00needle\x00\n")
    _write(repo, "latin1.txt", b"caf\xe9 needle\n")
    _write(repo, "crlf.txt", b"needle here\r\nsecond line\r\n")
    _write(repo, "bom.txt", "\ufeffneedle at the start\n")
    _write(repo, ".hidden/conf.txt", "needle hidden\n")
    _write(repo, ".gitignore", "*.log\n")
    _write(repo, "ignored.log", "needle ignored but tracked\n")
    _write(repo, "empty.txt", "")
    _write(repo, "blank_line.txt", "\n")
    _write(
        repo,
        "big.txt",
        "".join(f"line {number} needle\n" for number in range(1, BIG_FILE_LINES + 1)),
    )
    _write(repo, "long_line.txt", "x" * 5000 + " needle\n")
    _write(repo, "unicode.txt", "naïve café ½ needle\nΣίσυφος needle\n")
    _write(repo, ".gitattributes", "archive_ignored.py export-ignore\nsubst.txt export-subst\n")
    _write(repo, "archive_ignored.py", "VISIBLE = 'needle'\n")
    _write(repo, "subst.txt", "$Format:%H$\n")
    links = {
        "evil_rel": "../outside/secret.txt",
        "evil_abs": str(outside / "secret.txt"),
        "evil_dir": "../outside",
        "dot": ".",
        "escape_via_dot": "dot/../outside/secret.txt",
        "alias.py": "src/calc.py",
        "src_link": "src",
        "dangling": "no/such/file",
    }
    for name, target in links.items():
        (repo / name).symlink_to(target)
    git(repo, "add", "-A")
    git(repo, "add", "-f", "ignored.log")  # tracked although .gitignore matches it
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{base},vendor/lib")
    git(repo, "commit", "-q", "-m", "head")
    head = git(repo, "rev-parse", "HEAD")
    return ToolRepo(path=repo, outside_dir=outside, base=base, head=head)
