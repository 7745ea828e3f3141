"""Real git repositories in temp dirs, and a way to run the real ``assay`` entry point."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import _rewrite_batch_export, app


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def write(repo: Path, path: str, content: str | bytes) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content, encoding="utf-8")


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


FOCUSED_CONFIG = "[checklists]\nenabled = false\n"

CALC_BASE = "def add(a, b):\n    return a + b\n"
CALC_UNDEFINED = CALC_BASE + "\n\ndef total(values):\n    return summ(values)\n"


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """A repository with ``main`` holding ``files`` and branch ``feature`` holding ``changes``.

    Checklists are off unless ``files`` brings its own ``.assay.toml``: these tests look at one
    stage at a time (tests/integration/test_ensemble.py runs the whole pipeline).
    """

    def build(files: dict[str, str | bytes], changes: dict[str, str | bytes | None]) -> Path:
        repo = tmp_path / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        files = {".assay.toml": FOCUSED_CONFIG, **files}
        for path, content in files.items():
            write(repo, path, content)
        commit_all(repo, "base")
        git(repo, "checkout", "-q", "-b", "feature")
        for path, content in changes.items():
            if content is None:
                (repo / path).unlink()
            else:
                write(repo, path, content)
        commit_all(repo, "Add total()\n\nSums a list of numbers.")
        return repo

    return build


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def run_cli() -> Callable[..., CliResult]:
    """Run ``assay`` in-process through its real entry point (argument rewriting included)."""

    def run(*args: str) -> CliResult:
        runner = CliRunner()
        result = runner.invoke(app, _rewrite_batch_export(list(args)), prog_name="assay")
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture
def unused_port() -> int:
    """A loopback port with nothing listening (connections are refused at once)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
