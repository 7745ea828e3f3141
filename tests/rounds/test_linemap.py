"""Line maps between two heads, read from real ``git diff`` output."""

from __future__ import annotations

import random

from assay.diff.linemap import MappedLine
from assay.forge.git import GitRepo

from ._helpers import Repo, lines_text


def test_insertions_above_shift_the_lines_below(repo: Repo) -> None:
    repo.write("app.py", lines_text(20))
    old = repo.commit()
    repo.write("app.py", "new a\nnew b\nnew c\n" + lines_text(20))
    new = repo.commit()

    line_map = repo.line_map(old, new)

    assert line_map.map_line("app.py", 1) == MappedLine("app.py", 4)
    assert line_map.map_line("app.py", 10) == MappedLine("app.py", 13)
    assert line_map.map_line("app.py", 20) == MappedLine("app.py", 23)
    assert line_map.range_unchanged("app.py", 9, 12)
    assert line_map.added_lines("app.py") == frozenset({1, 2, 3})


def test_insertion_in_the_middle_leaves_lines_above_in_place(repo: Repo) -> None:
    content = lines_text(30).splitlines(keepends=True)
    repo.write("app.py", "".join(content))
    old = repo.commit()
    repo.write("app.py", "".join([*content[:15], "inserted 1\n", "inserted 2\n", *content[15:]]))
    new = repo.commit()

    line_map = repo.line_map(old, new)

    assert line_map.map_line("app.py", 15) == MappedLine("app.py", 15)
    assert line_map.map_line("app.py", 16) == MappedLine("app.py", 18)
    # A range the insertion splits no longer reads as it did.
    assert not line_map.range_unchanged("app.py", 14, 17)
    assert line_map.range_unchanged("app.py", 16, 19)


def test_deleted_lines_map_to_nothing_and_their_neighbours_close_up(repo: Repo) -> None:
    content = lines_text(20).splitlines(keepends=True)
    repo.write("app.py", "".join(content))
    old = repo.commit()
    repo.write("app.py", "".join(content[:4] + content[7:]))  # lines 5-7 removed
    new = repo.commit()

    line_map = repo.line_map(old, new)

    assert line_map.map_line("app.py", 4) == MappedLine("app.py", 4)
    assert [line_map.map_line("app.py", line) for line in (5, 6, 7)] == [None, None, None]
    assert line_map.map_line("app.py", 8) == MappedLine("app.py", 5)
    assert line_map.map_line("app.py", 20) == MappedLine("app.py", 17)
    # Where a removed line was: the next kept line.
    assert line_map.nearest("app.py", 6) == MappedLine("app.py", 5)
    assert not line_map.range_unchanged("app.py", 3, 6)


def test_a_changed_line_does_not_map_but_its_replacement_is_nearest(repo: Repo) -> None:
    content = lines_text(20).splitlines(keepends=True)
    repo.write("app.py", "".join(content))
    old = repo.commit()
    content[9] = "line 10 changed\n"
    repo.write("app.py", "".join(content))
    new = repo.commit()

    line_map = repo.line_map(old, new)

    assert line_map.map_line("app.py", 10) is None
    assert line_map.nearest("app.py", 10) == MappedLine("app.py", 10)
    assert line_map.map_line("app.py", 11) == MappedLine("app.py", 11)
    assert line_map.added_lines("app.py") == frozenset({10})


def test_a_renamed_and_edited_file_maps_to_its_new_path(repo: Repo) -> None:
    repo.write("pkg/old_name.py", lines_text(40))
    old = repo.commit()
    repo.move("pkg/old_name.py", "pkg/new_name.py")
    repo.write("pkg/new_name.py", "# header\n" + lines_text(40))
    new = repo.commit()

    line_map = repo.line_map(old, new)

    assert line_map.path_at_new("pkg/old_name.py") == "pkg/new_name.py"
    assert line_map.map_line("pkg/old_name.py", 8) == MappedLine("pkg/new_name.py", 9)
    assert line_map.added_lines("pkg/new_name.py") == frozenset({1})


def test_a_deleted_file_maps_nothing_and_an_untouched_one_maps_to_itself(repo: Repo) -> None:
    repo.write("gone.py", lines_text(10))
    repo.write("kept.py", lines_text(10))
    repo.write("other.py", lines_text(3))
    old = repo.commit()
    repo.remove("gone.py")
    repo.write("other.py", lines_text(4))
    new = repo.commit()

    line_map = repo.line_map(old, new)

    assert line_map.path_at_new("gone.py") is None
    assert line_map.map_line("gone.py", 3) is None
    assert line_map.nearest("gone.py", 3) is None
    assert line_map.map_line("kept.py", 7) == MappedLine("kept.py", 7)
    assert line_map.range_unchanged("kept.py", 1, 10)


def test_a_binary_change_maps_no_line(repo: Repo) -> None:
    (repo.path / "blob.bin").write_bytes(b"\x00\x01\x02" * 50)
    old = repo.commit()
    (repo.path / "blob.bin").write_bytes(b"\x00\x09\x02" * 50)
    new = repo.commit()

    line_map = repo.line_map(old, new)

    assert line_map.map_line("blob.bin", 1) is None
    assert line_map.path_at_new("blob.bin") == "blob.bin"


def test_force_push_maps_between_heads_that_are_not_ancestors(repo: Repo) -> None:
    repo.write("app.py", lines_text(20))
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", lines_text(20) + "round one tail\n")
    round_one = repo.commit("round 1")
    # The author rewrites the branch: a new commit on the base, without round one's commit.
    repo.git("reset", "-q", "--hard", base)
    repo.write("app.py", "top 1\ntop 2\n" + lines_text(20))
    round_two = repo.commit("rewritten")
    with GitRepo.open(repo.path) as git_repo:
        assert not git_repo.is_ancestor(round_one, round_two)

    line_map = repo.line_map(round_one, round_two)

    assert line_map.map_line("app.py", 5) == MappedLine("app.py", 7)
    assert line_map.map_line("app.py", 21) is None  # round one's tail is gone


def test_every_mapped_line_keeps_its_text_and_order(repo: Repo) -> None:
    """Random edits, real diffs: a mapped line reads the same at both heads, in order."""
    rng = random.Random(4)
    current = [f"original {number}" for number in range(1, 61)]
    repo.write("app.py", "\n".join(current) + "\n")
    old = repo.commit()
    for step in range(12):
        edited = list(current)
        for _ in range(rng.randint(1, 6)):
            where = rng.randrange(len(edited) + 1)
            action = rng.choice(("insert", "delete", "change"))
            if action == "insert" or not edited:
                edited.insert(where, f"inserted {step}.{where}")
            elif action == "delete":
                del edited[min(where, len(edited) - 1)]
            else:
                edited[min(where, len(edited) - 1)] += " (changed)"
        repo.write("app.py", "\n".join(edited) + "\n")
        new = repo.commit()

        line_map = repo.line_map(old, new)

        mapped = [
            (line, moved.line)
            for line in range(1, len(current) + 1)
            if (moved := line_map.map_line("app.py", line)) is not None
        ]
        assert mapped, "some lines survive every edit here"
        for old_line, new_line in mapped:
            assert current[old_line - 1] == edited[new_line - 1]
        assert [new_line for _old, new_line in mapped] == sorted({n for _o, n in mapped})
        old, current = new, edited
