"""Deterministic checklist decisions, made before any model is asked.

Two kinds of check exist (an item's ``static`` table names one):

- analyzer rules: when the round's static findings include a rule the item lists (``E722`` for
  "no bare or silent except"), the item fails and that finding represents it. A ``complete``
  check also passes the item when the analyzer ran and reported nothing.
- built-in checks on the diff and the PR (``tests_changed``, ``deleted_tests``,
  ``pr_description``): a failure fails the item; the finding that shows it is chosen by the model
  among the round's findings when possible, else created from the check's own wording.

A check that cannot decide returns ``None``: the model judges the item (or, without a model, it
is reported as not evaluated).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from assay.checklists.applicability import ApplicableItem
from assay.checklists.catalog import Lang
from assay.checklists.languages import SOURCE_LANGUAGES, detect_language, is_test_path
from assay.diff.types import FileDiff, FileStatus, LineKind, Side
from assay.model import FindingSource, PullRequestMeta, ReportedFinding

if TYPE_CHECKING:
    from assay.forge.base import RevisionReader

__all__ = [
    "CheckContext",
    "Decision",
    "Passed",
    "RuleFailed",
    "StaticFailed",
    "decide",
    "first_changed_location",
    "rule_matches",
]

_RUST_TEST_MARKER = "#[cfg(test)]"
_LISTED_PATHS = 5


@dataclass(frozen=True)
class CheckContext:
    """What the deterministic checks may look at."""

    files: Sequence[FileDiff]
    findings: Sequence[ReportedFinding]
    analyzers_run: Collection[str]
    pr: PullRequestMeta
    head: RevisionReader
    lang: Lang


@dataclass(frozen=True)
class StaticFailed:
    """An analyzer finding of the round shows the failure; it is the representative."""

    finding_id: str
    rule: str


@dataclass(frozen=True)
class RuleFailed:
    """A built-in check failed; this is the finding to create if none of the round's fits."""

    check: str
    title: str
    evidence: str
    suggestion: str
    path: str
    line: int
    side: Side = Side.RIGHT


@dataclass(frozen=True)
class Passed:
    method: Literal["static", "rule"]


Decision = StaticFailed | RuleFailed | Passed


def decide(item: ApplicableItem, context: CheckContext) -> Decision | None:
    """Decide an item deterministically, or return ``None`` when only a model can judge it."""
    check = item.item.static
    if check is None or not context.files:
        return None
    if check.builtin is not None:
        return _BUILTINS[check.builtin](item, context)
    for reported in context.findings:
        rule = reported.finding.rule
        if reported.finding.source is FindingSource.STATIC and rule is not None:
            if any(rule_matches(code, rule) for code in check.ruff):
                return StaticFailed(finding_id=reported.id, rule=rule)
    if check.complete and "ruff" in context.analyzers_run:
        return Passed("static")
    return None


def rule_matches(code: str, rule: str) -> bool:
    """``code`` names ``rule`` exactly or is a prefix of it (``ASYNC`` matches ``ASYNC230``).

    Analyzer-specific suffixes after ``:`` (``F821:annotation``) are ignored.
    """
    return rule.split(":", 1)[0].startswith(code)


# --- built-in checks ---------------------------------------------------------------------------


def _tests_changed(item: ApplicableItem, context: CheckContext) -> Decision | None:
    scope = _scope(item)
    sources = [file for file in context.files if _changes_source(file, scope, context.head)]
    if not sources:
        return Passed("rule")
    if any(_changes_tests(file, scope, context.head) for file in context.files):
        return None
    first = sources[0]
    listed = _listing([file.path for file in sources], context.lang)
    count = len(sources)
    if context.lang == "zh":
        title = f"{count} 个变更的源文件没有任何测试改动"
        evidence = (
            f"本次改动修改了 {count} 个源文件（{listed}），但 diff 中没有任何测试文件的新增或修改"
            "（按各语言的测试路径约定识别：test_*.py、*_test.go、*.test.ts、*Test.java、"
            "tests/ 目录等）。"
        )
        suggestion = "为新增或修改的逻辑补充聚焦的单元测试，覆盖正常路径与关键的失败/边界路径。"
    else:
        title = f"{count} changed source file{'s' if count != 1 else ''} without any test change"
        evidence = (
            f"The change modifies {count} source file{'s' if count != 1 else ''} ({listed}) but "
            "adds or modifies no test file (recognised by each language's test path conventions: "
            "test_*.py, *_test.go, *.test.ts, *Test.java, tests/ directories, …)."
        )
        suggestion = (
            "Add focused unit tests for the new or changed logic, covering the normal path and "
            "the important failure and edge cases."
        )
    return RuleFailed(
        check="tests_changed",
        title=title,
        evidence=evidence,
        suggestion=suggestion,
        path=first.path,
        line=_first_added_line(first),
    )


def _deleted_tests(item: ApplicableItem, context: CheckContext) -> Decision | None:
    scope = _scope(item)
    tests = [
        file
        for file in context.files
        if detect_language(file.path) in scope and is_test_path(file.path)
    ]
    lost = [file for file in tests if file.status is FileStatus.DELETED or file.removed_lines]
    if not lost:
        return Passed("rule")
    deleted = [file for file in tests if file.status is FileStatus.DELETED]
    grown = [file for file in tests if file.status is not FileStatus.DELETED and file.added_lines]
    if not deleted or grown:
        return None
    listed = _listing([file.path for file in deleted], context.lang)
    count = len(deleted)
    if context.lang == "zh":
        title = f"删除了 {count} 个测试文件，且没有新增或修改任何测试"
        evidence = (
            f"本次改动删除了测试文件 {listed}，diff 中没有任何测试文件的新增或修改来替代其覆盖。"
        )
        suggestion = "说明被删除测试的覆盖由哪些测试承接；若没有，请补充等价的测试。"
    else:
        title = f"{count} test file{'s' if count != 1 else ''} deleted and no test added or changed"
        evidence = (
            f"The change deletes {listed} and adds or modifies no test file that could take over "
            "its coverage."
        )
        suggestion = (
            "Say which tests now cover what the deleted tests covered, or add equivalent tests."
        )
    return RuleFailed(
        check="deleted_tests",
        title=title,
        evidence=evidence,
        suggestion=suggestion,
        path=deleted[0].path,
        line=1,
        side=Side.LEFT,
    )


def _pr_description(item: ApplicableItem, context: CheckContext) -> Decision | None:
    del item
    if context.pr.description.strip():
        return None
    path, line = first_changed_location(context.files)
    if context.lang == "zh":
        title = "PR description 为空，未说明改动的动机与设计"
        evidence = (
            "该 PR 没有任何描述：评审者与后续维护者无法从中得知改动的动机、设计取舍与影响范围。"
        )
        suggestion = "在 PR description 中说明动机、设计要点、对外行为变化与回滚方式。"
    else:
        title = "The PR description is empty: motivation and design are not explained"
        evidence = (
            "The pull request has no description, so reviewers and later maintainers cannot learn "
            "why the change is made, which design it follows or what it affects."
        )
        suggestion = (
            "Describe the motivation, the design, any externally visible change and how to roll "
            "it back."
        )
    return RuleFailed(
        check="pr_description",
        title=title,
        evidence=evidence,
        suggestion=suggestion,
        path=path,
        line=line,
    )


_BUILTINS = {
    "tests_changed": _tests_changed,
    "deleted_tests": _deleted_tests,
    "pr_description": _pr_description,
}


def _scope(item: ApplicableItem) -> frozenset[str]:
    restricted = frozenset(item.languages()) & SOURCE_LANGUAGES
    return restricted or SOURCE_LANGUAGES


def _changes_source(file: FileDiff, scope: frozenset[str], head: RevisionReader) -> bool:
    if file.status is FileStatus.DELETED or file.is_binary:
        return False
    if detect_language(file.path) not in scope or is_test_path(file.path):
        return False
    added = file.changed_lines()
    if not added:
        return False
    test_start = _rust_test_module_start(file, head)
    return test_start is None or any(line < test_start for line in added)


def _changes_tests(file: FileDiff, scope: frozenset[str], head: RevisionReader) -> bool:
    if file.status is FileStatus.DELETED or detect_language(file.path) not in scope:
        return False
    added = file.changed_lines()
    if is_test_path(file.path):
        return bool(added) or file.status is FileStatus.ADDED
    test_start = _rust_test_module_start(file, head)
    return test_start is not None and any(line >= test_start for line in added)


def _rust_test_module_start(file: FileDiff, head: RevisionReader) -> int | None:
    """The head line of a Rust file's ``#[cfg(test)]`` (inline unit tests live below it)."""
    if detect_language(file.path) != "rust":
        return None
    content = head.read(file.path)
    if content is None:
        return None
    for number, line in enumerate(content.decode("utf-8", errors="replace").splitlines(), 1):
        if line.strip() == _RUST_TEST_MARKER:
            return number
    return None


def _first_added_line(file: FileDiff) -> int:
    added = file.changed_lines()
    return min(added) if added else 1


def first_changed_location(files: Sequence[FileDiff]) -> tuple[str, int]:
    """Where a finding about the change as a whole goes: the first added line of the diff
    (else the first head line shown, else line 1 of the first file)."""
    for file in files:
        added = file.changed_lines()
        if added:
            return file.path, min(added)
    for file in files:
        for hunk in file.hunks:
            for line in hunk.lines:
                if line.kind is not LineKind.REMOVED and line.new_line is not None:
                    return file.path, line.new_line
    return files[0].path, 1


def _listing(paths: Sequence[str], lang: Lang) -> str:
    shown = list(paths[:_LISTED_PATHS])
    rest = len(paths) - len(shown)
    joined = "、".join(shown) if lang == "zh" else ", ".join(shown)
    if rest <= 0:
        return joined
    return f"{joined} 等 {len(paths)} 个" if lang == "zh" else f"{joined} and {rest} more"
