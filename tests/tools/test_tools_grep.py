"""grep: the answer's shape, what is searched and skipped, and ripgrep ≡ the Python engine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.tools import Toolbox, ToolLimits, Workspace
from assay.tools._grep import GrepQuery, run_grep
from assay.tools._paths import compile_glob
from tests.tools.repo_builder import SECRET


def test_grep_answer_lists_lines_and_counts_per_file(toolbox: Toolbox) -> None:
    result = toolbox.grep("needle", path_glob="src/**")

    assert result.ok
    assert result.text == (
        "1 matching line in 1 file for the pattern 'needle' in files matching 'src/**':\n"
        "src/new.py:3: NEEDLE = add(1, 2)  # needle\n"
        "Matching lines per file:\n"
        "src/new.py: 1"
    )


def test_grep_counts_everything_but_shows_max_results(toolbox: Toolbox) -> None:
    result = toolbox.grep(r"needle$", max_results=3)

    lines = result.text.splitlines()
    assert lines == [
        "1004 matching lines in 4 files for the pattern 'needle$'; the first 3 are shown "
        "(raise max_results, at most 200, or narrow the search for the rest):",
        "big.txt:1: line 1 needle",
        "big.txt:2: line 2 needle",
        "big.txt:3: line 3 needle",
        "Matching lines per file:",
        "big.txt: 1000",
        "long_line.txt: 1",
        "src/new.py: 1",
        "unicode.txt: 2",
    ]


def test_grep_searches_hidden_and_ignored_files_and_skips_binary_and_non_utf8(
    toolbox: Toolbox,
) -> None:
    text = toolbox.grep("needle", path_glob="*.{txt,log,py}", max_results=200).text
    outside_big = toolbox.grep("needle", path_glob="[!b]*").text

    assert ".hidden/conf.txt:1: needle hidden" in text
    assert "ignored.log:1: needle ignored but tracked" in outside_big
    assert "crlf.txt:1: needle here" in outside_big
    assert "dir with space/my file.py:1: TOKEN = 'needle in a spaced path'" in outside_big
    assert "long_line.txt:1: " + "x" * 300 + "… [5007 chars]" in outside_big
    assert "blob.bin" not in text
    assert "latin1.txt" not in text
    # Links are not followed: the file behind alias.py is counted once, under its own path.
    assert "alias.py" not in text and "src_link" not in text


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_grep_never_reads_outside_the_checkout(workspace: Workspace, engine: str) -> None:
    toolbox = Toolbox(workspace, ripgrep=None) if engine == "python" else Toolbox(workspace)
    for result in (
        toolbox.grep(SECRET),
        toolbox.grep(SECRET, fixed=True, path_glob="evil_rel"),
        toolbox.grep("SECRET", path_glob="evil_dir/**"),
    ):
        assert result.ok
        assert result.text.startswith("No matches for")
        assert SECRET not in result.text.split("'")[0]


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"pattern": "def add("}, "invalid regular expression 'def add(': missing ), unterminated"),
        ({"pattern": "[[a]"}, "the pattern '[[a]' has '[[' inside [...]"),
        ({"pattern": "[a--z]"}, "the pattern '[a--z]' has a doubled '-' inside [...]"),
        ({"pattern": "x", "path_glob": "../*"}, "'..' is refused in a glob"),
        ({"pattern": "x", "path_glob": "/etc"}, "absolute globs are refused"),
        ({"pattern": ""}, "invalid arguments:\n- pattern: String should have at least 1 character"),
    ],
)
def test_grep_errors(toolbox: Toolbox, arguments: dict[str, str], error: str) -> None:
    result = toolbox.grep(**arguments)  # type: ignore[arg-type]

    assert not result.ok
    assert result.text.startswith(f"error: {error}")


def test_grep_fixed_strings_are_literal(toolbox: Toolbox) -> None:
    result = toolbox.grep("add(1, 2)", fixed=True)

    assert result.text.splitlines()[0] == ("1 matching line in 1 file for the string 'add(1, 2)':")


def test_grep_stops_a_catastrophic_pattern(fresh_workspace: Workspace) -> None:
    (fresh_workspace.root / "trap.txt").write_text("a" * 64 + "\n", encoding="utf-8")
    toolbox = Toolbox(fresh_workspace, limits=ToolLimits(grep_timeout_s=1.0))

    result = toolbox.grep(r"(\w+)+!")  # \w keeps it in the Python engine

    assert not result.ok
    assert result.text.startswith("error: grep timed out after 1 s: the pattern may backtrack")


EQUIVALENCE_PATTERNS = [
    ("needle", False, None),
    ("^needle", False, None),
    ("needle$", False, None),
    ("here$", False, None),  # CRLF: the \r stays part of the line for both engines
    ("\ufeff", False, None),  # a BOM is content, not sniffed away
    ("^$", False, None),
    ("caf.", False, None),
    ("café|½", False, None),
    ("Σ.σ", False, None),
    ("[a-z]+ needle", False, None),
    ("[^a-z ]needle", False, None),
    ("ne+d{1,2}le", False, None),
    ("x{5000}", False, None),
    ("line 1(0|1)?0? needle", False, "*.txt"),
    (r"\Aline 99\d", False, None),
    (r"\bneedle\b", False, None),
    ("(?i)NEEDLE", False, None),
    (r"(\w+) = add", False, None),
    ("needle(?= )", False, None),
    ("add(1, 2)", True, None),
    ("$Format:%H$", True, None),
    ("needle", False, ".hidden"),
    ("needle", False, "*.{log,md}"),
    ("needle", False, "dir with space/*"),
    ("TOTAL", False, None),
]


@pytest.mark.parametrize(("pattern", "fixed", "glob"), EQUIVALENCE_PATTERNS)
def test_ripgrep_and_python_give_identical_answers(
    workspace: Workspace, ripgrep: Path, pattern: str, fixed: bool, glob: str | None
) -> None:
    with_ripgrep = Toolbox(workspace, ripgrep=ripgrep)
    pure_python = Toolbox(workspace, ripgrep=None)

    fast = with_ripgrep.grep(pattern, path_glob=glob, fixed=fixed, max_results=200)
    slow = pure_python.grep(pattern, path_glob=glob, fixed=fixed, max_results=200)

    assert fast.ok and slow.ok
    assert fast.text == slow.text


@pytest.mark.parametrize(
    ("pattern", "engine"),
    [("needle", "ripgrep"), ("^line [0-9]+ needle$", "ripgrep"), (r"\d", "python")],
)
def test_portable_patterns_run_in_ripgrep(
    workspace: Workspace, ripgrep: Path, pattern: str, engine: str
) -> None:
    query = GrepQuery(pattern=pattern, glob=None, max_shown=5, line_chars=100, timeout_s=10)

    fast = run_grep(workspace.root, query, ripgrep)
    slow = run_grep(workspace.root, query, None)

    assert fast.engine == engine
    assert slow.engine == "python"
    assert (fast.counts, fast.shown) == (slow.counts, slow.shown)


@pytest.mark.parametrize("use_ripgrep", [True, False])
def test_engines_do_not_follow_links_on_disk(
    tmp_path: Path, use_ripgrep: bool, request: pytest.FixtureRequest
) -> None:
    ripgrep: Path | None = request.getfixturevalue("ripgrep") if use_ripgrep else None
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle outside\n", encoding="utf-8")
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "real.txt").write_text("needle inside\n", encoding="utf-8")
    os.symlink(outside / "secret.txt", root / "file_link.txt")
    os.symlink(outside, root / "dir_link")
    os.symlink("sub", root / "inner_link")
    query = GrepQuery(
        pattern="needle", glob=compile_glob("**"), max_shown=10, line_chars=100, timeout_s=10
    )

    hits = run_grep(root.resolve(), query, ripgrep)

    assert hits.counts == (("sub/real.txt", 1),)
    assert hits.shown == (("sub/real.txt", 1, "needle inside"),)


def test_ripgrep_records_are_read_by_nul_not_by_colon_or_newline() -> None:
    from assay.tools._grep import _parse_ripgrep_output

    output = b"./odd:name\nwith newline.txt\x0012:a: b\n./x.py\x003:y\n./x.py\x007:\n"

    assert _parse_ripgrep_output(output) == {"odd:name\nwith newline.txt": {12}, "x.py": {3, 7}}
