"""Confirm: each blocking candidate re-examined by the confirm stage, which tries to refute it."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.errors import LLMUnreachable
from assay.forge.git import GitRepo
from assay.forge.local import GitRevisionReader
from assay.llm import LLMClient, LLMSettings
from assay.llm.cache import MemoryReplayCache
from assay.model import ConfirmVerdict, Finding, Severity
from assay.pipeline.confirm import ConfirmOutcome, confirm_candidates
from assay.pipeline.gate import SupportedFinding, decide_gate
from assay.testing import (
    ChatRequest,
    Fault,
    Reply,
    ScriptedLLMServer,
    json_reply,
    script_by_stage,
    tool_call_reply,
)
from assay.tools import Toolbox, Workspace

_DB = "".join(f"line {number}\n" for number in range(1, 11)) + (
    "def fetch(pool):\n    conn = pool.acquire()\n    return conn.query()\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[GitRepo]:
    repo_path = tmp_path / "repo"
    (repo_path / "app").mkdir(parents=True)
    (repo_path / "app" / "db.py").write_text(_DB, encoding="utf-8")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "head"]):
        subprocess.run(["git", *args], cwd=repo_path, check=True, capture_output=True)
    with GitRepo.open(repo_path) as opened:
        yield opened


@pytest.fixture
def head(repo: GitRepo) -> GitRevisionReader:
    return GitRevisionReader(repo, repo.rev_parse("HEAD"))


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as running:
        yield running
        assert not running.errors, running.errors


def _finding(
    title: str = "Connection acquired in fetch() is never released", **fields: Any
) -> Finding:
    values: dict[str, Any] = {
        "severity": Severity.P1,
        "category": "resource-leak",
        "title": title,
        "path": "app/db.py",
        "line": 12,
        "evidence": "app/db.py:12 acquires a connection that nothing releases.",
        "suggestion": "Use `with pool.acquire() as conn:`.",
        "rep": 0,
    }
    values.update(fields)
    return Finding(**values)


def _confirm(
    server: ScriptedLLMServer,
    head: GitRevisionReader,
    candidates: list[Finding],
    *,
    base_url: str | None = None,
    lang: str = "en",
    toolbox: Toolbox | None = None,
) -> ConfirmOutcome:
    settings = LLMSettings(
        base_url=base_url or server.base_url,
        model="assay-test",
        backoff_base_s=0.0,
        transport_retries=0,
        reasks=1,
        timeout_s=5.0,
        max_tokens=1000,
    )

    async def run() -> ConfirmOutcome:
        async with LLMClient(settings) as client:
            return await confirm_candidates(
                candidates, client=client, toolbox=toolbox, lang=lang, head=head
            )

    return asyncio.run(run())


def test_a_confirmed_candidate_counts_toward_blocking(
    server: ScriptedLLMServer, head: GitRevisionReader
) -> None:
    server.reply = lambda request: json_reply(
        {"verdict": "confirmed", "reason": "app/db.py:12 acquires;  nothing releases."}
    )

    outcome = _confirm(server, head, [_finding()])

    (confirmation,) = outcome.confirmations
    assert confirmation.verdict is ConfirmVerdict.CONFIRMED
    assert confirmation.reason == "app/db.py:12 acquires; nothing releases."
    assert outcome.kpi.model_dump() == {"candidates": 1, "to_block": 1, "confirm_fail": 0}
    (request,) = server.requests
    assert request.stage == "confirm"
    assert request.response_format is not None
    assert request.response_format["json_schema"]["name"] == "confirm"
    assert "try to refute it" in request.system_text
    # The model sees the cited lines as the repository has them at head, numbered.
    assert "=== app/db.py @ head ===" in request.last_user_text
    assert "12 |     conn = pool.acquire()" in request.last_user_text
    assert [call.stage for call in outcome.calls] == ["confirm"]


def test_a_refuted_candidate_is_downgraded_by_the_gate_with_the_reason(
    server: ScriptedLLMServer, head: GitRevisionReader
) -> None:
    server.reply = lambda request: json_reply(
        {"verdict": "refuted", "reason": "fetch() is only called inside a pooled context."}
    )
    finding = _finding()

    outcome = _confirm(server, head, [finding], lang="zh")

    (confirmation,) = outcome.confirmations
    assert confirmation.verdict is ConfirmVerdict.REFUTED
    assert outcome.kpi.to_block == 0
    assert "Simplified Chinese" in server.requests[0].system_text
    decision = decide_gate(
        SupportedFinding(finding, 5, confirmation), reps=5, block_support=3, round_index=1
    )
    assert not decision.blocking
    assert decision.severity is Severity.P2
    assert decision.reason == "confirm refuted: fetch() is only called inside a pooled context."


def test_a_confirm_stage_error_is_confirm_fail_and_cannot_block(
    server: ScriptedLLMServer, head: GitRevisionReader
) -> None:
    server.reply = lambda request: Fault.status(500)

    finding = _finding()
    outcome = _confirm(server, head, [finding])

    (confirmation,) = outcome.confirmations
    assert confirmation.verdict is ConfirmVerdict.FAILED
    assert confirmation.reason.startswith("LLMHTTPError")
    assert outcome.kpi.model_dump() == {"candidates": 1, "to_block": 0, "confirm_fail": 1}
    (failure,) = outcome.failures
    assert failure.stage == "confirm[0]"
    decision = decide_gate(
        SupportedFinding(finding, 5, confirmation), reps=5, block_support=3, round_index=1
    )
    assert not decision.blocking
    assert decision.reason.startswith("confirm failed: LLMHTTPError")


def test_an_unusable_reply_is_confirm_fail(
    server: ScriptedLLMServer, head: GitRevisionReader
) -> None:
    server.reply = lambda request: json_reply({"verdict": "maybe", "reason": "Hard to say."})

    outcome = _confirm(server, head, [_finding()])

    assert outcome.confirmations[0].verdict is ConfirmVerdict.FAILED
    assert outcome.confirmations[0].reason.startswith("LLMOutputInvalid: stage 'confirm'")
    assert outcome.kpi.confirm_fail == 1
    assert server.request_count == 2  # the ask and one re-ask


def test_candidates_are_confirmed_concurrently_and_answered_in_order(
    server: ScriptedLLMServer, head: GitRevisionReader
) -> None:
    # Each reply waits until all three requests are in flight: sequential calls would time out.
    all_in_flight = threading.Barrier(3, timeout=4)

    def reply(request: ChatRequest) -> Reply:
        all_in_flight.wait()
        refuted = "Title: Second" in request.last_user_text
        verdict = "refuted" if refuted else "confirmed"
        return json_reply({"verdict": verdict, "reason": "Checked."})

    server.reply = reply
    candidates = [_finding("First"), _finding("Second"), _finding("Third")]

    outcome = _confirm(server, head, candidates)

    assert [c.verdict for c in outcome.confirmations] == [
        ConfirmVerdict.CONFIRMED,
        ConfirmVerdict.REFUTED,
        ConfirmVerdict.CONFIRMED,
    ]
    assert outcome.kpi.model_dump() == {"candidates": 3, "to_block": 2, "confirm_fail": 0}


def test_no_endpoint_at_all_stops_the_round(
    server: ScriptedLLMServer, head: GitRevisionReader
) -> None:
    closed = _closed_port()

    with pytest.raises(LLMUnreachable):
        _confirm(server, head, [_finding()], base_url=f"http://127.0.0.1:{closed}/v1")


def test_no_candidates_no_calls(server: ScriptedLLMServer, head: GitRevisionReader) -> None:
    outcome = _confirm(server, head, [])

    assert outcome.confirmations == ()
    assert outcome.kpi.model_dump() == {"candidates": 0, "to_block": 0, "confirm_fail": 0}
    assert server.request_count == 0


def test_an_agentic_confirmation_reads_the_repository_before_deciding(
    server: ScriptedLLMServer, repo: GitRepo, head: GitRevisionReader, tmp_path: Path
) -> None:
    server.reply = script_by_stage(
        {
            "confirm": [
                tool_call_reply("read_file", {"path": "app/db.py", "start": 11, "end": 13}),
                json_reply({"verdict": "confirmed", "reason": "app/db.py:12 never releases."}),
            ]
        }
    )

    with Workspace(repo, head="HEAD", temp_dir=tmp_path) as workspace:
        outcome = _confirm(server, head, [_finding()], toolbox=Toolbox(workspace, ripgrep=None))

    assert outcome.confirmations[0].verdict is ConfirmVerdict.CONFIRMED
    assert outcome.kpi.to_block == 1
    first, second = server.requests
    assert first.tools is not None
    assert "You have read-only tools" in first.system_text
    (tool_message,) = [m for m in second.messages if m.get("role") == "tool"]
    assert "conn = pool.acquire()" in tool_message["content"]
    assert [record.tool for record in outcome.tool_calls] == ["read_file"]


def test_an_agent_that_escapes_the_checkout_is_refused_and_still_decides(
    server: ScriptedLLMServer, repo: GitRepo, head: GitRevisionReader, tmp_path: Path
) -> None:
    server.reply = script_by_stage(
        {
            "confirm": [
                tool_call_reply("read_file", {"path": "../../etc/passwd"}),
                json_reply({"verdict": "refuted", "reason": "Could not read the code."}),
            ]
        }
    )

    with Workspace(repo, head="HEAD", temp_dir=tmp_path) as workspace:
        outcome = _confirm(server, head, [_finding()], toolbox=Toolbox(workspace, ripgrep=None))

    (record,) = outcome.tool_calls
    assert (record.tool, record.ok) == ("read_file", False)
    assert outcome.confirmations[0].verdict is ConfirmVerdict.REFUTED
    assert "root:" not in str(server.requests[1].messages)


def test_batch_export_leaves_the_request_pending_not_failed(
    server: ScriptedLLMServer, head: GitRevisionReader
) -> None:
    settings = LLMSettings(base_url=server.base_url, model="assay-test")

    async def run() -> ConfirmOutcome:
        async with LLMClient(settings, MemoryReplayCache(), mode="batch-export") as client:
            return await confirm_candidates(
                [_finding()], client=client, toolbox=None, lang="en", head=head
            )

    outcome = asyncio.run(run())

    (pending,) = outcome.pending
    assert pending.stage == "confirm"
    assert outcome.confirmations[0].verdict is ConfirmVerdict.FAILED
    assert outcome.kpi.model_dump() == {"candidates": 1, "to_block": 0, "confirm_fail": 0}
    assert outcome.failures == ()
    assert server.request_count == 0


def _closed_port() -> int:
    """A loopback port with nothing listening on it (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
