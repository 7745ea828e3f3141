"""The sandbox's path rules, and the glob syntax the tools accept.

Paths from the model are untrusted. :func:`normalize_relative_path` accepts only paths relative
to the repository root, without ``..`` or NUL; :func:`resolve_inside` then resolves symbolic
links on disk and refuses anything that lands outside the checkout.

Globs are matched by a small automaton (no regular expression is built from them), so a hostile
glob cannot backtrack: matching is linear in the glob's length times the path's length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from assay.tools._errors import ToolError

__all__ = ["GlobPattern", "compile_glob", "normalize_relative_path", "resolve_inside"]

MAX_PATH_CHARS = 1024
MAX_GLOB_CHARS = 512
_MAX_ALTERNATIVES = 64
_WINDOWS_ABSOLUTE = re.compile(r"\A[A-Za-z]:[\\/]")


def normalize_relative_path(path: str, *, what: str = "path") -> str:
    """Return ``path`` as a clean repository-relative path, or refuse it.

    ``./`` components and repeated slashes are dropped; the repository root itself is ``""``.

    Args:
        path: A path as the model wrote it.
        what: How the message names the value (``"path"``, ``"glob"``).

    Returns:
        The ``/``-separated relative path.

    Raises:
        ToolError: The path is absolute, contains ``..`` or NUL, or is too long.
    """
    if "\0" in path:
        raise ToolError(f"the {what} contains a NUL character")
    if len(path) > MAX_PATH_CHARS:
        raise ToolError(f"the {what} is longer than {MAX_PATH_CHARS} characters")
    if path.startswith("/") or _WINDOWS_ABSOLUTE.match(path):
        raise ToolError(
            f"absolute {what}s are refused: {path!r}; give it relative to the repository root, "
            "e.g. 'src/app.py'"
        )
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ToolError(
            f"'..' is refused in a {what}: {path!r}; the tools only see the repository, "
            "give the path relative to its root"
        )
    return "/".join(parts)


def resolve_inside(root: Path, relative: str) -> Path:
    """Resolve ``root / relative`` (symbolic links included) and check it stays inside ``root``.

    Args:
        root: The checkout's directory, already resolved.
        relative: A path from :func:`normalize_relative_path`.

    Returns:
        The resolved absolute path (it may not exist).

    Raises:
        ToolError: It resolves outside the checkout, or through a symbolic-link loop.
    """
    try:
        resolved = (root / relative).resolve()
    except (OSError, RuntimeError) as error:
        # RuntimeError is what Path.resolve raises on a symbolic-link loop (Python < 3.13).
        raise ToolError(f"{relative!r} cannot be resolved (a symbolic-link loop?)") from error
    if resolved != root and not resolved.is_relative_to(root):
        raise ToolError(f"{relative!r} leads outside the checkout through a symbolic link; refused")
    return resolved


# Glob tokens: a literal character, "?" (one character but "/"), "*" (a run without "/"),
# "**" (any run), or a character class.
@dataclass(frozen=True)
class _Class:
    negated: bool
    ranges: tuple[tuple[str, str], ...]

    def contains(self, character: str) -> bool:
        inside = any(low <= character <= high for low, high in self.ranges)
        return inside != self.negated and character != "/"


_Token = str | _Class
_ANY = "\0any"
_STAR = "\0star"
_GLOBSTAR = "\0globstar"


@dataclass(frozen=True)
class GlobPattern:
    """A compiled glob; see :func:`compile_glob` for the syntax."""

    text: str
    anchored: bool
    """The glob has a ``/``: it is matched from the root; otherwise against every name."""
    alternatives: tuple[tuple[_Token, ...], ...]

    def matches(self, path: str) -> bool:
        """Whether ``path`` (a file, repository-relative) is selected by this glob.

        A file is selected when the glob matches its path or the path of a directory holding
        it (anchored globs), or the name of the file or of any directory above it (globs
        without ``/``).

        Args:
            path: A ``/``-separated repository-relative path.

        Returns:
            True when selected.
        """
        parts = path.split("/")
        if self.anchored:
            candidates = ["/".join(parts[: index + 1]) for index in range(len(parts))]
        else:
            candidates = parts
        return any(
            _tokens_match(tokens, candidate)
            for candidate in candidates
            for tokens in self.alternatives
        )


def compile_glob(glob: str) -> GlobPattern:
    """Compile a glob written by the model.

    Syntax: ``*`` matches any characters except ``/``; ``**`` any characters including ``/``
    (``a/**/b`` also matches ``a/b``); ``?`` one character except ``/``; ``[abc]``, ``[a-z]``,
    ``[!a]`` or ``[^a]`` one character of (not of) a set; ``{x,y}`` either alternative (not
    nested); ``\\`` makes the next character literal. A glob without ``/`` matches a file or
    directory name at any depth (``*.py``, ``tests``); a glob with ``/`` matches from the root
    (``src/*.py``, ``src/api``); a directory selects everything below it.

    Args:
        glob: The glob.

    Returns:
        The compiled glob.

    Raises:
        ToolError: The glob is absolute, contains ``..``, is malformed or too long.
    """
    if len(glob) > MAX_GLOB_CHARS:
        raise ToolError(f"the glob is longer than {MAX_GLOB_CHARS} characters")
    cleaned = normalize_relative_path(glob, what="glob") or "**"
    alternatives: list[tuple[_Token, ...]] = []
    for expanded in _expand_braces(cleaned):
        alternatives.extend(_expand_globstar_dirs(_tokenize(expanded, glob)))
    unique = tuple(dict.fromkeys(alternatives))
    if len(unique) > _MAX_ALTERNATIVES:
        raise ToolError(f"the glob expands to more than {_MAX_ALTERNATIVES} alternatives")
    return GlobPattern(text=glob, anchored="/" in cleaned, alternatives=unique)


def _expand_braces(glob: str) -> list[str]:
    """``a{b,c}d`` → ``abd``, ``acd`` (braces not nested; ``\\{`` is literal)."""
    results = [""]
    index = 0
    while index < len(glob):
        character = glob[index]
        if character == "\\" and index + 1 < len(glob):
            results = [result + glob[index : index + 2] for result in results]
            index += 2
            continue
        if character == "}":
            raise ToolError(
                f"unbalanced '}}' in the glob {glob!r} (write '\\}}' for the character)"
            )
        if character != "{":
            results = [result + character for result in results]
            index += 1
            continue
        end = _closing_brace(glob, index)
        options = _split_options(glob[index + 1 : end])
        results = [result + option for result in results for option in options]
        if len(results) > _MAX_ALTERNATIVES:
            raise ToolError(f"the glob expands to more than {_MAX_ALTERNATIVES} alternatives")
        index = end + 1
    return results


def _closing_brace(glob: str, start: int) -> int:
    index = start + 1
    while index < len(glob):
        if glob[index] == "\\":
            index += 2
            continue
        if glob[index] == "{":
            raise ToolError(f"nested braces are not supported in the glob {glob!r}")
        if glob[index] == "}":
            return index
        index += 1
    raise ToolError(f"unbalanced '{{' in the glob {glob!r} (write '\\{{' for the character)")


def _split_options(inner: str) -> list[str]:
    options = [""]
    index = 0
    while index < len(inner):
        if inner[index] == "\\" and index + 1 < len(inner):
            options[-1] += inner[index : index + 2]
            index += 2
        elif inner[index] == ",":
            options.append("")
            index += 1
        else:
            options[-1] += inner[index]
            index += 1
    return options


def _tokenize(glob: str, original: str) -> list[_Token]:
    tokens: list[_Token] = []
    index = 0
    while index < len(glob):
        character = glob[index]
        if character == "\\" and index + 1 < len(glob):
            tokens.append(glob[index + 1])
            index += 2
        elif character == "*":
            if glob.startswith("**", index):
                tokens.append(_GLOBSTAR)
                while index < len(glob) and glob[index] == "*":
                    index += 1
            else:
                tokens.append(_STAR)
                index += 1
        elif character == "?":
            tokens.append(_ANY)
            index += 1
        elif character == "[":
            token, index = _character_class(glob, index, original)
            tokens.append(token)
        else:
            tokens.append(character)
            index += 1
    return tokens


def _character_class(glob: str, start: int, original: str) -> tuple[_Class, int]:
    index = start + 1
    negated = index < len(glob) and glob[index] in "!^"
    if negated:
        index += 1
    members: list[str] = []
    first = True
    while index < len(glob) and (glob[index] != "]" or first):
        if glob[index] == "\\" and index + 1 < len(glob):
            index += 1
        members.append(glob[index])
        index += 1
        first = False
    if index >= len(glob):
        raise ToolError(f"unclosed '[' in the glob {original!r}")
    ranges: list[tuple[str, str]] = []
    position = 0
    while position < len(members):
        if position + 2 < len(members) and members[position + 1] == "-":
            low, high = members[position], members[position + 2]
            if high < low:
                raise ToolError(f"bad range {low}-{high} in the glob {original!r}")
            ranges.append((low, high))
            position += 3
        else:
            ranges.append((members[position], members[position]))
            position += 1
    return _Class(negated=negated, ranges=tuple(ranges)), index + 1


def _expand_globstar_dirs(tokens: list[_Token]) -> list[tuple[_Token, ...]]:
    """``**/`` also matches no directory at all: ``a/**/b`` is ``a/b`` or ``a/<any>/b``."""
    variants: list[list[_Token]] = [[]]
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token == _GLOBSTAR and index + 1 < len(tokens) and tokens[index + 1] == "/":
            variants = [*variants, *[[*variant, _GLOBSTAR, "/"] for variant in variants]]
            if len(variants) > _MAX_ALTERNATIVES:
                raise ToolError(f"the glob expands to more than {_MAX_ALTERNATIVES} alternatives")
            index += 2
            continue
        for variant in variants:
            variant.append(token)
        index += 1
    return [tuple(variant) for variant in variants]


def _tokens_match(tokens: tuple[_Token, ...], text: str) -> bool:
    """Run the glob as a set-of-positions automaton: O(len(tokens) × len(text))."""
    positions = {0}
    for token in tokens:
        if not positions:
            return False
        following: set[int] = set()
        if token == _GLOBSTAR:
            following = set(range(min(positions), len(text) + 1))
        elif token == _STAR:
            for position in sorted(positions):
                following.add(position)
                while position < len(text) and text[position] != "/":
                    position += 1
                    if position in following:
                        break
                    following.add(position)
        else:
            for position in positions:
                if position < len(text) and _token_accepts(token, text[position]):
                    following.add(position + 1)
        positions = following
    return len(text) in positions


def _token_accepts(token: _Token, character: str) -> bool:
    if isinstance(token, _Class):
        return token.contains(character)
    if token == _ANY:
        return character != "/"
    return token == character
