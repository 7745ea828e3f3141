"""``assay.diff`` depends on nothing of Assay's but ``assay.errors`` (reviewdog's ``diff/``)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import assay.diff

PACKAGE = Path(assay.diff.__file__).parent
ALLOWED_THIRD_PARTY = {"pydantic", "unidiff"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_diff_package_imports_only_stdlib_pydantic_unidiff_and_errors() -> None:
    sources = sorted(PACKAGE.glob("*.py"))
    assert len(sources) >= 4
    for source in sources:
        for module in imported_modules(source):
            top = module.split(".")[0]
            allowed = (
                module == "__future__"
                or top in sys.stdlib_module_names
                or top in ALLOWED_THIRD_PARTY
                or module == "assay.errors"
                or module == "assay.diff"
                or module.startswith("assay.diff.")
            )
            assert allowed, f"{source.name} imports {module}"


def test_public_names_are_exported_sorted() -> None:
    assert assay.diff.__all__ == sorted(assay.diff.__all__)
    assert all(hasattr(assay.diff, name) for name in assay.diff.__all__)
