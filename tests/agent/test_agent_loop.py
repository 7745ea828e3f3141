"""The agent loop against the real scripted server: tools, errors, limits, batch replay."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from assay.errors import LLMHTTPError, LLMOutputInvalid, LLMPending
from assay.forge.git import GitRepo
from assay.llm import CachedExchange, LLMClient, MemoryReplayCache, calls_of
from assay.llm.agent import AgentResult, run_agent, tool_calls_of
from assay.testing import (
    ChatRequest,
    Fault,
    Reply,
    ScriptedLLMServer,
    ToolCall,
    json_reply,
    script_by_stage,
    tool_call_reply,
)
from assay.tools import Toolbox, Workspace
from tests.agent.agent_helpers import (
    MESSAGES,
    VERDICT,
    Verdict,
    completion,
    settings_for,
    tool_call_message,
)

STAGE = "confirm"


def _run(server: ScriptedLLMServer, toolbox: Toolbox, **options: Any) -> AgentResult[Verdict]:
    settings_overrides = options.pop("settings", {})

    async def go() -> AgentResult[Verdict]:
        async with LLMClient(settings_for(server, **settings_overrides)) as client:
            return await run_agent(client, STAGE, MESSAGES, Verdict, toolbox, **options)

    return asyncio.run(go())


def test_model_reads_a_file_greps_then_answers(server: ScriptedLLMServer, toolbox: Toolbox) -> None:
    server.reply = script_by_stage(
        {
            STAGE: [
                tool_call_reply("read_file", {"path": "src/calc.py"}),
                tool_call_reply("grep", {"pattern": r"def summ\b|summ\("}),
                json_reply(VERDICT),
            ]
        }
    )

    result = _run(server, toolbox, seed=7)

    assert result.value == Verdict(**VERDICT)
    assert result.stop_reason == "answered"
    assert result.steps == 3 and len(result.calls) == 3
    assert all(call.ok and call.stage == STAGE for call in result.calls)
    assert [(call.tool, call.ok) for call in result.tool_calls] == [
        ("read_file", True),
        ("grep", True),
    ]
    requests = server.requests
    assert [request.stage for request in requests] == [STAGE] * 3
    assert all(request.tools == toolbox.definitions for request in requests)
    assert all(request.seed == 7 for request in requests)
    assert all(request.response_format is not None for request in requests)
    assert all("tool_choice" not in request.body for request in requests)
    # Step 2 carries the first call and its answer; step 3 both calls and answers.
    assert requests[1].messages[:2] == MESSAGES
    assistant, tool = requests[1].messages[2:]
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"] == [
        {
            "id": "call_00000001_0",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "src/calc.py"}'},
        }
    ]
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_00000001_0"
    assert tool["content"].startswith("<<<UNTRUSTED tool output ")
    assert "   6 |     return summ(values)" in tool["content"]
    grep_answer = requests[2].messages[-1]["content"]
    assert "src/calc.py:6:     return summ(values)" in grep_answer
    assert requests[2].messages[:4] == requests[1].messages  # each step extends the last


def test_unknown_tools_and_bad_arguments_get_errors_and_the_loop_goes_on(
    server: ScriptedLLMServer, toolbox: Toolbox
) -> None:
    server.reply = script_by_stage(
        {
            STAGE: [
                Reply(
                    tool_calls=[
                        ToolCall("delete_repository", "{}"),
                        ToolCall("read_file", '{"path": "src/calc.py"'),
                        ToolCall("read_file", '{"path": "../outside/secret.txt"}'),
                        ToolCall("grep", '{"pattern": 42}'),
                    ]
                ),
                json_reply(VERDICT),
            ]
        }
    )

    result = _run(server, toolbox)

    assert result.value.verdict == "confirmed"
    answers = [message["content"] for message in server.requests[1].messages[-4:]]
    assert "error: unknown tool 'delete_repository'" in answers[0]
    assert "error: the arguments are not valid JSON" in answers[1]
    assert "error: '..' is refused in a path" in answers[2]
    assert "error: invalid arguments:\n- pattern: Input should be a valid string" in answers[3]
    assert [call.ok for call in result.tool_calls] == [False, False, False, False]


def test_a_model_that_never_stops_calling_tools_is_asked_for_the_answer(
    server: ScriptedLLMServer, toolbox: Toolbox
) -> None:
    def reply(request: ChatRequest) -> Reply:
        if request.body.get("tool_choice") == "none":
            return json_reply(VERDICT)
        return tool_call_reply("list_files", {"glob": "src/**"})

    server.reply = reply

    result = _run(server, toolbox, max_steps=3)

    assert result.stop_reason == "max_steps"
    assert result.steps == 4
    assert len(result.tool_calls) == 3
    requests = server.requests
    assert [request.stage for request in requests] == [STAGE] * 4
    final = requests[-1].body
    assert final["tool_choice"] == "none"
    assert final["tools"] == toolbox.definitions
    assert final["response_format"]["type"] == "json_schema"
    assert final["messages"][-1] == {
        "role": "user",
        "content": "You have reached the step limit for tool calls: no more tools can be "
        "called. Reply now with your final answer, built from what you have read so far: one "
        "JSON object that matches the required schema. JSON only: no prose, no code fence.",
    }
    previous = requests[-2].messages
    assert final["messages"][: len(previous)] == previous
    assert final["messages"][-3]["tool_calls"][0]["function"]["name"] == "list_files"
    assert final["messages"][-2]["role"] == "tool"


def test_a_model_that_ignores_tool_choice_none_fails_after_the_reasks(
    server: ScriptedLLMServer, toolbox: Toolbox
) -> None:
    server.reply = lambda request: tool_call_reply("list_files", {})

    with pytest.raises(LLMOutputInvalid) as caught:
        _run(server, toolbox, max_steps=2)

    error = caught.value
    assert "the reply has no content (it calls tools, which are disabled now)" in error.errors
    records = calls_of(error)
    assert len(records) == 2 + 2  # two tool steps, the final request, one re-ask
    assert [record.ok for record in records] == [True, True, False, False]
    assert len(tool_calls_of(error)) == 2  # calls made after tool_choice none are not run
    assert server.requests[-1].body["tool_choice"] == "none"


def test_the_token_budget_stops_the_tools(server: ScriptedLLMServer, toolbox: Toolbox) -> None:
    def reply(request: ChatRequest) -> Reply:
        if request.body.get("tool_choice") == "none":
            return json_reply(VERDICT, prompt_tokens=5200, completion_tokens=30)
        call = ToolCall("read_file", '{"path": "src/calc.py"}')
        return Reply(tool_calls=[call], prompt_tokens=5000, completion_tokens=10)

    server.reply = reply

    result = _run(server, toolbox, max_total_tokens=5500)

    assert result.stop_reason == "token_budget"
    assert result.steps == 2
    assert result.total_tokens == 5010 + 5230
    assert "token budget" in server.requests[-1].messages[-1]["content"]


def test_a_budget_smaller_than_the_prompt_asks_for_the_answer_at_once(
    server: ScriptedLLMServer, toolbox: Toolbox
) -> None:
    server.reply = lambda request: json_reply(VERDICT)

    result = _run(server, toolbox, max_total_tokens=10)

    assert result.stop_reason == "token_budget"
    assert result.tool_calls == ()
    assert [request.body.get("tool_choice") for request in server.requests] == ["none"]


def test_an_invalid_answer_is_reasked(server: ScriptedLLMServer, toolbox: Toolbox) -> None:
    server.reply = script_by_stage({STAGE: ["I think it is confirmed.", json_reply(VERDICT)]})

    result = _run(server, toolbox)

    assert result.value.verdict == "confirmed"
    assert [call.ok for call in result.calls] == [False, True]
    assert result.calls[0].error is not None and "invalid reply" in result.calls[0].error
    second = server.requests[1].messages
    assert second[-2] == {"role": "assistant", "content": "I think it is confirmed."}
    assert second[-1]["role"] == "user"
    assert second[-1]["content"].startswith("Your reply is not valid against the required JSON")


def test_extra_tool_calls_in_one_reply_are_refused(
    server: ScriptedLLMServer, toolbox: Toolbox
) -> None:
    calls = [ToolCall("read_file", json.dumps({"path": "src/calc.py"})) for _ in range(3)]
    server.reply = script_by_stage({STAGE: [Reply(tool_calls=calls), json_reply(VERDICT)]})

    result = _run(server, toolbox, max_calls_per_step=2)

    assert [call.ok for call in result.tool_calls] == [True, True, False]
    last_answer = server.requests[1].messages[-1]["content"]
    assert "error: at most 2 tool calls are run per reply" in last_answer


def test_errors_carry_the_records_made_so_far(server: ScriptedLLMServer, toolbox: Toolbox) -> None:
    # The first step calls a tool; the second request fails for good (no retries).
    answers = iter([tool_call_reply("read_file", {"path": "src/calc.py"})])
    server.reply = lambda request: next(answers, Fault.status(500))

    with pytest.raises(LLMHTTPError) as caught:
        _run(server, toolbox)

    records = calls_of(caught.value)
    assert [record.ok for record in records] == [True, False]
    assert [call.tool for call in tool_calls_of(caught.value)] == ["read_file"]


def test_batch_mode_advances_one_step_per_export_and_import(
    git_repo: GitRepo, tmp_path: Any
) -> None:
    cache = MemoryReplayCache()
    # The model's answers, imported one batch at a time; the first call has no id (some
    # servers omit it), so the loop must name it the same way on every rerun.
    answers = [
        completion(
            tool_call_message("read_file", '{"path": "src/calc.py"}'), finish_reason="tool_calls"
        ),
        completion(
            tool_call_message("grep", '{"pattern": "summ", "fixed": true}', call_id="call_b"),
            finish_reason="tool_calls",
        ),
        completion({"content": json.dumps(VERDICT)}),
    ]

    def rerun() -> AgentResult[Verdict]:
        # Each rerun is a fresh process in real use: new client, new checkout directory.
        async def go() -> AgentResult[Verdict]:
            with Workspace(git_repo, head="feature", base="main", temp_dir=tmp_path) as fresh:
                async with LLMClient(settings_for(None), cache, mode="batch-export") as client:
                    return await run_agent(client, STAGE, MESSAGES, Verdict, Toolbox(fresh))

        return asyncio.run(go())

    pending_keys: list[str] = []
    for step, answer in enumerate(answers):
        with pytest.raises(LLMPending) as caught:
            rerun()
        pending = caught.value
        records = calls_of(pending)
        assert len(records) == step + 1
        assert all(record.cached for record in records[:-1])
        assert records[-1].error == "pending (batch export)"
        assert len(tool_calls_of(pending)) == step
        assert pending.key not in pending_keys
        pending_keys.append(pending.key)
        if step == 1:
            messages = pending.body["messages"]
            assert isinstance(messages, list)
            assert messages[2]["tool_calls"][0]["id"] == "call_0_0"
            assert messages[3]["tool_call_id"] == "call_0_0"
            assert "   6 |     return summ(values)" in messages[3]["content"]
        cache.put(
            CachedExchange(
                key=pending.key,
                stage="",
                model="assay-test",
                response=answer,
                created_at=datetime(2026, 11, 29, tzinfo=UTC),
                source="batch",
            )
        )

    result = rerun()

    assert result.value == Verdict(**VERDICT)
    assert result.steps == 3
    assert all(call.cached for call in result.calls)
    assert [call.tool for call in result.tool_calls] == ["read_file", "grep"]
    assert len(cache) == 3
