"""Which language a changed file is written in, whether it is a test, and path globs.

Everything here is decided from the path alone (extension, file name, directory names), so a
checklist's applicability and its test-presence checks are a pure function of the diff: the same
files always give the same answer.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import PurePosixPath

__all__ = [
    "KNOWN_LANGUAGES",
    "SOURCE_LANGUAGES",
    "detect_language",
    "glob_matches",
    "is_test_path",
    "languages_in",
]

_BY_EXTENSION: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyx": "python",
    ".c": "cpp",
    ".h": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".inl": "cpp",
    ".cu": "cpp",
    ".cuh": "cpp",
    ".go": "go",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".rs": "rust",
    ".bzl": "starlark",
    ".star": "starlark",
    ".proto": "proto",
    ".sh": "shell",
    ".bash": "shell",
}
_BY_FILE_NAME: dict[str, str] = {
    "BUILD": "starlark",
    "BUILD.bazel": "starlark",
    "WORKSPACE": "starlark",
    "WORKSPACE.bazel": "starlark",
    "MODULE.bazel": "starlark",
}

KNOWN_LANGUAGES: frozenset[str] = frozenset(_BY_EXTENSION.values()) | frozenset(
    _BY_FILE_NAME.values()
)
"""Every language name ``detect_language`` can return (and catalogs may name)."""

SOURCE_LANGUAGES: frozenset[str] = frozenset(
    {"python", "cpp", "go", "typescript", "javascript", "java", "kotlin", "rust"}
)
"""Languages whose files are program source (build files, schemas and scripts are not)."""

_TEST_DIRECTORIES = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs"})
# File-name conventions per language. Case matters where the convention is CamelCase
# (``FooTest.java``): a lower-cased match would call ``Split.java`` or ``latest.cc`` a test.
_TEST_NAMES: dict[str, re.Pattern[str]] = {
    "python": re.compile(r"^(test_.*|.*_test|conftest)\.pyi?$"),
    "go": re.compile(r"^.*_test\.go$"),
    "cpp": re.compile(r"^.*(_test|_unittest|Test|Tests)\.(c|cc|cpp|cxx|cu)$"),
    "typescript": re.compile(r"^.*\.(test|spec)\.(ts|tsx|mts|cts)$"),
    "javascript": re.compile(r"^.*\.(test|spec)\.(js|jsx|mjs|cjs)$"),
    "java": re.compile(r"^.*(Test|Tests|IT|TestCase)\.java$"),
    "kotlin": re.compile(r"^.*(Test|Tests)\.kts?$"),
    "rust": re.compile(r"^.*_test\.rs$"),
}


def detect_language(path: str) -> str | None:
    """Return the language of ``path`` from its file name or extension, or ``None``.

    Example:
        ``detect_language("rtp_llm/cpp/DecodeRpcServer.cc")`` is ``"cpp"``;
        ``detect_language("bazel/BUILD")`` is ``"starlark"``; ``README.md`` is ``None``.
    """
    name = PurePosixPath(path).name
    if name in _BY_FILE_NAME:
        return _BY_FILE_NAME[name]
    suffix = PurePosixPath(name).suffix.lower()
    return _BY_EXTENSION.get(suffix)


def languages_in(paths: Iterable[str]) -> frozenset[str]:
    """Return the languages of the given paths (files of no known language add nothing)."""
    return frozenset(language for language in (detect_language(path) for path in paths) if language)


def is_test_path(path: str) -> bool:
    """Whether ``path`` is a test file by its language's conventions.

    A source file counts as a test when it sits under a ``test``/``tests``/``__tests__``/``spec``
    directory (Java's and Maven's ``src/test/`` included) or when its name follows the language's
    test naming (``test_*.py``, ``*_test.go``, ``*.spec.ts``, ``FooTest.java``, ``*_test.cc`` …).
    Files of no source language are never tests.
    """
    language = detect_language(path)
    if language not in SOURCE_LANGUAGES:
        return False
    parts = PurePosixPath(path).parts
    if any(part.lower() in _TEST_DIRECTORIES for part in parts[:-1]):
        return True
    pattern = _TEST_NAMES.get(language or "")
    return pattern is not None and pattern.match(parts[-1]) is not None


def glob_matches(pattern: str, path: str) -> bool:
    """Match a repository path against a glob, gitignore style.

    ``*`` and ``?`` stay within one path segment, ``**`` spans any number of segments, and a
    pattern without ``/`` matches the file name in any directory (``*.bzl``, ``BUILD``).

    Example:
        ``glob_matches("src/**/*.py", "src/a/b.py")`` and ``glob_matches("*.bzl", "x/y.bzl")``
        are true; ``glob_matches("src/*.py", "src/a/b.py")`` is false.
    """
    return _glob_regex(pattern).match(path) is not None


@functools.cache
def _glob_regex(pattern: str) -> re.Pattern[str]:
    anchored = "/" in pattern.strip("/")
    body = pattern.strip("/")
    out: list[str] = []
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(body[i]))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"^{prefix}{''.join(out)}$")
