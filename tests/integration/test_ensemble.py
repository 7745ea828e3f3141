"""The whole ensemble round through `assay review`: 5 reps (2 agentic, using repository tools),
clustering and votes, synthesis, confirm, fact-check, gate and checklists, against a scripted
model on loopback and a real git repository."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.testing import (
    ChatRequest,
    Fault,
    ReplyValue,
    ScriptedLLMServer,
    json_reply,
    tool_call_reply,
)
from tests.integration.conftest import CALC_BASE, CliResult

SERVICE = "def load(path):\n    return open(path).read()\n"
SERVICE_CHANGED = (
    "def load(path):\n    handle = open(path)\n    data = handle.read()\n    return data\n"
)
TITLES = {  # three reps report the same defect in their own words
    0: "File handle opened in load() is never closed",
    1: "load() never closes the file handle it opens",
    2: "The file handle opened by load() is never closed",
}
LEAK_CLAIM = {
    "kind": "line_contains",
    "text": "service.py:2 calls open() without closing it",
    "path": "service.py",
    "line": 2,
    "needle": "open(path)",
    "count": None,
}


def leak(rep: int) -> dict[str, Any]:
    return {
        "severity": "P1",
        "category": "resource-leak",
        "title": TITLES[rep],
        "path": "service.py",
        "line": 2,
        "end_line": None,
        "side": "RIGHT",
        "evidence": "service.py:2 opens the file and no path closes it; load() runs per request.",
        "suggestion": "Use `with open(path) as handle:`.",
        "claims": [LEAK_CLAIM],
    }


def checklist_answer(request: ChatRequest) -> dict[str, Any]:
    text = request.last_user_text
    asked = re.search(r"item ids: (.+)\.\s*$", text)
    assert asked, text[-500:]
    ids = [item.strip() for item in asked.group(1).split(",")]
    failed_block = text.split("already failed a deterministic check", 1)
    already_failed = (
        set(re.findall(r"^- (\S+) —", failed_block[1], re.M)) if len(failed_block) > 1 else set()
    )
    return {
        "results": [
            {
                "item_id": item,
                "status": "fail" if item in already_failed else "pass",
                "finding_id": None,
                "new_finding": None,
                "reason": "scripted",
            }
            for item in ids
        ]
    }


def model(request: ChatRequest) -> ReplyValue:
    """A scripted ensemble: reps 0-2 find the leak, rep 3 finds nothing, rep 4 hangs."""
    if request.stage == "discover":
        rep = request.seed
        if request.tools and not any(m.get("role") == "tool" for m in request.messages):
            return tool_call_reply("read_file", {"path": "service.py"})
        if rep == 4:
            return Fault.delay(5)  # longer than the client's timeout: this rep fails
        findings = [leak(rep)] if rep in TITLES else []
        strengths = [{"text": "load() keeps its signature.", "path": "service.py", "line": 1}]
        return json_reply({"findings": findings, "strengths": strengths})
    if request.stage == "synthesize":
        return json_reply({**leak(0), "claim_ids": ["1.1"]} | {"claims": None})
    if request.stage == "confirm":
        return json_reply({"verdict": "confirmed", "reason": "service.py:2 leaks per call."})
    if request.stage == "checklist":
        return json_reply(checklist_answer(request))
    raise AssertionError(f"unexpected stage {request.stage}")


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(model) as running:
        os.environ.update(
            ASSAY_LLM_BASE_URL=running.base_url,
            ASSAY_MODEL="assay-test",
            ASSAY_LLM_TIMEOUT_S="1",
            ASSAY_LLM_TRANSPORT_RETRIES="0",
        )
        yield running


def test_five_reps_two_agentic_block_a_confirmed_fact_checked_p1(
    make_repo: Callable[..., Path],
    run_cli: Callable[..., CliResult],
    server: ScriptedLLMServer,
    tmp_path: Path,
) -> None:
    repo = make_repo(
        {"service.py": SERVICE, "calc.py": CALC_BASE, ".assay.toml": "[review]\nreps = 5\n"},
        {"service.py": SERVICE_CHANGED},
    )
    out = tmp_path / "out"

    done = run_cli(
        "review", "--repo", str(repo), "--base", "main", "--agentic-reps", "2", "--out", str(out)
    )

    assert done.exit_code == 0, done.stderr
    assert "Status: BLOCKING" in done.stdout
    kpi = json.loads((out / "kpi.json").read_text(encoding="utf-8"))
    assert (kpi["reps"], kpi["agentic_reps"]) == (5, 2)
    assert (kpi["discover_ok"], kpi["discover_fail"]) == (4, 1)
    assert kpi["shards"] == 1 and kpi["coverage"] == 1.0 and kpi["diff_truncated"] is False
    assert kpi["confirm"] == {"candidates": 1, "to_block": 1, "confirm_fail": 0}
    assert kpi["fact_check"] == {"checked": 1, "hold": 1, "refuted": 0, "parse_fail": 0}
    assert kpi["blocking"] == 1 and kpi["new_findings"] >= 1
    assert kpi["tool_calls"] == 2  # one read_file per agentic rep
    assert kpi["critical_path_ms"] > 0
    assert kpi["failed_stages"] == ["discover[4]"]
    findings = json.loads((out / "findings.json").read_text(encoding="utf-8"))
    leak_finding = next(f for f in findings if f["blocking"])
    assert leak_finding["votes"] == 3 and leak_finding["first_seen_round"] == 1
    # Checklists: M is the applicable items; a failing item with no finding made one, inline.
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert len(result["checklist"]["items"]) > 0
    created = [f for f in findings if (f["code"] or "").startswith("checklist:")]
    assert created, [f["code"] for f in findings]
    comments = json.loads((out / "comments.json").read_text(encoding="utf-8"))
    bodies = {c["finding_id"]: c["body"] for c in comments}
    assert all("Checklist: " in bodies[f["id"]] for f in created if f["id"] in bodies)
    assert "Checklist Findings (" in done.stdout
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "votes 3/5" in summary and "first seen r1" in summary.lower()
    assert "hold — verified(" in summary
    # Every discovery request shares the long prefix; only the rep's tail differs.
    firsts = [
        r
        for r in server.requests_for("discover")
        if not any(m.get("role") == "tool" for m in r.messages)
    ]
    prefixes = {r.messages[1]["content"].split("\n---\n")[0] for r in firsts}
    assert len(firsts) == 5 and len(prefixes) == 1
    assert {r.messages[0]["content"] for r in firsts} == {firsts[0].messages[0]["content"]}

    zh = run_cli(
        "review",
        "--repo",
        str(repo),
        "--base",
        "main",
        "--agentic-reps",
        "2",
        "--lang",
        "zh",
        "--out",
        str(tmp_path / "zh"),
    )
    assert zh.exit_code == 0, zh.stderr
    summary_zh = (tmp_path / "zh" / "summary.md").read_text(encoding="utf-8")
    assert "票数 3/5 · 首见 r1" in summary_zh
    assert "事实核验：hold — verified(service.py:2 calls open() without closin)" in summary_zh


def test_a_refuted_claim_downgrades_the_p1(
    make_repo: Callable[..., Path],
    run_cli: Callable[..., CliResult],
    server: ScriptedLLMServer,
    tmp_path: Path,
) -> None:
    LEAK_CLAIM_WRONG = {**LEAK_CLAIM, "needle": "open(path, 'rb')"}  # not what line 2 says

    def wrong_claims(request: ChatRequest) -> ReplyValue:
        answer = model(request)
        if request.stage == "discover" and request.seed in TITLES and not request.tools:
            return json_reply(
                {
                    "findings": [{**leak(request.seed), "claims": [LEAK_CLAIM_WRONG]}],
                    "strengths": [],
                }
            )
        return answer

    server.reply = wrong_claims
    repo = make_repo({"service.py": SERVICE}, {"service.py": SERVICE_CHANGED})
    out = tmp_path / "out"

    done = run_cli(
        "review",
        "--repo",
        str(repo),
        "--base",
        "main",
        "--reps",
        "5",
        "--agentic-reps",
        "0",
        "--out",
        str(out),
    )

    assert "Status: LGTM" in done.stdout
    findings = json.loads((out / "findings.json").read_text(encoding="utf-8"))
    downgraded = next(f for f in findings if f["original_severity"] == "p1")
    assert downgraded["severity"] == "p2" and "fact-check" in downgraded["gate_reason"]
    kpi = json.loads((out / "kpi.json").read_text(encoding="utf-8"))
    assert kpi["fact_check"]["refuted"] == 1 and kpi["blocking"] == 0
