"""Static-first evaluation without a model: analyzer rules and built-in checks decide items."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from assay.checklists import (
    ChecklistOutcome,
    load_builtin_catalogs,
    parse_catalog,
    remap_finding_ids,
)
from assay.diff import anchor_to_diff
from assay.diff.types import FileDiff, FileStatus, Side
from assay.forge.base import RevisionReader
from assay.model import ChecklistStatus, FindingSource, PullRequestMeta, ReportedFinding, Severity
from assay.pipeline.checklists import evaluate_checklists
from assay.static import ChangedPythonFile, run_static_analysis

from ._helpers import DictReader, changed_file, make_pr_repo, pr_meta, reported, snapshot_of

_CATALOGS = load_builtin_catalogs()


def _evaluate(
    files: Sequence[FileDiff],
    findings: Sequence[ReportedFinding] = (),
    *,
    head: RevisionReader | None = None,
    pr: PullRequestMeta | None = None,
    analyzers_run: Sequence[str] = ("ruff", "imports"),
    lang: str = "en",
) -> ChecklistOutcome:
    return asyncio.run(
        evaluate_checklists(
            _CATALOGS,
            files=files,
            findings=findings,
            client=None,
            lang="zh" if lang == "zh" else "en",
            head=head or DictReader(),
            pr=pr or pr_meta(),
            analyzers_run=analyzers_run,
        )
    )


def _status(outcome: ChecklistOutcome) -> dict[str, tuple[ChecklistStatus, str | None, str]]:
    return {i.item_id: (i.status, i.finding_id, i.method) for i in outcome.report.items}


_BUGGY = """\
import asyncio
import time


def handle(config, items=[]):
    try:
        value = getattr(config, "timeout")
    except:
        value = None
    items.append(value)
    return items


async def poll():
    time.sleep(1)
"""


def _static_round(
    tmp_path: Path,
) -> tuple[list[FileDiff], list[ReportedFinding], list[str], RevisionReader]:
    repo = make_pr_repo(
        tmp_path,
        {"app/__init__.py": "", "app/handler.py": "def handle(config):\n    return config\n"},
        {"app/handler.py": _BUGGY},
    )
    with snapshot_of(repo) as snapshot:
        changed = [
            ChangedPythonFile(
                path=f.path,
                content=snapshot.head.read(f.path) or b"",
                changed_lines=f.changed_lines(),
            )
            for f in snapshot.files
            if f.path.endswith(".py")
        ]
        report = run_static_analysis(changed, snapshot.head, lang="en")
        findings = [
            ReportedFinding(
                id=finding.fingerprint(),
                finding=finding,
                severity=finding.severity,
                anchor=anchor_to_diff(finding.path, finding.line, finding.side, snapshot.files),
            )
            for finding in report.findings
        ]
        return list(snapshot.files), findings, list(report.analyzers_run), snapshot.head


def test_real_ruff_findings_fail_the_items_they_map_to(tmp_path: Path) -> None:
    files, findings, analyzers, head = _static_round(tmp_path)
    rules = {f.finding.rule: f.id for f in findings}
    assert {"B009", "E722", "B006", "ASYNC251"} <= set(rules), rules

    outcome = _evaluate(files, findings, head=head, analyzers_run=analyzers)
    status = _status(outcome)

    assert status["P.A.2"] == (ChecklistStatus.FAIL, rules["B009"], "static")
    assert status["P.B.1"][0:2] == (ChecklistStatus.FAIL, rules["E722"])
    assert status["P.F.2"] == (ChecklistStatus.FAIL, rules["B006"], "static")
    assert status["P.C.1"] == (ChecklistStatus.FAIL, rules["ASYNC251"], "static")
    # Complete checks with no hit pass; the static finding ids are linked, nothing is created.
    assert status["P.E.2"] == (ChecklistStatus.PASS, None, "static")
    assert status["P.F.3"] == (ChecklistStatus.PASS, None, "static")
    assert outcome.links[rules["B009"]] == ("P.A.2",)
    # No test changed next to app/handler.py: both test items fail with ONE created finding.
    (created,) = outcome.new_findings
    assert created.source is FindingSource.STATIC and created.rule == "checklist:tests_changed"
    assert (created.path, created.line) == ("app/handler.py", 1)
    assert created.title == "1 changed source file without any test change"
    assert outcome.links[created.fingerprint()] == ("G.6.1.15", "P.G.1")
    assert status["G.6.1.15"] == (ChecklistStatus.FAIL, created.fingerprint(), "rule")


def test_without_a_model_only_deterministic_items_count_and_the_rest_are_named(
    tmp_path: Path,
) -> None:
    files, findings, analyzers, head = _static_round(tmp_path)

    outcome = _evaluate(files, findings, head=head, analyzers_run=analyzers)

    evaluated = {item.item_id for item in outcome.report.items}
    assert outcome.applicable == 25 + 37
    assert outcome.report.total + len(outcome.not_evaluated) == outcome.applicable
    assert evaluated.isdisjoint(outcome.not_evaluated)
    assert "P.A.3" in outcome.not_evaluated  # hasattr: only a model can judge it
    assert "G.6.1.21" in outcome.not_evaluated  # the description exists; its quality needs a model
    assert outcome.calls == () and not outcome.failed
    note = outcome.not_evaluated_note("en")
    assert note is not None and f"of {outcome.applicable} applicable items" in note
    # Deterministic: the same inputs give the same N/M.
    again = _evaluate(files, findings, head=head, analyzers_run=analyzers)
    assert (again.report.total, len(again.report.failed)) == (
        outcome.report.total,
        len(outcome.report.failed),
    )


def test_a_complete_check_does_not_pass_when_its_analyzer_did_not_run() -> None:
    files = [changed_file("app/a.py")]

    ran = _status(_evaluate(files, analyzers_run=("ruff",)))
    not_ran = _evaluate(files, analyzers_run=())

    assert ran["P.F.2"] == (ChecklistStatus.PASS, None, "static")
    assert "P.F.2" in not_ran.not_evaluated


def test_rule_prefixes_match_longer_codes() -> None:
    finding = reported("s1", "Blocking call in async function", "app/a.py", 11, rule="ASYNC230")

    status = _status(_evaluate([changed_file("app/a.py")], [finding]))

    assert status["P.C.1"] == (ChecklistStatus.FAIL, "s1", "static")


def test_model_findings_with_a_rule_like_title_are_not_static_evidence() -> None:
    llm = reported("m1", "E722 bare except", "app/a.py", 11)

    outcome = _evaluate([changed_file("app/a.py")], [llm])

    assert "P.B.1" in outcome.not_evaluated


def test_tests_changed_passes_when_no_source_changed_and_is_undecided_with_tests() -> None:
    docs_only = _status(_evaluate([changed_file("README.md")]))
    with_tests = _evaluate([changed_file("app/a.py"), changed_file("tests/test_a.py")])

    assert docs_only["G.6.1.15"] == (ChecklistStatus.PASS, None, "rule")
    assert "G.6.1.15" in with_tests.not_evaluated  # tests exist; whether they suffice is judgement
    assert "P.G.1" in with_tests.not_evaluated


def test_tests_changed_is_scoped_to_the_item_language() -> None:
    # A Python test does not cover a Go change: the Go item fails, the Python item is undecided.
    outcome = _evaluate(
        [changed_file("cmd/main.go"), changed_file("app/a.py"), changed_file("tests/test_a.py")]
    )
    status = _status(outcome)

    assert status["GO.D.1"][0] is ChecklistStatus.FAIL
    assert "P.G.1" in outcome.not_evaluated
    assert (
        "G.6.1.15" in outcome.not_evaluated
    )  # some test changed: the general item needs judgement
    (created,) = outcome.new_findings
    assert created.path == "cmd/main.go"


def test_rust_inline_test_modules_count_as_test_changes() -> None:
    source = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n"
    source += "    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 2), 3);\n    }\n}\n"
    head = DictReader({"src/lib.rs": source})
    only_tests = changed_file("src/lib.rs", added=3, start=7)
    only_code = changed_file("src/lib.rs", added=1, start=2)
    code_and_tests = changed_file("src/lib.rs", added=8, start=2)

    assert _status(_evaluate([only_tests], head=head))["RS.D.3"][0] is ChecklistStatus.PASS
    assert _status(_evaluate([only_code], head=head))["RS.D.3"][0] is ChecklistStatus.FAIL
    assert "RS.D.3" in _evaluate([code_and_tests], head=head).not_evaluated


def test_deleted_tests_without_replacement_fail_on_the_deleted_file() -> None:
    deleted = changed_file("tests/test_legacy.py", status=FileStatus.DELETED, removed=4)

    outcome = _evaluate([deleted, changed_file("app/a.py")], lang="zh")
    status = _status(outcome)

    assert status["G.6.1.17"][0] is ChecklistStatus.FAIL
    created = next(f for f in outcome.new_findings if f.rule == "checklist:deleted_tests")
    assert (created.path, created.line, created.side) == ("tests/test_legacy.py", 1, Side.LEFT)
    assert created.title == "删除了 1 个测试文件，且没有新增或修改任何测试"
    assert created.severity is Severity.P2
    kept = _status(_evaluate([changed_file("app/a.py"), changed_file("tests/test_a.py")]))
    assert kept["G.6.1.17"] == (ChecklistStatus.PASS, None, "rule")


def test_an_empty_description_fails_the_pr_description_item() -> None:
    outcome = _evaluate([changed_file("app/a.py", start=5)], pr=pr_meta(description="  "))

    status = _status(outcome)
    created = next(f for f in outcome.new_findings if f.rule == "checklist:pr_description")
    assert status["G.6.1.21"] == (ChecklistStatus.FAIL, created.fingerprint(), "rule")
    assert (created.path, created.line) == ("app/a.py", 5)
    assert created.severity is Severity.P3


def test_items_and_titles_are_in_the_review_language() -> None:
    outcome = _evaluate([changed_file("app/a.py")], lang="zh")

    assert outcome.report.checklists == ("general", "python")
    assert outcome.report.checklist_titles == (
        "General Principles Checklist",
        "Python Static-First Checklist",
    )
    item = next(i for i in outcome.report.items if i.item_id == "G.6.1.15")
    assert (item.label, item.section, item.text) == (
        "6.1",
        "Tests",
        "新逻辑有聚焦单测 + 相关集成/smoke 测试",
    )


def test_an_empty_diff_has_no_checklist() -> None:
    outcome = _evaluate([])

    assert outcome.report.total == 0 and outcome.applicable == 0


def test_an_item_narrowed_by_path_globs() -> None:
    text = """
[catalog]
name = "migrations"
title = { en = "Migrations", zh = "迁移" }
label = "M"

[[sections]]
key = "db"
title = { en = "Database", zh = "数据库" }

[[sections.items]]
id = "M.1"
text = { en = "Migrations are reversible", zh = "迁移可回滚" }
applies = { paths = ["**/migrations/**"] }

[[sections.items]]
id = "M.2"
text = { en = "A description exists", zh = "有描述" }
static = { builtin = "pr_description" }
"""
    catalog = parse_catalog(text, source="m.toml")

    outcome = asyncio.run(
        evaluate_checklists(
            [catalog],
            files=[changed_file("app/a.py")],
            findings=[],
            client=None,
            lang="en",
            head=DictReader(),
            pr=pr_meta(description=""),
        )
    )

    assert outcome.applicable == 1
    assert [item.item_id for item in outcome.report.failed] == ["M.2"]


def test_created_finding_ids_can_be_remapped_to_the_round_s_ids() -> None:
    outcome = _evaluate([changed_file("app/a.py")], pr=pr_meta(description=""))
    ids = {finding.fingerprint(): f"stable-{n}" for n, finding in enumerate(outcome.new_findings)}

    remapped = remap_finding_ids(outcome, ids)

    assert set(remapped.links) == set(ids.values())
    failed_ids = {item.finding_id for item in remapped.report.failed}
    assert failed_ids == set(ids.values())
    assert sum(len(v) for v in remapped.links.values()) == len(remapped.report.failed)
    zh = outcome.not_evaluated_note("zh")
    assert zh is not None and zh.startswith("Checklist：") and "未评估" in zh
