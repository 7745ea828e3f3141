"""Building a case's repository with real git, deterministically.

A recipe case is committed into a scratch directory: the base on branch ``main``, the pull
request on branch ``pr``, with a fixed identity and fixed dates and no user or system git
configuration, so the same case always gives the same commits, the same diff and the same
prompts (and a stored evaluation replays from the replay cache). A case that names an existing
repository is used in place (a bundle is cloned).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import ConfigError, GitError
from assay.eval.cases import EvalCase, RepositorySource
from assay.model import Side

__all__ = ["BASE_BRANCH", "HEAD_BRANCH", "CaseRepo", "build_case_repo"]

BASE_BRANCH = "main"
HEAD_BRANCH = "pr"

_MAX_CASE_FILE_BYTES = 2_000_000
"""Recipe files above this size are refused: a case is small by design."""
_FIXED_DATE = "2026-01-01T00:00:00+00:00"
_IDENTITY = ("Assay Eval", "eval@assay.invalid")


@dataclass(frozen=True)
class CaseRepo:
    """A case's repository, ready to review: ``head`` merged into ``base``."""

    path: Path
    base: str | None
    head: str
    files: Mapping[str, bytes] = field(default_factory=dict)
    """Head files of a recipe case (empty for an existing repository)."""


def build_case_repo(case: EvalCase, workdir: Path, *, repo_config: str | None = None) -> CaseRepo:
    """Make the case's repository, ready to review.

    A recipe is committed with real git into ``workdir/<case name>``: the base on branch
    ``main``, the pull request on branch ``pr``. An existing repository is used in place, and a
    bundle is cloned into ``workdir``.

    Args:
        case: The case.
        workdir: A scratch directory (the caller removes it).
        repo_config: ``.assay.toml`` text to commit in the base (recipes only), e.g. to turn a
            review stage off for an experiment.

    Returns:
        Where the repository is and which refs to review.

    Raises:
        ConfigError: A recipe file that is a link, too large, or escapes the case; a truth
            line outside its file or without its ``needle``.
        GitError: git failed.
    """
    source = case.source
    if isinstance(source, RepositorySource):
        if source.repo.is_file():
            workdir.mkdir(parents=True, exist_ok=True)
            clone = workdir / f"{case.name}.git"
            if not clone.exists():
                _git(workdir, "clone", "-q", "--mirror", str(source.repo), str(clone))
            return CaseRepo(path=clone, base=source.base, head=source.head)
        if repo_config is not None:
            raise ConfigError(f"{case.name}: stage toggles need a recipe case, not a repository")
        return CaseRepo(path=source.repo, base=source.base, head=source.head)
    base_files = _read_tree(source.base_dir)
    overlay = _read_tree(source.head_dir)
    head_files = {**base_files, **overlay}
    for path in source.delete:
        if path not in head_files:
            raise ConfigError(f"{case.name}: delete names {path!r}, which is not in base/")
        del head_files[path]
    if repo_config is not None:
        base_files[".assay.toml"] = repo_config.encode("utf-8")
        head_files[".assay.toml"] = base_files[".assay.toml"]
    _check_truth_against(case, head_files)
    repo = workdir / case.name
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", BASE_BRANCH)
    _write_tree(repo, base_files)
    _commit(repo, "Base")
    _git(repo, "checkout", "-q", "-b", HEAD_BRANCH)
    _write_tree(repo, head_files, remove_others=True)
    message = case.title if not case.description else f"{case.title}\n\n{case.description}"
    _commit(repo, message)
    return CaseRepo(path=repo, base=BASE_BRANCH, head=HEAD_BRANCH, files=head_files)


def _check_truth_against(case: EvalCase, head_files: Mapping[str, bytes]) -> None:
    for defect in case.defects:
        if defect.path is None or defect.side is Side.LEFT:
            continue
        content = head_files.get(defect.path)
        if content is None:
            raise ConfigError(f"{case.name}: truth names {defect.path!r}, which is not at head")
        lines = content.decode("utf-8", errors="replace").splitlines()
        last = defect.last_line or 0
        if last > len(lines):
            raise ConfigError(
                f"{case.name}: truth line {last} is past the end of {defect.path} "
                f"({len(lines)} lines)"
            )
        if defect.needle is not None and defect.line_start is not None:
            if defect.needle not in lines[defect.line_start - 1]:
                raise ConfigError(
                    f"{case.name}: line {defect.line_start} of {defect.path} does not contain "
                    f"{defect.needle!r}"
                )


def _read_tree(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` by repository path; links and oversize files refused."""
    if not root.is_dir():
        return {}
    files: dict[str, bytes] = {}
    for current, directories, names in os.walk(root, followlinks=False):
        directories.sort()
        for name in sorted(names) + [d for d in directories if (Path(current) / d).is_symlink()]:
            file_path = Path(current) / name
            relative = file_path.relative_to(root).as_posix()
            if file_path.is_symlink() or not file_path.is_file():
                raise ConfigError(f"{file_path}: case files must be regular files, not links")
            if file_path.stat().st_size > _MAX_CASE_FILE_BYTES:
                raise ConfigError(f"{file_path}: larger than {_MAX_CASE_FILE_BYTES} bytes")
            files[relative] = file_path.read_bytes()
    return files


def _write_tree(repo: Path, files: Mapping[str, bytes], *, remove_others: bool = False) -> None:
    if remove_others:
        _git(repo, "rm", "-q", "-r", "--cached", "--ignore-unmatch", ".")
        for entry in repo.iterdir():
            if entry.name == ".git":
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    for relative, content in files.items():
        target = repo / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


def _commit(repo: Path, message: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)


def _git(cwd: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", *arguments],
        cwd=cwd,
        env=_git_environment(),
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise GitError(f"git {arguments[0]} failed in {cwd}: {detail[0] if detail else ''}")
    return done.stdout.decode("utf-8", errors="replace")


def _git_environment() -> dict[str, str]:
    # The build must not depend on who runs it: no user or system config, fixed identity and
    # dates, so the commits (and therefore every prompt) are byte-identical on every machine.
    name, email = _IDENTITY
    kept = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    return {
        **kept,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_AUTHOR_DATE": _FIXED_DATE,
        "GIT_COMMITTER_DATE": _FIXED_DATE,
        "LC_ALL": "C",
    }
