"""Which Python patterns ripgrep can run with the same result, written in ripgrep's syntax.

Python's ``re`` defines what ``grep`` matches. ripgrep (Rust's ``regex``) decides the same lines
for the *regular* part of the syntax, because whether a line contains a match of a regular
language does not depend on the engine: literals, ``.``, sets of literals and ranges, ``^``,
``$``, ``\\A``, ``\\Z``, groups, alternation and repetition (greedy or lazy). Everything else can
differ and is left to Python: ``\\w``, ``\\d``, ``\\s``, ``\\b`` (Unicode tables and definitions
differ), case-insensitive matching (case folding differs), backreferences, lookaround,
possessive and atomic forms, conditionals, and a literal newline.

The translation works on the tree Python's own parser builds (``re._parser``), so there is no
second reading of the syntax to get wrong; anything unknown is left to Python.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

__all__ = ["to_rust_regex"]

# Private, but it is the parser `re.compile` itself uses; an API change only makes more
# patterns "not portable" (the Python engine then runs), never a wrong answer.
_PARSER: Any = importlib.import_module("re._parser")
_MAXREPEAT: Any = _PARSER.MAXREPEAT
_SAFE_LITERAL = re.compile(r"[A-Za-z0-9]")
_ANCHORS = {
    "AT_BEGINNING": "^",
    "AT_BEGINNING_STRING": "^",
    "AT_END": "$",
    "AT_END_STRING": "$",
}


class _NotPortable(Exception):
    pass


def to_rust_regex(pattern: str) -> str | None:
    """Return a ripgrep pattern that matches exactly the lines ``pattern`` matches, if any.

    Lines are searched one at a time (no ``\\n`` inside), so ``^``/``\\A`` and ``$``/``\\Z``
    both anchor to the line.

    Args:
        pattern: A pattern that ``re.compile`` accepts.

    Returns:
        The equivalent pattern for ripgrep, or ``None`` when only Python can run it.
    """
    try:
        tree = _PARSER.parse(pattern)
    except (re.error, Warning, RecursionError):
        return None
    if tree.state.flags & re.IGNORECASE:
        return None
    try:
        return _sequence(tree.data)
    except (_NotPortable, RecursionError):
        return None


def _sequence(items: Any) -> str:
    return "".join(_item(str(opcode), argument) for opcode, argument in items)


def _item(opcode: str, argument: Any) -> str:
    if opcode == "LITERAL":
        return _literal(argument)
    if opcode == "NOT_LITERAL":
        return f"[^{_literal(argument)}]"
    if opcode == "ANY":
        return "."
    if opcode == "IN":
        return _set(argument)
    if opcode in ("MAX_REPEAT", "MIN_REPEAT"):
        # Lazy and greedy repetition accept the same lines; only the match span differs.
        low, high, body = argument
        return f"(?:{_sequence(body)}){_quantifier(low, high)}"
    if opcode == "SUBPATTERN":
        _group, add_flags, _remove_flags, body = argument
        if add_flags & re.IGNORECASE:
            raise _NotPortable
        return f"(?:{_sequence(body)})"
    if opcode == "BRANCH":
        _unused, alternatives = argument
        return "(?:" + "|".join(_sequence(alternative) for alternative in alternatives) + ")"
    if opcode == "AT" and str(argument) in _ANCHORS:
        return _ANCHORS[str(argument)]
    raise _NotPortable


def _set(items: Any) -> str:
    negated = False
    members: list[str] = []
    for opcode, argument in items:
        name = str(opcode)
        if name == "NEGATE":
            negated = True
        elif name == "LITERAL":
            members.append(_literal(argument))
        elif name == "RANGE":
            low, high = argument
            members.append(f"{_literal(low)}-{_literal(high)}")
        else:
            raise _NotPortable  # a category (\w, \d, \s) or something newer
    if not members:
        raise _NotPortable
    return "[" + ("^" if negated else "") + "".join(members) + "]"


def _literal(code: int) -> str:
    if code == 0x0A:
        raise _NotPortable  # no line contains "\n"; ripgrep refuses it outright
    character = chr(code)
    if _SAFE_LITERAL.fullmatch(character):
        return character
    return f"\\x{{{code:X}}}"


def _quantifier(low: int, high: Any) -> str:
    if high is _MAXREPEAT or high == _MAXREPEAT:
        return {0: "*", 1: "+"}.get(low, f"{{{low},}}")
    if (low, high) == (0, 1):
        return "?"
    if low == high:
        return f"{{{low}}}"
    return f"{{{low},{high}}}"
