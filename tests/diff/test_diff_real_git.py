"""Parse what real ``git diff`` (through ``GitRepo.diff``) produces for every kind of change."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from diff_repo_builder import RepoBuilder, use_hermetic_git

from assay.diff import FileDiff, FileStatus, LineKind, Side, parse_unified_diff
from assay.forge.git import GitRepo

TWENTY = "".join(f"line {n}\n" for n in range(1, 21))
OTHER_TWENTY = "".join(f"other {n}\n" for n in range(1, 21))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, FileDiff]]:
    """One repository with every kind of change, built once for this module."""
    root = tmp_path_factory.mktemp("real_git")
    with pytest.MonkeyPatch.context() as monkeypatch:
        use_hermetic_git(monkeypatch, root / "home")
        builder = RepoBuilder(root / "repo")
        builder.path.mkdir()
        builder.git("init", "-q")
        yield build_every_kind_of_change(builder)


def build_every_kind_of_change(builder: RepoBuilder) -> dict[str, FileDiff]:
    builder.write("modified.py", "def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    builder.write("pure_rename_old.txt", OTHER_TWENTY)
    builder.write("edit_rename_old.txt", TWENTY)
    builder.write("deleted.txt", "bye\nnow\n")
    builder.write("image.bin", b"\x00\x01\x02\x03")
    builder.write("tool.sh", "#!/bin/sh\necho hi\n")
    builder.write("latin1.txt", b"caf\xe9\n")
    builder.write("no_newline.txt", "a\nb")
    builder.write("with space.txt", "one\n")
    builder.write("naïve.txt", "un\n")
    base = builder.commit("base")

    builder.write("modified.py", "def f():\n    return 10\n\n\ndef g():\n    return 2\n")
    builder.move("pure_rename_old.txt", "pure_rename_new.txt")
    builder.move("edit_rename_old.txt", "dir/edit_rename_new.txt")
    builder.write("dir/edit_rename_new.txt", TWENTY.replace("line 10\n", "line ten\n"))
    builder.remove("deleted.txt")
    builder.write("added.txt", "hello\nworld\n")
    builder.write("image.bin", b"\x00\x01\x02\x04")
    builder.write("tool.sh", "#!/bin/sh\necho hi\n", executable=True)
    builder.write("latin1.txt", b"caf\xe9\nna\xefve\n")
    builder.write("no_newline.txt", "a\nB")
    builder.write("with space.txt", "one\ntwo\n")
    builder.write("naïve.txt", "un\ndeux\n")
    head = builder.commit("head")

    with GitRepo.open(builder.path) as repo:
        parsed = parse_unified_diff(repo.diff(base, head))
    return {file.path: file for file in parsed}


def lines_of(file: FileDiff) -> list[tuple[str, int | None, int | None, str]]:
    return [
        (line.kind.value, line.old_line, line.new_line, line.text)
        for hunk in file.hunks
        for line in hunk.lines
    ]


def test_every_changed_file_is_parsed_once(files: dict[str, FileDiff]) -> None:
    assert sorted(files) == [
        "added.txt",
        "deleted.txt",
        "dir/edit_rename_new.txt",
        "image.bin",
        "latin1.txt",
        "modified.py",
        "naïve.txt",
        "no_newline.txt",
        "pure_rename_new.txt",
        "tool.sh",
        "with space.txt",
    ]


def test_modified_file(files: dict[str, FileDiff]) -> None:
    file = files["modified.py"]
    assert (file.status, file.old_path, file.is_binary) == (FileStatus.MODIFIED, None, False)
    assert (file.old_mode, file.new_mode) == (None, None)
    [hunk] = file.hunks
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (1, 5, 1, 5)
    assert ("removed", 2, None, "    return 1") in lines_of(file)
    assert ("added", None, 2, "    return 10") in lines_of(file)
    assert file.changed_lines() == {2}
    # Three lines of context around line 2: lines 1-5 on both sides.
    assert file.commentable_lines(Side.RIGHT) == set(range(1, 6))
    assert file.commentable_lines(Side.LEFT) == set(range(1, 6))
    assert file.patch.startswith("diff --git a/modified.py b/modified.py\n")


def test_added_file(files: dict[str, FileDiff]) -> None:
    file = files["added.txt"]
    assert (file.status, file.new_mode, file.old_mode) == (FileStatus.ADDED, "100644", None)
    assert lines_of(file) == [("added", None, 1, "hello"), ("added", None, 2, "world")]
    assert file.commentable_lines(Side.RIGHT) == {1, 2}
    assert file.commentable_lines(Side.LEFT) == frozenset()


def test_deleted_file(files: dict[str, FileDiff]) -> None:
    file = files["deleted.txt"]
    assert (file.status, file.old_mode, file.new_mode) == (FileStatus.DELETED, "100644", None)
    assert lines_of(file) == [("removed", 1, None, "bye"), ("removed", 2, None, "now")]
    assert file.commentable_lines(Side.LEFT) == {1, 2}
    assert file.commentable_lines(Side.RIGHT) == frozenset()


def test_pure_rename_has_no_hunks(files: dict[str, FileDiff]) -> None:
    file = files["pure_rename_new.txt"]
    assert (file.status, file.old_path) == (FileStatus.RENAMED, "pure_rename_old.txt")
    assert file.hunks == ()
    assert "rename from pure_rename_old.txt\nrename to pure_rename_new.txt\n" in file.patch


def test_rename_with_edit(files: dict[str, FileDiff]) -> None:
    file = files["dir/edit_rename_new.txt"]
    assert (file.status, file.old_path) == (FileStatus.RENAMED, "edit_rename_old.txt")
    [hunk] = file.hunks
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (7, 7, 7, 7)
    assert file.changed_lines() == {10}
    assert ("removed", 10, None, "line 10") in lines_of(file)


def test_binary_file(files: dict[str, FileDiff]) -> None:
    file = files["image.bin"]
    assert (file.status, file.is_binary, file.hunks) == (FileStatus.MODIFIED, True, ())
    assert file.patch.endswith("Binary files a/image.bin and b/image.bin differ\n")


def test_mode_only_change(files: dict[str, FileDiff]) -> None:
    file = files["tool.sh"]
    assert (file.status, file.old_mode, file.new_mode) == (FileStatus.MODIFIED, "100644", "100755")
    assert file.hunks == ()
    assert file.commentable_lines(Side.RIGHT) == frozenset()


def test_non_utf8_content_is_replaced_not_fatal(files: dict[str, FileDiff]) -> None:
    assert lines_of(files["latin1.txt"]) == [
        ("context", 1, 1, "caf\ufffd"),
        ("added", None, 2, "na\ufffdve"),
    ]


def test_missing_final_newline_marker_is_not_a_line(files: dict[str, FileDiff]) -> None:
    file = files["no_newline.txt"]
    assert lines_of(file) == [
        ("context", 1, 1, "a"),
        ("removed", 2, None, "b"),
        ("added", None, 2, "B"),
    ]
    assert file.patch.endswith("+B\n\\ No newline at end of file\n")


def test_path_with_space_and_non_ascii_path(files: dict[str, FileDiff]) -> None:
    assert lines_of(files["with space.txt"])[-1] == ("added", None, 2, "two")
    assert lines_of(files["naïve.txt"])[-1] == ("added", None, 2, "deux")


def test_line_kinds_partition_the_lines(files: dict[str, FileDiff]) -> None:
    for file in files.values():
        for hunk in file.hunks:
            for line in hunk.lines:
                assert (line.old_line is None) == (line.kind is LineKind.ADDED)
                assert (line.new_line is None) == (line.kind is LineKind.REMOVED)


def test_patches_concatenate_to_the_whole_diff(
    builder: RepoBuilder, open_repo: Callable[[Path | str], GitRepo]
) -> None:
    builder.write("a.txt", "1\n")
    builder.write("b.txt", "1\n")
    base = builder.commit()
    builder.write("a.txt", "2\n")
    builder.write("c.bin", b"\x00")
    builder.remove("b.txt")
    head = builder.commit()
    raw = open_repo(builder.path).diff(base, head)
    parsed = parse_unified_diff(raw)
    assert [file.path for file in parsed] == ["a.txt", "b.txt", "c.bin"]
    assert "".join(file.patch for file in parsed) == raw.decode("utf-8")
