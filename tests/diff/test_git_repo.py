"""``GitRepo`` against real repositories built in temporary directories."""

from __future__ import annotations

import gc
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from assay.diff import parse_unified_diff
from assay.errors import GitError, UnknownRefError
from assay.forge.git import GitRepo

if TYPE_CHECKING:
    from diff_repo_builder import RepoBuilder

OpenRepo = Callable[[Path | str], GitRepo]


@pytest.fixture
def two_commits(builder: RepoBuilder) -> tuple[str, str]:
    builder.write("a.txt", "one\n")
    builder.write("dir/b.txt", "bee\n")
    first = builder.commit("first")
    builder.write("a.txt", "one\ntwo\n")
    second = builder.commit("second")
    return first, second


# Opening


def test_open_a_directory_that_is_not_a_repository(hermetic_git: None, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(GitError, match=f"^not a git repository: {plain}$"):
        GitRepo.open(plain)


def test_open_a_missing_directory(hermetic_git: None, tmp_path: Path) -> None:
    with pytest.raises(GitError, match="no such directory"):
        GitRepo.open(tmp_path / "missing")


def test_open_a_subdirectory_resolves_the_top_level(
    builder: RepoBuilder, two_commits: tuple[str, str], open_repo: OpenRepo
) -> None:
    repo = open_repo(builder.path / "dir")
    assert repo.path == builder.path.resolve()
    assert not repo.is_bare
    assert repo.rev_parse("HEAD") == two_commits[1]


def test_open_a_bare_repository(
    make_repo: Callable[..., RepoBuilder],
    builder: RepoBuilder,
    two_commits: tuple[str, str],
    open_repo: OpenRepo,
) -> None:
    bare = make_repo("bare.git", bare=True)
    builder.git("push", "-q", str(bare.path), "main")
    repo = open_repo(bare.path)
    assert repo.is_bare
    assert repo.rev_parse("main") == two_commits[1]
    assert repo.read_blob("main", "a.txt") == b"one\ntwo\n"


def test_environment_pointing_at_another_repository_is_ignored(
    make_repo: Callable[..., RepoBuilder],
    builder: RepoBuilder,
    two_commits: tuple[str, str],
    open_repo: OpenRepo,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = make_repo("other")
    other.write("other.txt", "x\n")
    other.commit()
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))
    repo = open_repo(builder.path)
    assert repo.rev_parse("HEAD") == two_commits[1]


# Revisions


def test_rev_parse_resolves_branches_tags_and_short_shas(
    builder: RepoBuilder, two_commits: tuple[str, str], open_repo: OpenRepo
) -> None:
    first, second = two_commits
    builder.git("tag", "-a", "-m", "annotated", "v1", first)
    repo = open_repo(builder.path)
    assert repo.rev_parse("main") == second
    assert repo.rev_parse("HEAD~1") == first
    assert repo.rev_parse("v1") == first  # the tag object is peeled to its commit
    assert repo.rev_parse(first[:10]) == first


@pytest.mark.parametrize("ref", ["nope", "--all", "", "HEAD\nmain", "HEAD:a.txt"])
def test_rev_parse_of_an_unknown_ref(
    builder: RepoBuilder, two_commits: tuple[str, str], open_repo: OpenRepo, ref: str
) -> None:
    repo = open_repo(builder.path)
    with pytest.raises(UnknownRefError, match="^" + re.escape(f"unknown ref {ref!r} in ")):
        repo.rev_parse(ref)


def test_a_tree_is_not_a_commit(
    builder: RepoBuilder, two_commits: tuple[str, str], open_repo: OpenRepo
) -> None:
    tree = builder.git("rev-parse", "HEAD^{tree}")
    repo = open_repo(builder.path)
    assert not repo.commit_exists(tree)
    assert repo.commit_exists(two_commits[0])
    assert not repo.commit_exists("0" * 40)


def test_merge_base_and_ancestry(builder: RepoBuilder, open_repo: OpenRepo) -> None:
    builder.write("f.txt", "base\n")
    fork = builder.commit("fork point")
    builder.git("switch", "-q", "-c", "feature")
    builder.write("feature.txt", "f\n")
    feature = builder.commit("feature work")
    builder.git("switch", "-q", "main")
    builder.write("main.txt", "m\n")
    main = builder.commit("main work")
    repo = open_repo(builder.path)
    assert repo.merge_base("main", "feature") == fork
    assert repo.is_ancestor(fork, feature)
    assert not repo.is_ancestor(main, feature)
    assert repo.is_ancestor(main, main)


def test_merge_base_of_unrelated_histories(builder: RepoBuilder, open_repo: OpenRepo) -> None:
    builder.write("f.txt", "1\n")
    builder.commit()
    builder.git("switch", "-q", "--orphan", "island")
    builder.write("g.txt", "2\n")
    builder.commit()
    repo = open_repo(builder.path)
    with pytest.raises(GitError, match="no merge base between 'main' and 'island'"):
        repo.merge_base("main", "island")
    with pytest.raises(UnknownRefError):
        repo.merge_base("main", "nope")


def test_current_branch(
    builder: RepoBuilder, two_commits: tuple[str, str], open_repo: OpenRepo
) -> None:
    repo = open_repo(builder.path)
    assert repo.current_branch() == "main"
    builder.git("switch", "-q", "--detach", "HEAD~1")
    assert repo.current_branch() is None


def test_commit_info(builder: RepoBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    builder.write("x.txt", "x\n")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2024-05-06T07:08:09+02:00")
    sha = builder.commit("Fix the parser\n\nIt dropped renames.\nSecond line.")
    with GitRepo.open(builder.path) as repo:
        info = repo.commit_info("HEAD")
    assert info.sha == sha
    assert info.author == "Ada Author <ada@example.com>"
    assert info.subject == "Fix the parser"
    assert info.body == "It dropped renames.\nSecond line."
    assert info.committed_at == datetime(2024, 5, 6, 5, 8, 9, tzinfo=UTC)


# Default base


def test_default_base_of_a_single_commit_repository(
    builder: RepoBuilder, open_repo: OpenRepo
) -> None:
    builder.write("only.txt", "1\n")
    builder.commit()
    repo = open_repo(builder.path)
    with pytest.raises(GitError, match=r"no parent commit.*pass --base <ref>"):
        repo.default_base_ref()


def test_default_base_falls_back_to_the_parent(
    builder: RepoBuilder, two_commits: tuple[str, str], open_repo: OpenRepo
) -> None:
    repo = open_repo(builder.path)
    assert repo.default_base_ref() == "HEAD~1"
    assert repo.rev_parse(repo.default_base_ref()) == two_commits[0]


def test_default_base_prefers_the_upstream(
    make_repo: Callable[..., RepoBuilder],
    builder: RepoBuilder,
    two_commits: tuple[str, str],
    open_repo: OpenRepo,
) -> None:
    origin = make_repo("origin.git", bare=True)
    builder.git("remote", "add", "origin", str(origin.path))
    builder.git("push", "-q", "origin", "main")
    builder.git("switch", "-q", "-c", "feature", "--track", "origin/main")
    builder.write("feature.txt", "f\n")
    builder.commit("feature")
    repo = open_repo(builder.path)
    assert repo.default_base_ref() == "origin/main"
    assert repo.merge_base(repo.default_base_ref(), "HEAD") == two_commits[1]


def test_default_base_uses_origin_head_without_an_upstream(
    make_repo: Callable[..., RepoBuilder],
    builder: RepoBuilder,
    two_commits: tuple[str, str],
    open_repo: OpenRepo,
) -> None:
    origin = make_repo("origin.git", bare=True)
    builder.git("remote", "add", "origin", str(origin.path))
    builder.git("push", "-q", "origin", "main")
    builder.git("fetch", "-q", "origin")
    builder.git("remote", "set-head", "origin", "main")
    builder.git("switch", "-q", "-c", "untracked")
    repo = open_repo(builder.path)
    assert repo.default_base_ref() == "origin/main"


def test_default_base_of_an_unknown_head(
    builder: RepoBuilder, two_commits: tuple[str, str], open_repo: OpenRepo
) -> None:
    with pytest.raises(UnknownRefError):
        open_repo(builder.path).default_base_ref("nope")


# Diffs and trees


def test_diff_detects_renames_and_honours_context(
    builder: RepoBuilder, open_repo: OpenRepo
) -> None:
    numbers = "".join(f"{n}\n" for n in range(1, 31))
    builder.write("old.txt", numbers)
    base = builder.commit()
    builder.move("old.txt", "new.txt")
    builder.write("new.txt", numbers.replace("15\n", "fifteen\n"))
    head = builder.commit()
    repo = open_repo(builder.path)

    [renamed] = parse_unified_diff(repo.diff(base, head))
    assert (renamed.path, renamed.old_path) == ("new.txt", "old.txt")
    assert len(renamed.hunks[0].lines) == 8  # 3 + 3 context lines
    [tight] = parse_unified_diff(repo.diff(base, head, context=0))
    assert [line.text for line in tight.hunks[0].lines] == ["15", "fifteen"]
    assert repo.changed_paths(base, head) == ["new.txt"]
    with pytest.raises(ValueError, match="context"):
        repo.diff(base, head, context=-1)


def test_user_configuration_does_not_change_the_diff(
    builder: RepoBuilder, open_repo: OpenRepo
) -> None:
    builder.write(".gitattributes", "*.txt diff=shout\n")
    builder.write("notes.txt", "hello\n")
    base = builder.commit()
    builder.write("notes.txt", "hello\nworld\n")
    head = builder.commit()
    repo = open_repo(builder.path)
    expected = repo.diff(base, head)

    # Everything a user (or an attacker who controls the config) could set to alter it.
    for key, value in [
        ("diff.noprefix", "true"),
        ("diff.mnemonicPrefix", "true"),
        ("diff.relative", "true"),
        ("diff.external", "false"),
        ("diff.shout.textconv", "tr a-z A-Z"),
        ("diff.shout.command", "false"),
        ("color.ui", "always"),
        ("color.diff", "always"),
        ("core.pager", "false"),
        ("core.quotepath", "true"),
    ]:
        builder.git("config", "--global", key, value)
    assert repo.diff(base, head) == expected
    assert b"+world\n" in expected
    assert b"diff --git a/notes.txt b/notes.txt\n" in expected


def test_list_files(builder: RepoBuilder, open_repo: OpenRepo) -> None:
    for name in ["b.txt", "a dir/x.txt", "naïve.txt", "tab\there.txt"]:
        builder.write(name, "x\n")
    builder.commit()
    assert open_repo(builder.path).list_files("HEAD") == [
        "a dir/x.txt",
        "b.txt",
        "naïve.txt",
        "tab\there.txt",
    ]


# Reading files


def test_read_blob(builder: RepoBuilder, open_repo: OpenRepo) -> None:
    builder.write("text.txt", "v1\n")
    builder.write("bin.dat", b"\x00\x01\n\x02")
    builder.write("dir/inner.txt", "inner")
    builder.write("with space ü.txt", "spaced\n")
    builder.write("new\nline.txt", "newline\n")
    builder.write("big.txt", "y" * 2_000_000)
    first = builder.commit()
    builder.write("text.txt", "v2\n")
    builder.commit()
    repo = open_repo(builder.path)

    assert repo.read_blob("HEAD", "text.txt") == b"v2\n"
    assert repo.read_blob(first, "text.txt") == b"v1\n"
    assert repo.read_blob("HEAD", "bin.dat") == b"\x00\x01\n\x02"
    assert repo.read_blob("HEAD", "dir/inner.txt") == b"inner"
    assert repo.read_blob("HEAD", "with space ü.txt") == b"spaced\n"
    assert repo.read_blob("HEAD", "new\nline.txt") == b"newline\n"
    assert repo.read_blob("HEAD", "big.txt") == b"y" * 2_000_000
    assert repo.read_blob("HEAD", "text.txt") == b"v2\n"  # still in step after a big read


@pytest.mark.parametrize("path", ["missing.txt", "dir", "dir/", "", "../outside", "./text.txt"])
def test_read_blob_of_something_that_is_not_a_file_is_none(
    builder: RepoBuilder, open_repo: OpenRepo, path: str
) -> None:
    builder.write("text.txt", "x\n")
    builder.write("dir/inner.txt", "inner")
    builder.commit()
    assert open_repo(builder.path).read_blob("HEAD", path) is None


def test_exists(builder: RepoBuilder, open_repo: OpenRepo) -> None:
    builder.write("dir/inner.txt", "inner")
    first = builder.commit()
    builder.remove("dir/inner.txt")
    builder.write("other.txt", "o")
    builder.commit()
    repo = open_repo(builder.path)
    assert repo.exists(first, "dir/inner.txt")
    assert repo.exists(first, "dir")
    assert not repo.exists("HEAD", "dir/inner.txt")
    assert not repo.exists("HEAD", "nothing")


def test_read_blob_at_an_unknown_revision(builder: RepoBuilder, open_repo: OpenRepo) -> None:
    builder.write("a.txt", "a")
    builder.commit()
    with pytest.raises(UnknownRefError, match="unknown ref 'nope'"):
        open_repo(builder.path).read_blob("nope", "a.txt")


def test_many_reads_through_one_reader(builder: RepoBuilder) -> None:
    for index in range(120):
        builder.write(f"files/file {index:03}.txt", f"content {index}\n" * (index % 7))
    head = builder.commit()
    with GitRepo.open(builder.path) as repo:
        for round_number in range(2):
            for index in range(120):
                expected = f"content {index}\n".encode() * (index % 7)
                assert repo.read_blob(head, f"files/file {index:03}.txt") == expected
                assert repo.read_blob(head, f"files/missing {index}.txt") is None
            if round_number == 0:
                repo.close()  # the next read starts a fresh reader


def test_a_repository_that_is_never_closed_stops_its_reader(builder: RepoBuilder) -> None:
    builder.write("a.txt", "a")
    builder.commit()
    repo = GitRepo.open(builder.path)
    assert repo.read_blob("HEAD", "a.txt") == b"a"
    assert repo.exists("HEAD", "a.txt")
    del repo
    # With filterwarnings=error, a still-running Popen would fail the test here.
    gc.collect()


def test_open_a_file_path(builder: RepoBuilder) -> None:
    builder.write("a.txt", "a")
    with pytest.raises(GitError, match=r"\(not a directory\)$"):
        GitRepo.open(builder.path / "a.txt")
