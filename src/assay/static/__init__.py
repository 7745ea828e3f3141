"""Stage 2, static: deterministic findings from analyzers on the changed Python files.

Runs ruff (the binary of Assay's own environment, with Assay's rule set) and the in-repo import
check on the changed files at head, keeps what they report on added lines, and words it as
``Finding(source=STATIC)``. Findings whose rule fails on execution carry ``certain_failure`` and
need no votes. Nothing in the pull request is executed, and a broken or missing analyzer is
reported in ``StaticReport.errors``, never raised: the rest of the round goes on without it.

Example::

    report = run_static_analysis(
        [ChangedPythonFile(path="app/db.py", content=head_bytes, changed_lines=frozenset({12}))],
        reader,
        lang="en",
    )
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from assay.errors import AssayError
from assay.model import Finding
from assay.static.imports import check_imports
from assay.static.ruff import DEFAULT_TARGET_VERSION, RuffFailed, find_ruff, ruff_findings
from assay.static.rules import Language

__all__ = [
    "ChangedPythonFile",
    "RevisionReader",
    "StaticReport",
    "run_static_analysis",
]


class RevisionReader(Protocol):
    """Read-only access to one revision (the head) of the repository under review."""

    def read(self, path: str) -> bytes | None:
        """The file's content, or ``None`` when there is no such file."""
        ...

    def exists(self, path: str) -> bool:
        """Whether ``path`` is a file in the revision."""
        ...

    def list_files(self) -> Sequence[str]:
        """Every file path of the revision, relative to the root, ``/``-separated."""
        ...


class ChangedPythonFile(BaseModel):
    """A Python file the pull request adds or modifies, as it is at head."""

    model_config = ConfigDict(frozen=True)

    path: str
    """Relative to the repository root, ``/``-separated."""
    content: bytes
    changed_lines: frozenset[int]
    """Head line numbers of added lines (``FileDiff.changed_lines()``)."""


class StaticReport(BaseModel):
    """What the static stage found and how it went."""

    model_config = ConfigDict(frozen=True)

    findings: tuple[Finding, ...] = ()
    """Sorted by path, line, rule."""
    analyzers_run: tuple[str, ...] = ()
    """Analyzers that completed: ``ruff``, ``imports``."""
    errors: tuple[str, ...] = ()
    """Why an analyzer did not run or a file was not checked."""
    diagnostics_total: int = 0
    """Everything the analyzers reported, on changed lines or not."""
    diagnostics_on_changed_lines: int = 0
    """What was kept: ``len(findings)``."""


def run_static_analysis(
    files: Sequence[ChangedPythonFile],
    reader: RevisionReader,
    *,
    lang: Language = "en",
    ruff_bin: str | None = None,
    target_version: str = DEFAULT_TARGET_VERSION,
    timeout_seconds: float = 60.0,
) -> StaticReport:
    """Run the static analyzers on the changed Python files and keep findings on added lines.

    Args:
        files: Changed Python files at head (``.py`` and ``.pyi``) with their added lines.
        reader: The head revision, for the import check.
        lang: ``en`` or ``zh``: the language of titles, suggestions and Assay's own messages.
        ruff_bin: The ruff executable; by default the one of Assay's environment, else ``PATH``'s.
        target_version: ruff's ``--target-version``: pass the repository's oldest supported
            Python (``py311``) to report syntax it does not have; the default accepts all syntax.
        timeout_seconds: Per ruff invocation.

    Returns:
        The findings, sorted by path, line and rule, with the analyzers that ran and any errors.
    """
    findings: list[Finding] = []
    analyzers: list[str] = []
    errors: list[str] = []
    total = 0
    binary = ruff_bin or find_ruff()
    if binary is None:
        errors.append("ruff: executable not found (install the `ruff` package)")
    else:
        try:
            outcome = ruff_findings(
                files,
                lang=lang,
                ruff_bin=binary,
                target_version=target_version,
                timeout_seconds=timeout_seconds,
            )
        except RuffFailed as error:
            errors.append(f"ruff: {error}")
        else:
            analyzers.append("ruff")
            findings.extend(outcome.findings)
            total += outcome.diagnostics_total
            errors.extend(f"ruff: {reason}" for reason in outcome.skipped)
    try:
        import_findings = check_imports(files, reader, lang=lang)
    except AssayError as error:  # the reader failed (a git error): report it, keep ruff's findings
        errors.append(f"imports: {error}")
    else:
        analyzers.append("imports")
        findings.extend(import_findings)
        total += len(import_findings)
    findings.sort(
        key=lambda finding: (finding.path, finding.line, finding.rule or "", finding.title)
    )
    return StaticReport(
        findings=tuple(findings),
        analyzers_run=tuple(analyzers),
        errors=tuple(errors),
        diagnostics_total=total,
        diagnostics_on_changed_lines=len(findings),
    )
