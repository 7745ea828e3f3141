"""Imports, on changed lines, of names or modules that do not exist in the repository at head.

ruff checks one file at a time; this check reads the imported module at head:

- ``ASSAY-I001`` (P0, certain): ``from pkg.mod import name`` where ``pkg/mod.py`` is a plain
  module of the repository that binds no ``name`` at module level. The import raises ImportError
  whenever it runs: no other file can supply the name.
- ``ASSAY-I002`` (P1, not certain): a submodule of an in-repo package that has no file:
  ``import pkg.nope``, ``from pkg.nope import x``, or ``from pkg import nope`` when
  ``pkg/__init__.py`` does not bind ``nope`` either. Build steps generate modules
  (``_version.py``, ``*_pb2.py``, Bazel rules), so this cannot block on its own.

Because I001 blocks on its own, the check stays silent unless it is sure:

- the module is not in the repository (third-party, standard library), or the search roots it
  could come from (repository root, ``src/``, the script's directory) disagree;
- the import is guarded: inside ``try``, ``if TYPE_CHECKING:`` or ``contextlib.suppress``;
- the imported module can gain names at run time: ``from x import *``, a module ``__getattr__``,
  ``globals()``/``vars()``/``locals()``/``exec``, ``sys.modules``, ``__path__``;
- a namespace package, a compiled extension or a stub-only module is involved, or the imported
  module does not parse.
"""

from __future__ import annotations

import ast
import posixpath
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from assay.model import Claim, ClaimKind, Finding
from assay.static.rules import (
    IMPORT_OF_MISSING_MODULE,
    IMPORT_OF_MISSING_NAME,
    Language,
    RuleHit,
    build_finding,
    code_span,
    line_contains_claim,
    line_text,
    source_lines,
)

if TYPE_CHECKING:
    from assay.static import ChangedPythonFile, RevisionReader

__all__ = ["check_imports"]

_EXTENSION_SUFFIXES = (".so", ".pyd", ".pyx")
_IMPLICIT_MODULE_NAMES = frozenset(
    {
        "__annotations__",
        "__builtins__",
        "__cached__",
        "__dict__",
        "__doc__",
        "__file__",
        "__loader__",
        "__name__",
        "__package__",
        "__path__",
        "__spec__",
    }
)
_DYNAMIC_NAMES = frozenset({"globals", "vars", "locals", "exec", "__path__"})
"""Through these a module can bind names (or find submodules) that no statement shows."""
_MISSING_NAME_MESSAGE = {
    "en": "{target} is a module that binds no {name} at module level",
    "zh": "模块 {target} 的顶层没有绑定 {name}",
}
_MISSING_MODULE_MESSAGE = {
    "en": "package {package} has no module {module}: neither {candidates} exists",
    "zh": "包 {package} 中没有模块 {module}：{candidates} 均不存在",
}
_NOT_IN_INIT_MESSAGE = {
    "en": "; {init} binds no {name} either",
    "zh": "；{init} 中也没有绑定 {name}",
}


def check_imports(
    files: Sequence[ChangedPythonFile], reader: RevisionReader, *, lang: Language
) -> list[Finding]:
    """Find imports on changed lines of names or submodules missing from in-repo modules.

    Args:
        files: Changed Python files at head with their added lines (``.pyi`` stubs are skipped:
            they never run).
        reader: The repository at head, to resolve and read imported modules.
        lang: Language of titles, suggestions and evidence.

    Returns:
        Findings in file order (the caller sorts).
    """
    checker = _ImportChecker(_RepoTree.from_paths(reader.list_files()), reader, lang)
    findings: list[Finding] = []
    for file in files:
        if file.changed_lines and file.path.endswith(".py"):
            findings.extend(checker.check_file(file))
    return findings


@dataclass(frozen=True)
class _RepoTree:
    """The file names of the head revision, with the lookups module resolution needs."""

    files: frozenset[str]
    directories: frozenset[str]
    extension_stems: frozenset[str]
    """``dir/stem`` of compiled or Cython modules (``pkg/fast.cpython-311.so`` → ``pkg/fast``)."""

    @classmethod
    def from_paths(cls, paths: Sequence[str]) -> _RepoTree:
        directories: set[str] = set()
        for path in paths:
            directory = posixpath.dirname(path)
            while directory and directory not in directories:
                directories.add(directory)
                directory = posixpath.dirname(directory)
        stems = frozenset(
            posixpath.join(posixpath.dirname(path), posixpath.basename(path).split(".")[0])
            for path in paths
            if path.endswith(_EXTENSION_SUFFIXES)
        )
        return cls(
            files=frozenset(paths), directories=frozenset(directories), extension_stems=stems
        )

    def is_file(self, path: str) -> bool:
        return path in self.files

    def is_directory(self, path: str) -> bool:
        return path in self.directories

    def has_submodule(self, package_directory: str, name: str) -> bool:
        """Any file or directory in the package that Python could import as ``name``."""
        submodule = posixpath.join(package_directory, name)
        return (
            self.is_file(submodule + ".py")
            or self.is_file(submodule + ".pyi")
            or self.is_directory(submodule)
            or submodule in self.extension_stems
        )


@dataclass(frozen=True)
class _Module:
    """An importable module found in the repository."""

    file: str
    """``pkg/__init__.py`` for a package, ``pkg/mod.py`` for a module."""
    package_directory: str | None = None


@dataclass(frozen=True)
class _MissingModule:
    """A submodule of a regular in-repo package that has no file."""

    package_init: str
    dotted: str
    """As the code names it, up to the missing part (``pkg.nope``, ``.nope``)."""
    candidates: tuple[str, str]
    """The files that would define it (``pkg/nope.py``, ``pkg/nope/__init__.py``)."""
    not_bound_in_init: str | None = None
    """For ``from pkg import nope``: the name ``pkg/__init__.py`` does not bind either."""


_Unknown = Literal["unknown"]
_UNKNOWN: _Unknown = "unknown"


@dataclass
class _ImportChecker:
    tree: _RepoTree
    reader: RevisionReader
    lang: Language
    _symbols: dict[str, frozenset[str] | None] = field(default_factory=dict)

    def check_file(self, file: ChangedPythonFile) -> list[Finding]:
        module = _parse(file.content)
        if module is None:
            return []  # ruff reports the syntax error
        lines = source_lines(file.content)
        findings: list[Finding] = []
        for node in _unguarded_imports(module):
            statement_changed = node.lineno in file.changed_lines
            aliases = [
                alias
                for alias in node.names
                if statement_changed or alias.lineno in file.changed_lines
            ]
            if isinstance(node, ast.Import):
                for alias in aliases:
                    located = self._locate(file.path, 0, alias.name.split("."))
                    if isinstance(located, _MissingModule):
                        findings.append(
                            self._missing_module(file.path, alias.lineno, lines, located)
                        )
            elif aliases:
                findings.extend(self._check_from_import(file.path, node, aliases, lines))
        return findings

    def _check_from_import(
        self, path: str, node: ast.ImportFrom, aliases: Sequence[ast.alias], lines: Sequence[str]
    ) -> list[Finding]:
        written = "." * node.level + (node.module or "")
        located = self._locate(path, node.level, node.module.split(".") if node.module else [])
        if isinstance(located, _MissingModule):
            return [self._missing_module(path, node.lineno, lines, located)]
        if located == _UNKNOWN:
            return []
        findings: list[Finding] = []
        for alias in aliases:
            if alias.name == "*":
                continue
            dotted = written + alias.name if written.endswith(".") else f"{written}.{alias.name}"
            outcomes = [self._lookup(module, alias.name, dotted) for module in located]
            missing = [outcome for outcome in outcomes if isinstance(outcome, _MissingModule)]
            if all(outcome == "missing" for outcome in outcomes):
                findings.append(
                    self._missing_name(path, alias.lineno, lines, written, alias.name, located[0])
                )
            elif len(missing) == len(outcomes):
                findings.append(self._missing_module(path, alias.lineno, lines, missing[0]))
        return findings

    def _locate(
        self, path: str, level: int, parts: Sequence[str]
    ) -> tuple[_Module, ...] | _MissingModule | _Unknown:
        """The in-repo module(s) an import names, the missing submodule, or ``unknown``.

        An absolute import is resolved from every plausible search root; roots where its top
        package does not exist are ignored. The others must all find a module (a name is then
        missing only if every one of them lacks it) or all find the same submodule missing.
        """
        if level > 0:
            resolved = self._resolve_relative(path, level, parts)
            return (resolved,) if isinstance(resolved, _Module) else resolved
        if not parts or parts[0] in sys.stdlib_module_names or parts[0] == "__future__":
            return _UNKNOWN
        roots = self._search_roots(path)
        found = [
            r for root in roots if (r := self._resolve(root, parts, in_package=False)) is not None
        ]
        modules = [resolved for resolved in found if isinstance(resolved, _Module)]
        missing = [resolved for resolved in found if isinstance(resolved, _MissingModule)]
        if found and len(modules) == len(found):
            return tuple(dict.fromkeys(modules))
        if found and len(missing) == len(found):
            return missing[0]
        return _UNKNOWN

    def _resolve_relative(
        self, path: str, level: int, parts: Sequence[str]
    ) -> _Module | _MissingModule | _Unknown:
        package = posixpath.dirname(path)
        for _ in range(level - 1):
            if not package:
                return _UNKNOWN  # beyond the top: Python's error, not one to word here
            package = posixpath.dirname(package)
        package_init = posixpath.join(package, "__init__.py")
        if not self.tree.is_file(package_init):
            return _UNKNOWN  # a namespace package or a script: cannot be certain
        if not parts:
            return _Module(file=package_init, package_directory=package)
        resolved = self._resolve(package, parts, in_package=True, prefix="." * level)
        return _UNKNOWN if resolved is None else resolved

    def _search_roots(self, path: str) -> list[str]:
        """Directories an absolute import may be found under.

        The repository root (tests and scripts run from it) unless the file is under ``src/``, then
        ``src/``, then the nearest directory holding the file that is not a regular package (the
        script's own directory; pytest's ``sys.path`` insertion without ``__init__.py``).
        """
        roots = ["src"] if path.startswith("src/") else ["", "src"]
        directory = posixpath.dirname(path)
        while directory and self.tree.is_file(posixpath.join(directory, "__init__.py")):
            directory = posixpath.dirname(directory)
        roots.append(directory)
        return [root for root in dict.fromkeys(roots) if not root or self.tree.is_directory(root)]

    def _resolve(
        self, base: str, parts: Sequence[str], *, in_package: bool, prefix: str = ""
    ) -> _Module | _MissingModule | _Unknown | None:
        """Follow ``parts`` from ``base`` as Python's path finder would, for one search root.

        Returns ``None`` when the top-level name is not under ``base`` at all.
        """
        current = base
        for index, part in enumerate(parts):
            if not part.isidentifier():
                return _UNKNOWN
            candidate = posixpath.join(current, part)
            is_last = index == len(parts) - 1
            package_init = posixpath.join(candidate, "__init__.py")
            if self.tree.is_file(package_init):  # a regular package wins over everything else
                if is_last:
                    return _Module(file=package_init, package_directory=candidate)
                current = candidate
                continue
            if (
                candidate in self.tree.extension_stems
                or self.tree.is_directory(candidate)
                or self.tree.is_file(candidate + ".pyi")
            ):
                return _UNKNOWN  # compiled, namespace package or stub-only: cannot see inside
            if self.tree.is_file(candidate + ".py"):
                return _Module(file=candidate + ".py") if is_last else _UNKNOWN
            if index == 0 and not in_package:
                return None
            parent_init = posixpath.join(current, "__init__.py")
            if self._module_symbols(parent_init) is None:
                return _UNKNOWN  # the package may extend __path__ or fake submodules
            dotted = prefix + ".".join(parts[: index + 1])
            return _MissingModule(parent_init, dotted, (candidate + ".py", package_init))
        return _UNKNOWN

    def _lookup(
        self, module: _Module, name: str, dotted: str
    ) -> Literal["bound", "missing"] | _MissingModule:
        """What ``from module import name`` finds.

        Returns ``bound`` when it succeeds or may succeed, ``missing`` when the plain module
        certainly lacks ``name``, and the missing submodule when ``module`` is a package lacking it.
        """
        symbols = self._module_symbols(module.file)
        if symbols is None or name in symbols or name in _IMPLICIT_MODULE_NAMES:
            return "bound"
        if module.package_directory is None:
            return "missing"
        if self.tree.has_submodule(module.package_directory, name):
            return "bound"
        submodule = posixpath.join(module.package_directory, name)
        candidates = (submodule + ".py", posixpath.join(submodule, "__init__.py"))
        return _MissingModule(module.file, dotted, candidates, not_bound_in_init=name)

    def _module_symbols(self, path: str) -> frozenset[str] | None:
        if path not in self._symbols:
            content = self.reader.read(path)
            module = _parse(content) if content is not None else None
            self._symbols[path] = _module_level_names(module) if module is not None else None
        return self._symbols[path]

    def _missing_name(
        self,
        path: str,
        line: int,
        lines: Sequence[str],
        written: str,
        name: str,
        module: _Module,
    ) -> Finding:
        message = _MISSING_NAME_MESSAGE[self.lang].format(
            target=code_span(module.file), name=code_span(name)
        )
        claims = (
            Claim(
                kind=ClaimKind.SYMBOL_UNDEFINED,
                text=f"{code_span(name)} is not bound at module level in {module.file}",
                path=module.file,
                needle=name,
            ),
            line_contains_claim(path, line, name),
        )
        hit = RuleHit(
            analyzer="assay",
            code=IMPORT_OF_MISSING_NAME,
            rule_name="import-of-missing-name",
            message=message,
            path=path,
            line=line,
            end_line=None,
            source_line=line_text(lines, line),
            fields={"name": name, "module": written, "target": module.file},
            claims=claims,
        )
        return build_finding(hit, self.lang)

    def _missing_module(
        self, path: str, line: int, lines: Sequence[str], missing: _MissingModule
    ) -> Finding:
        message = _MISSING_MODULE_MESSAGE[self.lang].format(
            package=code_span(posixpath.dirname(missing.package_init)),
            module=code_span(missing.dotted),
            candidates=", ".join(code_span(candidate) for candidate in missing.candidates),
        )
        claims = [
            Claim(kind=ClaimKind.FILE_ABSENT, text=f"{candidate} does not exist", path=candidate)
            for candidate in missing.candidates
        ]
        claims.append(
            Claim(
                kind=ClaimKind.FILE_EXISTS,
                text=f"{missing.package_init} exists",
                path=missing.package_init,
            )
        )
        if missing.not_bound_in_init is not None:
            name = missing.not_bound_in_init
            message += _NOT_IN_INIT_MESSAGE[self.lang].format(
                init=code_span(missing.package_init), name=code_span(name)
            )
            claims.append(
                Claim(
                    kind=ClaimKind.SYMBOL_UNDEFINED,
                    text=f"{code_span(name)} is not bound in {missing.package_init}",
                    path=missing.package_init,
                    needle=name,
                )
            )
        claims.append(line_contains_claim(path, line, missing.dotted.rsplit(".", 1)[-1]))
        hit = RuleHit(
            analyzer="assay",
            code=IMPORT_OF_MISSING_MODULE,
            rule_name="import-of-missing-module",
            message=message,
            path=path,
            line=line,
            end_line=None,
            source_line=line_text(lines, line),
            fields={"module": missing.dotted, "target": missing.candidates[0]},
            claims=claims,
        )
        return build_finding(hit, self.lang)


def _parse(content: bytes) -> ast.Module | None:
    try:
        return ast.parse(content)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # Untrusted input: invalid syntax, NUL bytes, or nesting deep enough to exhaust the parser.
        return None


def _unguarded_imports(module: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements, in source order, whose failure is neither caught nor skipped."""
    stack: list[tuple[ast.AST, bool]] = [(statement, False) for statement in reversed(module.body)]
    while stack:
        node, guarded = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            if not guarded:
                yield node
            continue
        children: list[tuple[ast.AST, bool]]
        if isinstance(node, ast.If) and _mentions(node.test, "TYPE_CHECKING"):
            children = [(child, True) for child in node.body]
            children += [(child, guarded) for child in node.orelse]
        else:
            guards = isinstance(node, ast.Try | ast.TryStar) or (
                isinstance(node, ast.With | ast.AsyncWith)
                and any(_mentions(item.context_expr, "suppress") for item in node.items)
            )
            children = [
                (child, guarded or guards)
                for child in ast.iter_child_nodes(node)
                if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case)
            ]
        stack.extend(reversed(children))


def _mentions(expression: ast.AST, identifier: str) -> bool:
    return any(
        (isinstance(node, ast.Name) and node.id == identifier)
        or (isinstance(node, ast.Attribute) and node.attr == identifier)
        for node in ast.walk(expression)
    )


def _module_level_names(module: ast.Module) -> frozenset[str] | None:
    """Every name the module may bind at module level; ``None`` when it may bind any name.

    Over-approximates on purpose (a name bound in any branch, deleted later, annotated only, or
    declared ``global`` in a function counts as bound): a name must be certainly missing before
    anything is reported.
    """
    names: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Global):
            names.update(node.names)
        elif (
            (isinstance(node, ast.Name) and node.id in _DYNAMIC_NAMES)
            or (
                isinstance(node, ast.Attribute)
                and node.attr == "modules"
                and isinstance(node.value, ast.Name)
                and node.value.id in ("sys", "_sys")
            )
            or (
                isinstance(node, ast.ImportFrom)
                and any(
                    alias.name == "*" or (node.module == "sys" and alias.name == "modules")
                    for alias in node.names
                )
            )
        ):
            return None
    stack: list[ast.AST] = list(module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)  # the body is another scope
        elif isinstance(node, ast.Import):
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
        elif not isinstance(node, ast.Lambda):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                names.add(node.id)
            elif isinstance(node, ast.MatchAs | ast.MatchStar | ast.ExceptHandler) and node.name:
                names.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                names.add(node.rest)
            stack.extend(ast.iter_child_nodes(node))
    return None if "__getattr__" in names else frozenset(names)
