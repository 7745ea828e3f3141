"""Is a symbol defined in a file? Python by its syntax tree, other languages by a heuristic.

Python files (``.py``, ``.pyi``) are parsed with ``ast``: a name is defined when the module binds
it (``def``, ``class``, assignment, import, ``for``/``with``/``except`` targets …). A name bound
only inside a function or class body is ``nested``: defined in the file, but not a module-level
name. ``from x import *``, a module ``__getattr__``, ``globals()``, ``exec`` or ``setattr`` make a
missing name ``unknown`` rather than absent.

Other files use a line heuristic: a declaration keyword before the name (``def``, ``class``,
``fn``, ``func``, ``struct``, ``const`` …), a ``#define``, a top-level assignment or a Go method
is a certain definition; a name that never occurs is certainly absent; anything else (a C-style
signature, a mere use) is ``unknown``, which the fact-check reports as unverified.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from typing import Literal

__all__ = ["PYTHON_SUFFIXES", "Certainty", "SymbolLookup", "lookup_symbol"]

PYTHON_SUFFIXES = (".py", ".pyi")


Certainty = Literal["defined", "nested", "absent", "unknown"]
"""``nested``: bound only inside a function or class body: defined in the file, yet not a
module-level name (so it does not refute "undefined", nor verify it)."""


@dataclass(frozen=True)
class SymbolLookup:
    answer: Certainty
    detail: str


def lookup_symbol(symbol: str, path: str, text: str) -> SymbolLookup:
    """Whether ``text`` (the file at ``path``) defines ``symbol``.

    Args:
        symbol: A name, or a dotted/``::`` member (``Class.method``, ``ns::func``).
        path: The file's path (its suffix picks Python parsing or the heuristic).
        text: The file's text.

    Returns:
        ``defined``, ``nested``, ``absent`` or ``unknown``, with what was seen.
    """
    if path.endswith(PYTHON_SUFFIXES):
        return _python_lookup(symbol, text)
    return _heuristic_lookup(symbol, text)


def _python_lookup(symbol: str, text: str) -> SymbolLookup:
    try:
        with warnings.catch_warnings():
            # Invalid escapes in string literals warn at parse time; the file is data here.
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        found = _heuristic_lookup(symbol, text)
        note = "does not parse as Python; heuristic: "
        return SymbolLookup(found.answer, note + found.detail)
    bindings = _Bindings()
    bindings.visit(tree)
    owner, _, attribute = symbol.replace("::", ".").rpartition(".")
    if owner:
        return _attribute_lookup(owner, attribute, bindings)
    lines = bindings.module_level.get(symbol)
    if lines:
        return SymbolLookup("defined", f"bound at module level, line {lines[0]}")
    nested = bindings.class_level.get(symbol) or bindings.nested.get(symbol)
    if nested:
        return SymbolLookup("nested", f"bound only inside a function or class (line {nested[0]})")
    if bindings.dynamic:
        return SymbolLookup("unknown", f"not bound, but {bindings.dynamic[0]} may bind names")
    return SymbolLookup("absent", "not bound anywhere in the file")


def _attribute_lookup(owner: str, attribute: str, bindings: _Bindings) -> SymbolLookup:
    members = bindings.class_members.get(owner.rpartition(".")[2])
    if members is None:
        return SymbolLookup("unknown", f"{owner} is not a class of this file")
    line = members.get(attribute)
    if line is not None:
        return SymbolLookup("defined", f"a member of class {owner} (line {line})")
    return SymbolLookup("absent", f"class {owner} has no member {attribute}")


class _Bindings(ast.NodeVisitor):
    """Every name a Python module binds, by where: module level, class bodies, nested scopes."""

    def __init__(self) -> None:
        self.module_level: dict[str, list[int]] = {}
        self.class_level: dict[str, list[int]] = {}
        self.nested: dict[str, list[int]] = {}
        self.class_members: dict[str, dict[str, int]] = {}
        self.dynamic: list[str] = []
        self._scopes: list[str] = []
        """Kinds of the enclosing scopes: ``"class:<name>"`` or ``"function"``."""

    def _bind(self, name: str, line: int) -> None:
        if not self._scopes:
            target = self.module_level
        elif self._scopes[-1].startswith("class:"):
            target = self.class_level
            self.class_members.setdefault(self._scopes[-1][6:], {}).setdefault(name, line)
        else:
            target = self.nested
        target.setdefault(name, []).append(line)

    def _bind_target(self, node: ast.AST) -> None:
        for part in ast.walk(node):
            if not isinstance(getattr(part, "ctx", None), ast.Store):
                continue  # ``a[i] = …`` and ``obj.x = …`` use ``a`` and ``obj``, not bind them
            if isinstance(part, ast.Name):
                self._bind(part.id, part.lineno)
            elif isinstance(part, ast.Attribute) and _is_self(part.value):
                # ``self.x = …`` in a method defines a member of the enclosing class.
                enclosing = next((s for s in reversed(self._scopes) if s.startswith("class:")), "")
                if enclosing:
                    self.class_members.setdefault(enclosing[6:], {}).setdefault(
                        part.attr, part.lineno
                    )

    def _scoped(self, node: ast.AST, kind: str) -> None:
        self._scopes.append(kind)
        self.generic_visit(node)
        self._scopes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._bind(node.name, node.lineno)
        if node.name == "__getattr__" and not self._scopes:
            self.dynamic.append(f"module __getattr__ (line {node.lineno})")
        self._scopes.append("function")
        for argument in ast.walk(node.args):
            if isinstance(argument, ast.arg):
                self._bind(argument.arg, argument.lineno)
        self._scopes.pop()
        self._scoped(node, "function")

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._scoped(node, "function")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._bind(node.name, node.lineno)
        self.class_members.setdefault(node.name, {})
        self._scoped(node, f"class:{node.name}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._bind(alias.asname or alias.name.split(".")[0], node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.dynamic.append(f"`from {node.module or '.'} import *` (line {node.lineno})")
            else:
                self._bind(alias.asname or alias.name, node.lineno)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._bind_target(target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._bind_target(node.target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._bind_target(node.target)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        self._bind_target(node.target)
        self.generic_visit(node)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> None:
        self._bind_target(node.target)
        self.generic_visit(node)

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            self._bind_target(node.optional_vars)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._bind_target(node.target)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._bind(node.name, node.lineno)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._scopes.append("function")
        self._bind_target(node.target)
        self._scopes.pop()
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self._bind(node.name, node.lineno)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self._bind(node.name, node.lineno)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in ("globals", "exec", "setattr"):
            self.dynamic.append(f"{node.func.id}() (line {node.lineno})")
        self.generic_visit(node)


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


# Other languages: a declaration keyword before the name is a certain definition; a name that
# never occurs is certainly not defined; anything else (a C-style signature, a mere use) is
# unknown. Patterns run on single lines that contain the name, so their cost stays linear.
_MAX_HEURISTIC_LINE = 2000
_MODIFIERS = (
    r"(?:(?:export|default|pub(?:\([^)]*\))?|public|private|protected|internal|static|async|"
    r"abstract|final|open|override|extern|inline|unsafe)[ \t]+)*"
)
_DECLARATIONS: tuple[tuple[str, str], ...] = (
    (
        r"^[ \t]*" + _MODIFIERS + r"(?:def|class|function|func|fn|struct|enum|union|interface|"
        r"trait|type|typedef|module|namespace|object|record|protocol|let|const|var|val|macro|"
        r"mod|package)[ \t]+\*?{name}(?![\w$])",
        "declared",
    ),
    (r"^[ \t]*#[ \t]*define[ \t]+{name}(?![\w$])", "a #define"),
    (r"^{name}[ \t]*(?::[^=]*)?=(?!=)", "assigned at top level"),
    (r"^[ \t]*func[ \t]*\([^)]*\)[ \t]*{name}[ \t]*[(\[]", "a Go method"),
)
_C_SIGNATURE = (
    r"^(?![ \t]*(?:return|if|else|while|for|switch|case|throw|new|delete)\b)"
    r"[\w:<>,*& \t~]*[ \t*&:]{name}[ \t]*\([^;]*$"
)


def _heuristic_lookup(symbol: str, text: str) -> SymbolLookup:
    name = re.escape(re.split(r"\.|::", symbol)[-1])
    word = re.compile(rf"(?<![\w$]){name}(?![\w$])")
    declarations = [
        (re.compile(template.format(name=name)), label) for template, label in _DECLARATIONS
    ]
    signature = re.compile(_C_SIGNATURE.format(name=name))
    occurs = False
    signature_line: int | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        if word.search(line) is None:
            continue
        occurs = True
        if len(line) > _MAX_HEURISTIC_LINE:
            continue
        for pattern, label in declarations:
            if pattern.search(line) is not None:
                return SymbolLookup("defined", f"{label} at line {number} (keyword heuristic)")
        if signature_line is None and signature.search(line) is not None:
            signature_line = number
    if not occurs:
        return SymbolLookup("absent", "the name does not occur in the file")
    if signature_line is not None:
        detail = f"looks like a C-style definition at line {signature_line} (heuristic)"
        return SymbolLookup("unknown", detail)
    return SymbolLookup("unknown", "the name occurs, but no declaration was recognised (heuristic)")
