"""Parser behaviour on hand-written diffs: errors, plain ``diff -u``, odd content."""

from __future__ import annotations

import pytest

from assay.diff import FileStatus, LineKind, Side, parse_unified_diff
from assay.errors import DiffError

MODIFIED = (
    "diff --git a/app.py b/app.py\n"
    "index 1111111..2222222 100644\n"
    "--- a/app.py\n"
    "+++ b/app.py\n"
    "@@ -1,3 +1,3 @@ def main():\n"
    " a\n"
    "-b\n"
    "+B\n"
    " c\n"
)


@pytest.mark.parametrize("empty", ["", b"", "\n", "  \n\n"])
def test_empty_diff_has_no_files(empty: str | bytes) -> None:
    assert parse_unified_diff(empty) == ()


def test_str_and_bytes_parse_alike() -> None:
    assert parse_unified_diff(MODIFIED) == parse_unified_diff(MODIFIED.encode("utf-8"))
    [file] = parse_unified_diff(MODIFIED)
    assert file.hunks[0].section == "def main():"


@pytest.mark.parametrize(
    "garbage",
    [
        "hello world\n",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "<html><body>502 Bad Gateway</body></html>",
    ],
)
def test_garbage_is_a_diff_error(garbage: str | bytes) -> None:
    with pytest.raises(DiffError, match="not a unified diff"):
        parse_unified_diff(garbage)


def test_truncated_hunk_is_a_diff_error_naming_the_file() -> None:
    truncated = MODIFIED.rsplit(" c\n", 1)[0]
    with pytest.raises(DiffError, match=r"app\.py.*shorter than expected"):
        parse_unified_diff(truncated)


def test_bad_hunk_line_is_a_diff_error() -> None:
    with pytest.raises(DiffError, match=r"app\.py"):
        parse_unified_diff(MODIFIED.replace("-b\n", "*b\n"))


def test_hunk_without_file_names_is_a_diff_error() -> None:
    broken = "diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n"
    with pytest.raises(DiffError, match="without ---/\\+\\+\\+"):
        parse_unified_diff(broken)


def test_combined_merge_diff_is_refused() -> None:
    combined = "diff --cc file.txt\nindex 1,2..3\n--- a/file.txt\n+++ b/file.txt\n"
    with pytest.raises(DiffError, match="combined"):
        parse_unified_diff(combined)


def test_malformed_quoted_path_is_a_diff_error() -> None:
    broken = 'diff --git "a/x\\q" "b/x\\q"\nold mode 100644\nnew mode 100755\n'
    with pytest.raises(DiffError, match="bad escape"):
        parse_unified_diff(broken)


def test_content_lines_that_look_like_headers_stay_content() -> None:
    tricky = (
        "diff --git a/notes.md b/notes.md\n"
        "--- a/notes.md\n"
        "+++ b/notes.md\n"
        "@@ -1,2 +1,2 @@\n"
        "--- a/old\n"
        "+++ b/new\n"
        " diff --git a/x b/x\n"
    )
    [file] = parse_unified_diff(tricky)
    assert [(line.kind, line.text) for line in file.hunks[0].lines] == [
        (LineKind.REMOVED, "-- a/old"),
        (LineKind.ADDED, "++ b/new"),
        (LineKind.CONTEXT, "diff --git a/x b/x"),
    ]


def test_unicode_line_separators_inside_content_do_not_split_lines() -> None:
    content = "a\u2028b\x0cc\rd"
    diff = f"diff --git a/t b/t\n--- a/t\n+++ b/t\n@@ -1 +1 @@\n-old\n+{content}\n"
    [file] = parse_unified_diff(diff)
    assert file.hunks[0].lines[-1].text == content


def test_format_patch_preamble_and_signature_are_left_out() -> None:
    mail = (
        "From 0123 Mon Sep 17 00:00:00 2001\n"
        "Subject: [PATCH] change\n"
        "\n"
        "---\n"
        " app.py | 2 +-\n"
        "\n"
        f"{MODIFIED}"
        "-- \n"
        "2.39.5\n"
        "\n"
    )
    [file] = parse_unified_diff(mail)
    assert file.patch == MODIFIED
    assert file.changed_lines() == {2}


def test_plain_unified_diff_without_git_headers() -> None:
    plain = (
        "--- a/lib.c\t2024-01-01 00:00:00.000000000 +0000\n"
        "+++ b/lib.c\t2024-01-02 00:00:00.000000000 +0000\n"
        "@@ -1,2 +1,2 @@\n"
        " int x;\n"
        "-int y;\n"
        "+long y;\n"
        "--- /dev/null\n"
        "+++ b/new.h\n"
        "@@ -0,0 +1 @@\n"
        "+#pragma once\n"
        "--- a/old.h\n"
        "+++ /dev/null\n"
        "@@ -1 +0,0 @@\n"
        "-#pragma once\n"
    )
    files = parse_unified_diff(plain)
    assert [(file.path, file.status) for file in files] == [
        ("lib.c", FileStatus.MODIFIED),
        ("new.h", FileStatus.ADDED),
        ("old.h", FileStatus.DELETED),
    ]
    assert files[0].commentable_lines(Side.RIGHT) == {1, 2}
    assert "".join(file.patch for file in files) == plain


def test_mnemonic_prefixes_are_stripped() -> None:
    mnemonic = MODIFIED.replace("a/app.py", "c/app.py").replace("b/app.py", "w/app.py")
    [file] = parse_unified_diff(mnemonic)
    assert file.path == "app.py"


def test_no_prefix_diff_keeps_paths_whole() -> None:
    no_prefix = (
        "diff --git src/app.py src/app.py\n"
        "--- src/app.py\n"
        "+++ src/app.py\n"
        "@@ -1 +1 @@\n"
        "-a\n"
        "+b\n"
        "diff --git src/run.sh src/run.sh\n"
        "old mode 100644\n"
        "new mode 100755\n"
    )
    files = parse_unified_diff(no_prefix)
    assert [file.path for file in files] == ["src/app.py", "src/run.sh"]


def test_rename_with_quoted_names_and_mode_change() -> None:
    diff = (
        'diff --git "a/old\\tname.sh" "b/new \\"name\\".sh"\n'
        "old mode 100644\n"
        "new mode 100755\n"
        "similarity index 100%\n"
        'rename from "old\\tname.sh"\n'
        'rename to "new \\"name\\".sh"\n'
    )
    [file] = parse_unified_diff(diff)
    assert (file.path, file.old_path, file.status) == (
        'new "name".sh',
        "old\tname.sh",
        FileStatus.RENAMED,
    )
    assert (file.old_mode, file.new_mode, file.hunks) == ("100644", "100755", ())


def test_binary_patch_payload_is_not_kept() -> None:
    diff = (
        "diff --git a/img.png b/img.png\n"
        "index 1111111..2222222 100644\n"
        "GIT binary patch\n"
        "literal 4\n"
        "LcmZQzWMT#Y01f~L\n"
        "\n"
        "literal 4\n"
        "LcmZQzWMT#Y01f~L\n"
        "\n"
    )
    [file] = parse_unified_diff(diff)
    assert file.is_binary
    assert file.patch.endswith("GIT binary patch\n")
