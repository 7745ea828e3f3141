"""The import check: names and modules missing from in-repo modules, and when it stays silent."""

from __future__ import annotations

import pytest
from static_helpers import MemoryRevision

from assay.model import ClaimKind, Finding, Severity
from assay.static.imports import check_imports


def _check(repo: MemoryRevision, path: str, lines: set[int] | None = None) -> list[Finding]:
    return check_imports([repo.changed(path, lines)], repo, lang="en")


@pytest.fixture
def package(repo: MemoryRevision) -> MemoryRevision:
    """``pkg`` with a module ``pkg.models`` that defines ``User`` and a subpackage ``pkg.sub``."""
    repo.write("pkg/__init__.py", "from pkg.models import User\n")
    repo.write(
        "pkg/models.py",
        """\
        import dataclasses


        @dataclasses.dataclass
        class User:
            name: str
        """,
    )
    repo.write("pkg/sub/__init__.py", "")
    repo.write("pkg/sub/tools.py", "def helper():\n    return 1\n")
    return repo


def test_import_of_a_missing_name_is_a_certain_p0(package: MemoryRevision) -> None:
    package.write("pkg/views.py", "from pkg.models import User, Account\n")

    [finding] = _check(package, "pkg/views.py")

    assert finding.rule == "ASSAY-I001"
    assert finding.severity is Severity.P0
    assert finding.certain_failure
    assert (finding.path, finding.line) == ("pkg/views.py", 1)
    assert finding.title == "`pkg.models` has no `Account`: this import raises ImportError"
    assert finding.evidence == (
        "assay ASSAY-I001 (import-of-missing-name): "
        "`pkg/models.py` is a module that binds no `Account` at module level\n"
        "pkg/views.py:1: `from pkg.models import User, Account`"
    )
    assert finding.suggestion == (
        "Define `Account` in `pkg/models.py`, or import it from where it is."
    )
    claims = {claim.kind: claim for claim in finding.claims}
    assert (claims[ClaimKind.SYMBOL_UNDEFINED].path, claims[ClaimKind.SYMBOL_UNDEFINED].needle) == (
        "pkg/models.py",
        "Account",
    )
    assert claims[ClaimKind.LINE_CONTAINS].needle == "Account"


def test_chinese_wording(package: MemoryRevision) -> None:
    package.write("pkg/views.py", "from pkg.models import Account\n")

    [finding] = check_imports([package.changed("pkg/views.py")], package, lang="zh")

    assert finding.title == "`pkg.models` 中没有 `Account`，此导入必然抛出 ImportError"
    assert "模块 `pkg/models.py` 的顶层没有绑定 `Account`" in finding.evidence


def test_existing_names_and_submodules_are_fine(package: MemoryRevision) -> None:
    package.write(
        "pkg/views.py",
        """\
        from pkg import User, models, sub
        from pkg.models import User as Person, dataclasses
        from pkg.sub import tools
        from pkg.sub.tools import helper
        import pkg.sub.tools
        """,
    )

    assert _check(package, "pkg/views.py") == []


@pytest.mark.parametrize(
    "definition",
    [
        "if FLAG:\n    NAME = 1\nelse:\n    pass\n",
        "try:\n    from fast import NAME\nexcept ImportError:\n    NAME = None\n",
        "for NAME in range(3):\n    pass\n",
        "with open(__file__) as NAME:\n    pass\n",
        "def setup():\n    global NAME\n    NAME = 1\n",
        "if (NAME := 3) > 2:\n    pass\n",
        "NAME: int\n",
        "FIRST, *NAME = [1, 2]\n",
        "import os.path as NAME\n",
        "match 1:\n    case NAME:\n        pass\n",
    ],
)
def test_names_bound_anywhere_at_module_level_count_as_defined(
    repo: MemoryRevision, definition: str
) -> None:
    repo.write("lib.py", definition)
    repo.write("app.py", "from lib import NAME\n")

    assert _check(repo, "app.py") == []


@pytest.mark.parametrize(
    "target",
    [
        "def __getattr__(name):\n    return name\n",
        "from other import *\n",
        "globals()['NAME'] = 1\n",
        "import sys\nsetattr(sys.modules[__name__], 'NAME', 1)\n",
        "exec('NAME = 1')\n",
        "def broken(:\n",
    ],
    ids=["module-getattr", "star-import", "globals", "sys-modules", "exec", "syntax-error"],
)
def test_modules_that_may_bind_names_dynamically_are_skipped(
    repo: MemoryRevision, target: str
) -> None:
    repo.write("lib.py", target)
    repo.write("app.py", "from lib import NAME\n")

    assert _check(repo, "app.py") == []


def test_third_party_and_standard_library_modules_are_not_checked(repo: MemoryRevision) -> None:
    repo.write("app.py", "from requests import NoSuchThing\nfrom os import no_such_function\n")

    assert _check(repo, "app.py") == []


def test_a_local_module_named_like_the_standard_library_is_not_checked(
    repo: MemoryRevision,
) -> None:
    repo.write("json.py", "VALUE = 1\n")
    repo.write("app.py", "from json import dumps\n")

    assert _check(repo, "app.py") == []


def test_relative_imports(package: MemoryRevision) -> None:
    package.write(
        "pkg/sub/api.py",
        """\
        from .tools import helper
        from .tools import missing_helper
        from ..models import User
        from .. import models
        from . import tools
        """,
    )

    [finding] = _check(package, "pkg/sub/api.py")

    assert (finding.rule, finding.line) == ("ASSAY-I001", 2)
    assert "`.tools` has no `missing_helper`" in finding.title
    assert "`pkg/sub/tools.py`" in finding.evidence


def test_missing_submodule_is_p1_because_builds_generate_modules(
    package: MemoryRevision,
) -> None:
    package.write(
        "pkg/app.py",
        """\
        import pkg.gone
        from pkg.sub.absent import thing
        from . import service_pb2
        """,
    )

    findings = _check(package, "pkg/app.py")

    assert [(f.rule, f.line, f.severity, f.certain_failure) for f in findings] == [
        ("ASSAY-I002", 1, Severity.P1, False),
        ("ASSAY-I002", 2, Severity.P1, False),
        ("ASSAY-I002", 3, Severity.P1, False),
    ]
    assert findings[0].title == "Module `pkg.gone` is not in the repository (nor built?)"
    absent = [c.path for c in findings[0].claims if c.kind is ClaimKind.FILE_ABSENT]
    assert absent == ["pkg/gone.py", "pkg/gone/__init__.py"]
    assert "`pkg/__init__.py` binds no `service_pb2` either" in findings[2].evidence


def test_src_layout(repo: MemoryRevision) -> None:
    repo.write("src/shop/__init__.py", "")
    repo.write("src/shop/cart.py", "def total(items):\n    return sum(items)\n")
    repo.write("src/shop/checkout.py", "from shop.cart import total, tax\n")
    repo.write("tests/test_cart.py", "from shop.cart import subtotal\n")

    findings = check_imports(
        [repo.changed("src/shop/checkout.py"), repo.changed("tests/test_cart.py")], repo, lang="en"
    )

    assert [(f.path, f.rule, f.title) for f in findings] == [
        (
            "src/shop/checkout.py",
            "ASSAY-I001",
            "`shop.cart` has no `tax`: this import raises ImportError",
        ),
        (
            "tests/test_cart.py",
            "ASSAY-I001",
            "`shop.cart` has no `subtotal`: this import raises ImportError",
        ),
    ]


def test_roots_that_disagree_leave_room_for_the_name(repo: MemoryRevision) -> None:
    # scripts/run.py imports its neighbour scripts/helpers.py, not the root helpers.py.
    repo.write("helpers.py", "OTHER = 1\n")
    repo.write("scripts/helpers.py", "def prepare():\n    return 1\n")
    repo.write("scripts/run.py", "from helpers import prepare\n")

    assert _check(repo, "scripts/run.py") == []


def test_guarded_imports_are_skipped(package: MemoryRevision) -> None:
    package.write(
        "pkg/compat.py",
        """\
        import contextlib
        from typing import TYPE_CHECKING

        try:
            from pkg.models import FastUser
        except ImportError:
            FastUser = None

        if TYPE_CHECKING:
            from pkg.models import TypedUser

        with contextlib.suppress(ImportError):
            from pkg.models import OptionalUser
        """,
    )

    assert _check(package, "pkg/compat.py") == []


def test_imports_inside_functions_are_checked(package: MemoryRevision) -> None:
    package.write(
        "pkg/lazy.py",
        """\
        def load():
            from pkg.models import LazyUser
            return LazyUser
        """,
    )

    assert [(f.rule, f.line) for f in _check(package, "pkg/lazy.py")] == [("ASSAY-I001", 2)]


def test_only_changed_lines_are_checked(package: MemoryRevision) -> None:
    package.write(
        "pkg/views.py",
        """\
        from pkg.models import OldMissing
        from pkg.models import (
            User,
            NewMissing,
        )
        """,
    )

    findings = _check(package, "pkg/views.py", {4})

    assert [(f.line, f.title) for f in findings] == [
        (4, "`pkg.models` has no `NewMissing`: this import raises ImportError")
    ]


def test_namespace_packages_and_extensions_are_not_judged(repo: MemoryRevision) -> None:
    repo.write("ns/plugin.py", "VALUE = 1\n")  # ns/ has no __init__.py: a namespace package
    repo.write("fastpkg/__init__.py", "")
    repo.write("fastpkg/core.pyx", "def run():\n    pass\n")
    repo.write("app.py", "from ns import other\nfrom fastpkg.core import run\nimport ns.missing\n")

    assert _check(repo, "app.py") == []


def test_stub_files_are_not_checked(package: MemoryRevision) -> None:
    package.write("pkg/views.pyi", "from pkg.models import Account\n")

    assert _check(package, "pkg/views.pyi") == []


def test_a_file_that_does_not_parse_is_left_to_ruff(package: MemoryRevision) -> None:
    package.write("pkg/views.py", "from pkg.models import Account\ndef (:\n")

    assert _check(package, "pkg/views.py") == []
