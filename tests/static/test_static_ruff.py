"""The ruff pass through the stage's entry point, with the real ruff binary."""

from __future__ import annotations

import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from static_helpers import MemoryRevision

from assay.model import ClaimKind, FindingSource, Severity
from assay.static import run_static_analysis
from assay.static.ruff import find_ruff
from assay.static.rules import RUFF_IGNORE, RUFF_SELECT


def test_undefined_name_on_a_changed_line_is_a_certain_p0(repo: MemoryRevision) -> None:
    repo.write(
        "app/service.py",
        """\
        def handle(x):
            return transform(x)
        """,
    )

    report = run_static_analysis([repo.changed("app/service.py", {2})], repo)

    assert report.analyzers_run == ("ruff", "imports")
    assert report.errors == ()
    [finding] = report.findings
    assert finding.rule == "F821"
    assert finding.severity is Severity.P0
    assert finding.certain_failure
    assert finding.source is FindingSource.STATIC
    assert finding.category == "correctness"
    assert (finding.path, finding.line, finding.end_line) == ("app/service.py", 2, None)
    assert finding.title == "Undefined name `transform` fails with NameError when this line runs"
    assert finding.evidence == (
        "ruff F821 (undefined-name): Undefined name `transform`\n"
        "app/service.py:2: `return transform(x)`"
    )
    assert finding.suggestion == "Define or import `transform` before this line."
    claims = {claim.kind: claim for claim in finding.claims}
    assert claims[ClaimKind.SYMBOL_UNDEFINED].needle == "transform"
    assert claims[ClaimKind.SYMBOL_UNDEFINED].path == "app/service.py"
    line_claim = claims[ClaimKind.LINE_CONTAINS]
    assert (line_claim.path, line_claim.line, line_claim.needle) == (
        "app/service.py",
        2,
        "transform",
    )


def test_undefined_names_in_annotations_and_strings_are_not_certain(
    repo: MemoryRevision,
) -> None:
    repo.write(
        "app.py",
        """\
        from __future__ import annotations

        from typing import cast


        def convert(é: int, value: Währung) -> Ledger:
            label = f"{unknown_in_f_string}"
            return cast("Forward", value)
        """,
    )

    report = run_static_analysis([repo.changed("app.py")], repo)

    by_name = {
        claim.needle: finding
        for finding in report.findings
        for claim in finding.claims
        if claim.kind is ClaimKind.SYMBOL_UNDEFINED
    }
    outcome = {name: (f.severity, f.certain_failure) for name, f in by_name.items()}
    assert outcome == {
        "Währung": (Severity.P1, False),  # an annotation after a non-ASCII parameter
        "Ledger": (Severity.P1, False),
        "unknown_in_f_string": (Severity.P0, True),  # a name inside an f-string runs
        "Forward": (Severity.P1, False),  # a string forward reference
    }
    assert by_name["Währung"].rule == "F821"
    assert by_name["Währung"].title == (
        "Undefined name `Währung` in an annotation fails wherever it is resolved"
    )


def test_undefined_names_in_stubs_are_not_certain(repo: MemoryRevision) -> None:
    repo.write("app.pyi", "def load() -> Missing: ...\n")

    [finding] = run_static_analysis([repo.changed("app.pyi")], repo).findings

    assert (finding.rule, finding.severity, finding.certain_failure) == ("F821", Severity.P1, False)


def test_diagnostics_on_unchanged_lines_are_dropped_but_counted(repo: MemoryRevision) -> None:
    repo.write(
        "app.py",
        """\
        def old():
            return missing_before_this_pr

        def new():
            return 1
        """,
    )

    report = run_static_analysis([repo.changed("app.py", {4, 5})], repo)

    assert report.findings == ()
    assert report.diagnostics_total == 1
    assert report.diagnostics_on_changed_lines == 0


def test_a_file_without_added_lines_is_not_checked(repo: MemoryRevision) -> None:
    repo.write("app.py", "print(undefined)\n")

    report = run_static_analysis([repo.changed("app.py", set())], repo)

    assert report.findings == ()
    assert report.diagnostics_total == 0


def test_syntax_error_is_a_certain_p0_even_where_the_parser_gives_up(
    repo: MemoryRevision,
) -> None:
    # The mistake (an unclosed bracket) is on line 1; the parser reports it further down.
    repo.write(
        "app.py",
        """\
        values = compute(1,
        def later():
            return 2
        """,
    )

    report = run_static_analysis([repo.changed("app.py", {1})], repo)

    syntax = [f for f in report.findings if f.rule == "invalid-syntax"]
    assert len(syntax) == 1, "only the first syntax error of a file is kept"
    assert syntax[0].severity is Severity.P0
    assert syntax[0].certain_failure
    assert syntax[0].title.startswith("Syntax error: the module cannot be imported (")
    assert syntax[0].line >= 1


def test_bare_except_and_swallowed_exception_are_p2(repo: MemoryRevision) -> None:
    repo.write(
        "app.py",
        """\
        def load(path):
            try:
                return open(path).read()
            except:
                pass
        """,
    )

    report = run_static_analysis([repo.changed("app.py")], repo)

    by_rule = {finding.rule: finding for finding in report.findings}
    assert by_rule["E722"].severity is Severity.P2
    assert by_rule["E722"].category == "error-handling"
    assert by_rule["E722"].title == "Bare `except:` also catches KeyboardInterrupt and SystemExit"
    assert by_rule["S110"].severity is Severity.P2
    assert (by_rule["S110"].line, by_rule["S110"].end_line) == (4, 5)
    assert not any(finding.certain_failure for finding in report.findings)


def test_unused_import_is_p3_with_a_fix(repo: MemoryRevision) -> None:
    repo.write("app.py", "import os\n\nVALUE = 1\n")

    report = run_static_analysis([repo.changed("app.py")], repo)

    [finding] = report.findings
    assert (finding.rule, finding.severity, finding.category) == (
        "F401",
        Severity.P3,
        "maintainability",
    )
    assert finding.title == "Unused import `os`"
    assert finding.suggestion


def test_mutable_default_and_blocking_call_in_async(repo: MemoryRevision) -> None:
    repo.write(
        "app.py",
        """\
        import time


        def collect(item, bucket=[]):
            bucket.append(item)
            return bucket


        async def poll():
            time.sleep(1)
        """,
    )

    report = run_static_analysis([repo.changed("app.py")], repo)

    by_rule = {finding.rule: finding for finding in report.findings}
    assert by_rule["B006"].severity is Severity.P2
    assert by_rule["ASYNC251"].severity is Severity.P2
    assert by_rule["ASYNC251"].category == "concurrency"


def test_await_outside_async_is_a_certain_p0(repo: MemoryRevision) -> None:
    repo.write(
        "app.py",
        """\
        import asyncio


        def run():
            await asyncio.sleep(1)
        """,
    )

    report = run_static_analysis([repo.changed("app.py")], repo)

    [finding] = report.findings
    assert finding.rule == "PLE1142"
    assert finding.certain_failure


def test_chinese_titles_and_suggestions(repo: MemoryRevision) -> None:
    repo.write("app.py", "def f():\n    return foo\n")

    report = run_static_analysis([repo.changed("app.py")], repo, lang="zh")

    [finding] = report.findings
    assert finding.title == "未定义名称 `foo`，执行到此行必然抛出 NameError"
    assert finding.suggestion == "在此行之前定义或导入 `foo`。"


def test_findings_are_sorted_by_path_line_and_rule(repo: MemoryRevision) -> None:
    repo.write("b.py", "import os\nx = y\n")
    repo.write("a.py", "print(z)\nimport sys\n")

    report = run_static_analysis([repo.changed("b.py"), repo.changed("a.py")], repo)

    assert [(f.path, f.line, f.rule) for f in report.findings] == [
        ("a.py", 1, "F821"),
        ("a.py", 2, "F401"),
        ("b.py", 1, "F401"),
        ("b.py", 2, "F821"),
    ]


def test_columns_count_characters_and_lines_break_like_python(repo: MemoryRevision) -> None:
    # A form feed is not a line break for Python or ruff, but it is for str.splitlines().
    repo.write("app.py", 'x = 1\f\ns = "é" + undefined_ü\n'.encode())

    report = run_static_analysis([repo.changed("app.py")], repo)

    [finding] = report.findings
    assert finding.line == 2
    assert finding.evidence.endswith('app.py:2: `s = "é" + undefined_ü`')
    needles = [c.needle for c in finding.claims if c.kind is ClaimKind.LINE_CONTAINS]
    assert needles == ["undefined_ü"]


def test_newer_syntax_is_accepted_by_default_and_reported_for_an_older_target(
    repo: MemoryRevision,
) -> None:
    repo.write("app.py", "type Pair = tuple[int, int]\n")

    default = run_static_analysis([repo.changed("app.py")], repo)
    py311 = run_static_analysis([repo.changed("app.py")], repo, target_version="py311")

    assert default.findings == ()
    assert [(f.rule, f.certain_failure) for f in py311.findings] == [("invalid-syntax", True)]


def test_unsafe_paths_are_reported_not_written(repo: MemoryRevision) -> None:
    repo.write("../escape.py", "print(undefined)\n")
    repo.write("-x.py", "print(also_undefined)\n")

    report = run_static_analysis([repo.changed("../escape.py"), repo.changed("-x.py")], repo)

    assert report.errors == ("ruff: ../escape.py: not a safe relative path",)
    assert [(f.path, f.rule) for f in report.findings] == [("-x.py", "F821")]


def test_missing_ruff_binary_is_an_error_not_an_exception(
    repo: MemoryRevision, tmp_path: Path
) -> None:
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/a.py", "VALUE = 1\n")
    repo.write("pkg/b.py", "from pkg.a import MISSING\n")

    report = run_static_analysis(
        [repo.changed("pkg/b.py")], repo, ruff_bin=str(tmp_path / "no-such-ruff")
    )

    assert report.analyzers_run == ("imports",)
    assert len(report.errors) == 1
    assert report.errors[0].startswith("ruff: ruff not found at ")
    assert [f.rule for f in report.findings] == ["ASSAY-I001"], "the import check still runs"


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("echo 'not json'", "ruff output is not the expected JSON"),
        ("echo 'error: boom' >&2; exit 2", "ruff exited with 2: error: boom"),
        ('echo \'[{"code": "F821"}]\'', "ruff output is not the expected JSON"),
    ],
)
def test_a_broken_ruff_is_reported(
    repo: MemoryRevision, tmp_path: Path, script: str, expected: str
) -> None:
    fake = tmp_path / "ruff"
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    repo.write("app.py", "print(x)\n")

    report = run_static_analysis([repo.changed("app.py")], repo, ruff_bin=str(fake))

    assert report.analyzers_run == ("imports",)
    assert expected in report.errors[0]
    assert report.findings == ()


def test_ruff_accepts_the_rule_selection_silently() -> None:
    # An unknown or removed selector makes ruff exit 2 (or warn): the selection must stay valid.
    binary = find_ruff()
    assert binary is not None
    completed = subprocess.run(
        [
            binary,
            "check",
            "--isolated",
            "--no-cache",
            "--select",
            ",".join(RUFF_SELECT),
            "--ignore",
            ",".join(RUFF_IGNORE),
            "--stdin-filename",
            "x.py",
            "-",
        ],
        input=b"x = 1\n",
        capture_output=True,
        check=False,
    )
    assert completed.returncode == 0
    assert completed.stderr == b""


def test_configuration_around_the_scratch_directory_is_ignored(
    repo: MemoryRevision, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without --isolated, ruff would obey a ruff.toml in any directory above the staged files.
    (tmp_path / "ruff.toml").write_text('[lint.per-file-ignores]\n"*.py" = ["F821"]\n')
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    repo.write("app.py", "print(undefined)\n")

    report = run_static_analysis([repo.changed("app.py")], repo)

    assert [(f.rule, f.line) for f in report.findings] == [("F821", 1)]
