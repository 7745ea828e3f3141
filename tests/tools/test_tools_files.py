"""read_file, list_files and git_show: numbered, bounded, and refusing every escape."""

from __future__ import annotations

import pytest

from assay.tools import Toolbox, ToolLimits, Workspace
from tests.tools.repo_builder import BIG_FILE_LINES, SECRET


def test_read_file_numbers_the_lines(toolbox: Toolbox) -> None:
    result = toolbox.read_file("src/calc.py")

    assert result.ok
    assert result.text == (
        "src/calc.py, lines 1-6 of 6:\n"
        "   1 | def add(a, b):\n"
        "   2 |     return a + b\n"
        "   3 | \n"
        "   4 | \n"
        "   5 | def total(values):\n"
        "   6 |     return summ(values)"
    )


def test_read_file_shows_a_range(toolbox: Toolbox) -> None:
    result = toolbox.read_file("big.txt", start=998, end=2000)

    assert result.text == (
        "big.txt, lines 998-1000 of 1000:\n"
        " 998 | line 998 needle\n"
        " 999 | line 999 needle\n"
        "1000 | line 1000 needle"
    )


def test_read_file_is_bounded_and_says_how_to_read_on(toolbox: Toolbox) -> None:
    result = toolbox.read_file("big.txt")

    lines = result.text.splitlines()
    assert lines[0] == f"big.txt, lines 1-400 of {BIG_FILE_LINES}:"
    assert lines[400] == " 400 | line 400 needle"
    assert lines[-1] == (
        "[cut after line 400: at most 400 lines or 40000 bytes per call; "
        "call read_file with path='big.txt' and start=401 to read on]"
    )
    assert len(lines) == 402


def test_read_file_byte_limit_and_long_lines(workspace: Workspace) -> None:
    small = Toolbox(workspace, limits=ToolLimits(read_max_bytes=100, line_chars=20))

    big = small.read_file("big.txt").text.splitlines()
    long_line = small.read_file("long_line.txt").text.splitlines()

    assert big[0] == "big.txt, lines 1-4 of 1000:"
    assert "start=5" in big[-1]
    assert long_line[1] == "   1 | " + "x" * 20 + "… [5007 chars]"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("empty.txt", "empty.txt is empty (0 lines)."),
        ("crlf.txt", "crlf.txt, lines 1-2 of 2:\n   1 | needle here\n   2 | second line"),
        (
            "latin1.txt",
            "latin1.txt, lines 1-1 of 1 (not valid UTF-8: undecodable bytes are shown as "
            "U+FFFD):\n   1 | caf\ufffd needle",
        ),
        (
            "dir with space/my file.py",
            "dir with space/my file.py, lines 1-1 of 1:\n   1 | TOKEN = 'needle in a spaced path'",
        ),
        ("./src//new.py", "src/new.py, lines 1-2 of 3:\n   1 | from calc import add\n   2 | "),
        (
            "alias.py",
            "alias.py (symbolic link to src/calc.py), lines 1-2 of 6:\n"
            "   1 | def add(a, b):\n   2 |     return a + b",
        ),
        (
            "src_link/calc.py",
            "src_link/calc.py, lines 1-2 of 6:\n   1 | def add(a, b):\n   2 |     return a + b",
        ),
    ],
)
def test_read_file_shows_what_is_there(toolbox: Toolbox, path: str, expected: str) -> None:
    result = toolbox.read_file(path, end=2)

    assert result.ok, result.text
    assert result.text == expected


@pytest.mark.parametrize(
    ("path", "start", "end", "error"),
    [
        ("blob.bin", 1, None, "blob.bin is a binary file (18 bytes); it is not shown"),
        ("src/calc.py", 7, None, "start=7 is past the end: src/calc.py has 6 lines"),
        ("src/calc.py", 5, 2, "end=2 is before start=5"),
        ("src", 1, None, "'src' is a directory; list_files with glob 'src/**'"),
        ("", 1, None, "give a file path relative to the repository root"),
        ("nope.py", 1, None, "no file 'nope.py' at head; list_files or grep can find the path"),
        ("dangling", 1, None, "no file 'dangling' at head"),
        ("vendor/lib", 1, None, "'vendor/lib' is a submodule (another repository, at commit"),
    ],
)
def test_read_file_errors(
    toolbox: Toolbox, path: str, start: int, end: int | None, error: str
) -> None:
    result = toolbox.read_file(path, start=start, end=end)

    assert not result.ok
    assert result.text.startswith(f"error: {error}")
    assert result.record.error is not None and result.text == f"error: {result.record.error}"


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("../outside/secret.txt", "'..' is refused in a path"),
        ("src/../../outside/secret.txt", "'..' is refused in a path"),
        ("/etc/passwd", "absolute paths are refused"),
        (
            "evil_rel",
            "'evil_rel' is a symbolic link to '../outside/secret.txt', outside the "
            "checkout; refused",
        ),
        ("evil_abs", "'evil_abs' is a symbolic link to '/"),
        (
            "evil_dir/secret.txt",
            "'evil_dir' is a symbolic link to '../outside', outside the checkout; refused",
        ),
        ("escape_via_dot", "'escape_via_dot' is a symbolic link to 'dot/../outside/secret.txt'"),
        ("dot/../outside/secret.txt", "'..' is refused"),
        ("src\0x", "the path contains a NUL character"),
    ],
)
def test_read_file_refuses_escapes(toolbox: Toolbox, path: str, error: str) -> None:
    result = toolbox.read_file(path)

    assert not result.ok
    assert result.text.startswith(f"error: {error}")
    assert SECRET not in result.text


def test_read_file_refuses_a_link_created_outside_the_tree(fresh_workspace: Workspace) -> None:
    # Defence in depth: a link that is on disk (not from the tree) is checked on resolution.
    toolbox = Toolbox(fresh_workspace)
    root = fresh_workspace.root
    (root / "planted").symlink_to("/etc")

    result = toolbox.read_file("planted/hostname")

    assert result.text == (
        "error: 'planted/hostname' leads outside the checkout through a symbolic link; refused"
    )


def test_list_files_lists_and_marks(toolbox: Toolbox) -> None:
    result = toolbox.list_files("*")

    lines = result.text.splitlines()
    assert lines[0] == "28 paths match '*' at head:"
    assert "alias.py -> src/calc.py  [symbolic link]" in lines
    assert (
        "evil_rel -> ../outside/secret.txt  [symbolic link; it points outside the checkout and "
        "is not readable]"
    ) in lines
    assert "vendor/lib  [submodule]" in lines
    assert "dir with space/my file.py" in lines
    assert "src/old.py" not in lines  # deleted at head


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        ("src/**", "2 paths match 'src/**' at head:\nsrc/calc.py\nsrc/new.py"),
        ("*.py", None),
        ("nothing/*", "No files match 'nothing/*' at head."),
    ],
)
def test_list_files_globs(toolbox: Toolbox, glob: str, expected: str | None) -> None:
    result = toolbox.list_files(glob)

    if expected is not None:
        assert result.text == expected
    else:
        assert result.text.splitlines()[1:] == [
            "alias.py -> src/calc.py  [symbolic link]",
            "archive_ignored.py",
            "dir with space/my file.py",
            "src/calc.py",
            "src/new.py",
        ]


def test_list_files_is_bounded(toolbox: Toolbox) -> None:
    result = toolbox.list_files("**", max_results=3)

    lines = result.text.splitlines()
    assert (
        lines[0]
        == "28 paths match '**' at head (the first 3 are listed; narrow the glob for the rest):"
    )
    assert len(lines) == 4


@pytest.mark.parametrize(
    ("glob", "error"),
    [("../**", "'..' is refused in a glob"), ("/etc/*", "absolute globs are refused")],
)
def test_list_files_refuses_escapes(toolbox: Toolbox, glob: str, error: str) -> None:
    result = toolbox.list_files(glob)

    assert not result.ok
    assert result.text.startswith(f"error: {error}")


def test_git_show_reads_base_and_head(toolbox: Toolbox) -> None:
    base = toolbox.git_show("base", "src/calc.py")
    head = toolbox.git_show("head", "src/calc.py", start=5)
    old = toolbox.git_show("base", "src/old.py")

    assert base.text == (
        "src/calc.py at base, lines 1-2 of 2:\n   1 | def add(a, b):\n   2 |     return a + b"
    )
    assert head.text == (
        "src/calc.py at head, lines 5-6 of 6:\n"
        "   5 | def total(values):\n"
        "   6 |     return summ(values)"
    )
    assert old.text == "src/old.py at base, lines 1-1 of 1:\n   1 | OLD = True"


@pytest.mark.parametrize(
    ("rev", "path", "error"),
    [
        (
            "head",
            "src/old.py",
            "no file 'src/old.py' at head (it was deleted or renamed by this "
            "change; it exists at base)",
        ),
        (
            "base",
            "src/new.py",
            "no file 'src/new.py' at base (it was added by this change; it exists at head)",
        ),
        ("base", "src", "'src' is a directory at base; git_show shows files"),
        (
            "head",
            "evil_rel",
            "'evil_rel' is a symbolic link at head (to '../outside/secret.txt'); "
            "git_show does not follow links",
        ),
        ("head", "evil_dir/secret.txt", "no file 'evil_dir/secret.txt' at head"),
        ("head", "src_link/calc.py", "no file 'src_link/calc.py' at head"),
        ("head", "../outside/secret.txt", "'..' is refused in a path"),
        ("base", "/etc/passwd", "absolute paths are refused"),
        ("head", "vendor/lib", "'vendor/lib' is a submodule"),
        ("head", "blob.bin", "blob.bin at head is a binary file"),
        ("tip", "src/calc.py", "invalid arguments:\n- rev: Input should be 'head' or 'base'"),
    ],
)
def test_git_show_errors(toolbox: Toolbox, rev: str, path: str, error: str) -> None:
    result = toolbox.git_show(rev, path)

    assert not result.ok
    assert result.text.startswith(f"error: {error}")
    assert SECRET not in result.text
