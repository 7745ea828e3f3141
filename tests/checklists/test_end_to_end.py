"""A checklist round over a real git repository and the scripted model, rendered as a review.

The round is put together here the way the orchestrator does it (static → findings → checklist
stage → created findings reported and anchored → links → render), so a checklist failure that no
finding shows produces a finding of its own, listed in the body and commented inline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from assay.checklists import ChecklistOutcome, link_findings, resolve_catalogs
from assay.config import parse_repo_config
from assay.diff import anchor_to_diff
from assay.forge.base import PullRequestSnapshot
from assay.llm import LLMClient, MemoryReplayCache
from assay.model import Finding, Kpi, ReportedFinding, RoundResult
from assay.pipeline.checklists import evaluate_checklists
from assay.render import inline_comments, render_review
from assay.static import ChangedPythonFile, run_static_analysis
from assay.testing import ChatRequest, ReplyValue, ScriptedLLMServer, json_reply
from tests.render._visible import visible_text

from ._helpers import RTP_EXAMPLE, asked_ids, make_pr_repo, settings_for, snapshot_of


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as running:
        yield running
        assert not running.errors, running.errors


def _model(request: ChatRequest) -> ReplyValue:
    results: list[dict[str, Any]] = []
    for item_id in asked_ids(request):
        status = "fail" if item_id == "G.6.1.20" else "pass"
        reason = "本 PR 同时修改了缓存与日志两个互不相关的模块。" if status == "fail" else ""
        results.append(
            {
                "item_id": item_id,
                "status": status,
                "finding_id": None,
                "new_finding": None,
                "reason": reason,
            }
        )
    return json_reply({"results": results})


def _report(finding: Finding, snapshot: PullRequestSnapshot) -> ReportedFinding:
    return ReportedFinding(
        id=finding.fingerprint(),
        finding=finding,
        severity=finding.severity,
        anchor=anchor_to_diff(finding.path, finding.line, finding.side, snapshot.files),
    )


async def _round(snapshot: PullRequestSnapshot, server: ScriptedLLMServer) -> RoundResult:
    config = parse_repo_config(snapshot.repo_config_text)
    catalogs = resolve_catalogs(config.checklists, snapshot.base)
    changed = [
        ChangedPythonFile(
            path=f.path, content=snapshot.head.read(f.path) or b"", changed_lines=f.changed_lines()
        )
        for f in snapshot.files
        if f.path.endswith(".py")
    ]
    static = run_static_analysis(changed, snapshot.head, lang="zh")
    findings = [_report(finding, snapshot) for finding in static.findings]
    async with LLMClient(settings_for(server), MemoryReplayCache()) as client:
        outcome: ChecklistOutcome = await evaluate_checklists(
            catalogs,
            files=snapshot.files,
            findings=findings,
            client=client,
            lang="zh",
            head=snapshot.head,
            pr=snapshot.meta,
            analyzers_run=static.analyzers_run,
        )
    findings += [_report(finding, snapshot) for finding in outcome.new_findings]
    return RoundResult(
        pr=snapshot.meta,
        reviewed_at=datetime(2026, 9, 1, tzinfo=UTC),
        findings=link_findings(findings, outcome.links),
        kpi=Kpi(),
        checklist=outcome.report,
    )


def test_a_checklist_fail_without_a_finding_produces_one_in_body_and_inline(
    tmp_path: Path, server: ScriptedLLMServer
) -> None:
    repo = make_pr_repo(
        tmp_path,
        {
            ".assay.toml": '[checklists]\nfiles = ["rtp.toml"]\n',
            "rtp.toml": RTP_EXAMPLE.read_text(encoding="utf-8"),
            "app/__init__.py": "",
            "app/cache.py": "CACHE = {}\n",
            "app/log.py": "LEVEL = 'info'\n",
            "tests/test_cache.py": "def test_cache():\n    assert True\n",
        },
        {
            "app/cache.py": "CACHE = {}\n\n\ndef get(key):\n    return CACHE.get(key)\n",
            "app/log.py": "LEVEL = 'debug'\n",
            "tests/test_cache.py": (
                "from app.cache import get\n\n\ndef test_get():\n    assert get('x') is None\n"
            ),
        },
    )
    server.reply = _model
    with snapshot_of(repo) as snapshot:
        result = asyncio.run(_round(snapshot, server))

    assert result.checklist is not None
    (failed,) = result.checklist.failed
    assert failed.item_id == "G.6.1.20"
    assert result.checklist.total == 25 + 2 + 37
    (created,) = [f for f in result.findings if f.checklist_items]
    assert created.id == failed.finding_id
    assert created.checklist_items == ("G.6.1.20",)
    assert created.finding.title == "未满足清单项：Mega-PR 已拆分为独立变更"
    assert created.finding.evidence == "本 PR 同时修改了缓存与日志两个互不相关的模块。"
    assert (created.finding.path, created.finding.line) == ("app/cache.py", 2)

    body = visible_text(render_review(result, lang="zh"))
    assert "  • 未满足清单项：Mega-PR 已拆分为独立变更 @ app/cache.py:2" in body.splitlines()
    assert "Checklist Findings (1 fail / 64 total)" in body
    assert (
        "  • [6.1] Quality — Mega-PR 已拆分为独立变更"
        " → issue 未满足清单项：Mega-PR 已拆分为独立变更" in body.splitlines()
    )
    (comment,) = [c for c in inline_comments(result, lang="zh") if c.finding_id == created.id]
    assert (comment.path, comment.line) == ("app/cache.py", 2)
    assert visible_text(comment.body).splitlines()[-1] == (
        "Checklist: [6.1] Mega-PR 已拆分为独立变更"
    )
    requests = server.requests
    assert {r.stage for r in requests} == {"checklist"}
    assert len(requests) == 3  # general, the repository's rtp-llm, python
