"""``anchor_to_diff``: where a finding's comment goes, on a diff parsed from text."""

from __future__ import annotations

import pytest

from assay.diff import (
    Anchor,
    AnchorMode,
    FileDiff,
    Side,
    anchor_to_diff,
    file_for_path,
    hunk_commentable_lines,
    parse_unified_diff,
)

# app.py, two hunks:
#   RIGHT commentable: 10-14 and 32-34      LEFT commentable: 10-13 and 31-33
DIFF = """\
diff --git a/src/app.py b/src/app.py
index 1111111..2222222 100644
--- a/src/app.py
+++ b/src/app.py
@@ -10,4 +10,5 @@ def run():
 ctx 10
-old 11
+new 11
+new 12
 ctx 12/13
 ctx 13/14
@@ -31,3 +32,3 @@ def stop():
 ctx 31/32
-old 32
+new 33
 ctx 33/34
diff --git a/gone.py b/gone.py
deleted file mode 100644
index 3333333..0000000
--- a/gone.py
+++ /dev/null
@@ -1,3 +0,0 @@
-a
-b
-c
diff --git a/fresh.py b/fresh.py
new file mode 100644
index 0000000..4444444
--- /dev/null
+++ b/fresh.py
@@ -0,0 +1,2 @@
+x
+y
diff --git a/old_name.py b/new_name.py
similarity index 90%
rename from old_name.py
rename to new_name.py
index 5555555..6666666 100644
--- a/old_name.py
+++ b/new_name.py
@@ -5,3 +5,3 @@
 five
-six
+SIX
 seven
diff --git a/moved_old.py b/moved_new.py
similarity index 100%
rename from moved_old.py
rename to moved_new.py
diff --git a/logo.png b/logo.png
index 7777777..8888888 100644
Binary files a/logo.png and b/logo.png differ
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git a/insert_only.py b/insert_only.py
index 9999999..aaaaaaa 100644
--- a/insert_only.py
+++ b/insert_only.py
@@ -5,0 +6,2 @@
+inserted 6
+inserted 7
"""

FILES = parse_unified_diff(DIFF)


def anchor(path: str, line: int, side: Side = Side.RIGHT, end_line: int | None = None) -> Anchor:
    return anchor_to_diff(path, line, side, FILES, end_line=end_line)


def at(path: str, line: int, side: Side, mode: AnchorMode = AnchorMode.LINE) -> Anchor:
    return Anchor(mode=mode, path=path, line=line, side=side)


def test_fixture_commentable_lines() -> None:
    app = file_for_path(FILES, "src/app.py")
    assert app is not None
    assert app.commentable_lines(Side.RIGHT) == {10, 11, 12, 13, 14, 32, 33, 34}
    assert app.commentable_lines(Side.LEFT) == {10, 11, 12, 13, 31, 32, 33}
    assert hunk_commentable_lines(app, Side.RIGHT) == (
        frozenset({10, 11, 12, 13, 14}),
        frozenset({32, 33, 34}),
    )


@pytest.mark.parametrize(
    ("line", "side", "what"),
    [
        (11, Side.RIGHT, "added line"),
        (12, Side.RIGHT, "second added line"),
        (13, Side.RIGHT, "context line, head numbering"),
        (11, Side.LEFT, "removed line"),
        (12, Side.LEFT, "context line, base numbering"),
        (32, Side.LEFT, "removed line in the second hunk"),
    ],
)
def test_commentable_line_anchors_in_place(line: int, side: Side, what: str) -> None:
    result = anchor("src/app.py", line, side)
    assert result == at("src/app.py", line, side), what
    assert not result.moved


def test_range_inside_one_hunk_is_a_range_anchor() -> None:
    assert anchor("src/app.py", 10, Side.RIGHT, end_line=14) == Anchor(
        mode=AnchorMode.LINE,
        path="src/app.py",
        start_line=10,
        start_side=Side.RIGHT,
        line=14,
        side=Side.RIGHT,
    )


def test_range_on_the_left_side() -> None:
    result = anchor("src/app.py", 31, Side.LEFT, end_line=33)
    assert (result.start_line, result.start_side, result.line, result.side) == (
        31,
        Side.LEFT,
        33,
        Side.LEFT,
    )


@pytest.mark.parametrize(
    ("start", "end"),
    [
        (12, 20),  # runs past the end of the hunk
        (13, 33),  # spans two hunks
        (12, 12),  # a one-line "range"
        (12, 11),  # reversed
        (12, 10**9),  # absurd end from a model
    ],
)
def test_range_not_inside_one_hunk_anchors_on_its_first_line(start: int, end: int) -> None:
    assert anchor("src/app.py", start, Side.RIGHT, end_line=end) == at(
        "src/app.py", start, Side.RIGHT
    )


@pytest.mark.parametrize(
    ("line", "side", "expected_line"),
    [
        (20, Side.RIGHT, 14),  # below the first hunk, closer to it
        (28, Side.RIGHT, 32),  # above the second hunk, closer to it
        (23, Side.RIGHT, 14),  # tie (9 and 9): the earlier line
        (1, Side.RIGHT, 10),  # before every hunk
        (500, Side.RIGHT, 34),  # after every hunk
        (0, Side.RIGHT, 10),  # nonsense line numbers still land on a real line
        (22, Side.LEFT, 13),  # tie on the left (9 and 9): the earlier line
        (29, Side.LEFT, 31),
        (50, Side.LEFT, 33),
    ],
)
def test_line_outside_every_hunk_moves_to_the_nearest_hunk_line(
    line: int, side: Side, expected_line: int
) -> None:
    result = anchor("src/app.py", line, side)
    assert result == at("src/app.py", expected_line, side, AnchorMode.NEAREST_HUNK)
    assert result.moved


def test_right_finding_on_a_deleted_file_uses_the_left_side() -> None:
    assert anchor("gone.py", 2, Side.RIGHT) == at("gone.py", 2, Side.LEFT)
    assert anchor("gone.py", 9, Side.RIGHT) == at("gone.py", 3, Side.LEFT, AnchorMode.NEAREST_HUNK)


def test_left_finding_on_an_added_file_uses_the_right_side() -> None:
    assert anchor("fresh.py", 1, Side.LEFT) == at("fresh.py", 1, Side.RIGHT)
    assert anchor("fresh.py", 7, Side.RIGHT) == at(
        "fresh.py", 2, Side.RIGHT, AnchorMode.NEAREST_HUNK
    )


def test_side_without_lines_falls_back_to_the_other_side_for_the_nearest_line() -> None:
    # A pure insertion (-U0) has no LEFT lines; a LEFT finding still lands on the hunk.
    assert anchor("insert_only.py", 5, Side.LEFT) == at(
        "insert_only.py", 6, Side.RIGHT, AnchorMode.NEAREST_HUNK
    )


def test_old_path_of_a_renamed_file_anchors_on_the_new_path() -> None:
    assert anchor("old_name.py", 6, Side.RIGHT) == at("new_name.py", 6, Side.RIGHT)
    assert anchor("new_name.py", 6, Side.LEFT) == at("new_name.py", 6, Side.LEFT)


@pytest.mark.parametrize(
    ("path", "anchored_path"),
    [
        ("moved_old.py", "moved_new.py"),  # pure rename, by its old path
        ("moved_new.py", "moved_new.py"),  # pure rename
        ("logo.png", "logo.png"),  # binary
        ("run.sh", "run.sh"),  # mode-only
    ],
)
def test_file_without_commentable_lines_gets_a_file_comment(path: str, anchored_path: str) -> None:
    assert anchor(path, 3) == Anchor(mode=AnchorMode.FILE, path=anchored_path)


def test_file_not_in_the_diff_goes_to_the_body() -> None:
    result = anchor("src/untouched.py", 3, end_line=5)
    assert result == Anchor(mode=AnchorMode.BODY, path="src/untouched.py")
    assert result.moved


@pytest.mark.parametrize("path", ["./src/app.py", "/src/app.py", "././src/app.py"])
def test_path_spellings_from_models_are_normalized(path: str) -> None:
    assert anchor(path, 11) == at("src/app.py", 11, Side.RIGHT)


def test_file_for_path() -> None:
    assert file_for_path(FILES, "nope.py") is None
    renamed = file_for_path(FILES, "old_name.py")
    assert isinstance(renamed, FileDiff)
    assert renamed.path == "new_name.py"


def test_copy_source_is_not_matched_as_the_copy() -> None:
    copy = parse_unified_diff(
        "diff --git a/src.py b/dst.py\nsimilarity index 100%\ncopy from src.py\ncopy to dst.py\n"
    )
    # The copy's source still exists unchanged at head; it is not in the diff.
    assert anchor_to_diff("src.py", 1, Side.RIGHT, copy).mode is AnchorMode.BODY
    assert anchor_to_diff("dst.py", 1, Side.RIGHT, copy).mode is AnchorMode.FILE
