"""Path normalization, glob matching and the ripgrep translation (pure functions)."""

from __future__ import annotations

import time

import pytest

from assay.tools._errors import ToolError
from assay.tools._paths import compile_glob, normalize_relative_path
from assay.tools._rust_regex import to_rust_regex


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("src/app.py", "src/app.py"),
        ("./src//app.py", "src/app.py"),
        ("src/./app.py/", "src/app.py"),
        ("dir with space/my file.py", "dir with space/my file.py"),
        ("", ""),
        (".", ""),
        ("~/x", "~/x"),
    ],
)
def test_normalize_relative_path_accepts_relative_paths(given: str, expected: str) -> None:
    assert normalize_relative_path(given) == expected


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("/etc/passwd", "absolute paths are refused"),
        ("C:\\Windows", "absolute paths are refused"),
        ("../outside", "'..' is refused"),
        ("src/../../outside", "'..' is refused"),
        ("src/..", "'..' is refused"),
        ("a\0b", "NUL"),
        ("x" * 2000, "longer than"),
    ],
)
def test_normalize_relative_path_refuses_escapes(given: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        normalize_relative_path(given)


@pytest.mark.parametrize(
    ("glob", "path", "selected"),
    [
        ("**", "a/b/c.py", True),
        ("*.py", "a/b/c.py", True),
        ("*.py", "a/b/c.pyc", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/sub/a.py", False),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("src/**/*.py", "lib/src/a.py", False),
        ("src", "src/x/y.py", True),
        ("src/", "src/x/y.py", True),
        ("tests", "pkg/tests/test_a.py", True),
        ("src/api", "src/api_old/a.py", False),
        ("*.{py,pyi}", "a/b.pyi", True),
        ("*.{py,pyi}", "a/b.txt", False),
        ("test_?.py", "test_a.py", True),
        ("test_?.py", "test_ab.py", False),
        ("[ab]*.py", "b1.py", True),
        ("[!ab]*.py", "b1.py", False),
        ("[a-c]x", "bx", True),
        ("dir with space/*", "dir with space/my file.py", True),
        ("\\*.py", "*.py", True),
        ("\\*.py", "a.py", False),
        ("./docs/*.md", "docs/guide.md", True),
    ],
)
def test_glob_selects_paths(glob: str, path: str, selected: bool) -> None:
    assert compile_glob(glob).matches(path) is selected


@pytest.mark.parametrize(
    ("glob", "message"),
    [
        ("../*", "'..' is refused"),
        ("/etc/*", "absolute"),
        ("a[bc", "unclosed"),
        ("a{b,c", "unbalanced"),
        ("a}b", "unbalanced"),
        ("{a,{b,c}}", "nested"),
        ("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}", "alternatives"),
    ],
)
def test_glob_refuses_escapes_and_malformed_globs(glob: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        compile_glob(glob)


def test_glob_matching_does_not_backtrack() -> None:
    # A regex built naively from this glob backtracks exponentially on a long near-miss.
    glob = compile_glob("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b")
    started = time.perf_counter()
    assert not glob.matches("a" * 400)
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("pattern", "rust"),
    [
        ("needle", "needle"),
        ("def add(", None),  # not a valid pattern at all
        ("a.b", "a.b"),
        ("^foo$", "^foo$"),
        (r"\Afoo\Z", "^foo$"),
        ("[a-c]+x?", "(?:[a-c])+(?:x)?"),
        ("[^]x]", "[^\\x{5D}x]"),
        ("a{2,5}?", "(?:a){2,5}"),
        ("a{3}", "(?:a){3}"),
        ("a{3,}", "(?:a){3,}"),
        ("(?:ab|cd)", "(?:ab|cd)"),
        ("(ab)+", "(?:(?:ab))+"),
        ("x\\.y", "x\\x{2E}y"),
        ("café", "caf\\x{E9}"),
        (r"\w+", None),
        (r"\d", None),
        (r"\s", None),
        (r"\bword\b", None),
        ("(?i)needle", None),
        ("(?i:n)eedle", None),
        (r"(a)\1", None),
        ("a(?=b)", None),
        ("a*+", None),
        ("(?>a)", None),
        ("a\nb", None),
    ],
)
def test_to_rust_regex_translates_only_what_both_engines_decide_alike(
    pattern: str, rust: str | None
) -> None:
    if pattern == "def add(":
        assert to_rust_regex(pattern) is None
        return
    assert to_rust_regex(pattern) == rust
