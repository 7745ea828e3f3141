"""The scripting helpers and ChatRequest, called directly (they are plain functions and values)."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from assay.testing import (
    ChatRequest,
    Fault,
    FaultKind,
    LatencyModel,
    Reply,
    ScriptedLLMServer,
    ToolCall,
    json_reply,
    script_by_stage,
    tool_call_reply,
)


def _request(stage: str | None = None, **body: Any) -> ChatRequest:
    headers = {"x-assay-stage": stage} if stage else {}
    return ChatRequest(body=body, headers=headers)


def test_script_by_stage_routes_on_the_stage_header() -> None:
    reply = script_by_stage(
        {
            "discover": "found",
            "synthesize": lambda request: f"synthesized for {request.model}",
            "confirm": ["yes", json_reply(["no"])],
        },
        default={"fallback": True},
    )

    assert reply(_request("discover")) == "found"
    assert reply(_request("synthesize", model="m")) == "synthesized for m"
    assert reply(_request("confirm")) == "yes"
    assert reply(_request("confirm")) == Reply('["no"]')
    assert reply(_request("recheck")) == {"fallback": True}
    assert reply(_request()) == {"fallback": True}


def test_script_lists_run_out_loudly() -> None:
    reply = script_by_stage({"confirm": ["only"]})
    reply(_request("confirm"))

    with pytest.raises(LookupError, match="stage 'confirm' is exhausted after 1 replies"):
        reply(_request("confirm"))


def test_unscripted_stage_without_default_is_an_error() -> None:
    reply = script_by_stage({"discover": "x"})

    with pytest.raises(LookupError, match=r"no script for stage 'gate'; scripted stages: \["):
        reply(_request("gate"))


def test_stage_routing_through_the_server() -> None:
    reply = script_by_stage({"discover": ["d1", "d2"], "synthesize": {"title": "t"}})
    with ScriptedLLMServer(reply) as server:
        with openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0) as client:

            def ask(stage: str) -> str | None:
                completion = client.chat.completions.create(
                    model="m",
                    messages=[{"role": "user", "content": "review"}],
                    extra_headers={"X-Assay-Stage": stage},
                )
                return completion.choices[0].message.content

            answers = [ask("discover"), ask("synthesize"), ask("discover")]
            with pytest.raises(openai.InternalServerError, match="exhausted"):
                ask("discover")

    assert answers == ["d1", '{"title": "t"}', "d2"]
    assert [request.stage for request in server.requests] == [
        "discover",
        "synthesize",
        "discover",
        "discover",
    ]
    assert len(server.errors) == 1


def test_helpers_build_replies() -> None:
    assert json_reply({"a": [1]}, cached_tokens=3) == Reply('{"a": [1]}', cached_tokens=3)
    called = tool_call_reply("grep", {"pattern": "x"}, call_id="c1")
    assert called.tool_calls == [ToolCall("grep", '{"pattern": "x"}', "c1")]
    assert called.resolved_finish_reason == "tool_calls"
    assert Reply("x").resolved_finish_reason == "stop"
    assert Reply("x", finish_reason="length").resolved_finish_reason == "length"
    assert tool_call_reply("ls").tool_calls == [ToolCall("ls", "{}")]


def test_fault_constructors() -> None:
    rate_limited = Fault.status(429, retry_after=1.5)
    assert (rate_limited.kind, rate_limited.status_code, rate_limited.retry_after) == (
        FaultKind.STATUS,
        429,
        1.5,
    )
    assert Fault.status(500, body={"detail": "x"}).body == json.dumps({"detail": "x"})
    assert Fault.truncated("ab").reply == Reply("ab", finish_reason="length")
    assert Fault.delay(2, then="late") == Fault(FaultKind.DELAY, delay_s=2, reply="late")
    with pytest.raises(ValueError, match="400-599"):
        Fault.status(200)


def test_latency_model() -> None:
    assert LatencyModel().seconds_for(1000) == 0
    assert LatencyModel(ttft_s=0.5).seconds_for(1000) == 0.5
    assert LatencyModel(ttft_s=0.5, tokens_per_s=50).seconds_for(100) == pytest.approx(2.5)
    with pytest.raises(ValueError, match="tokens_per_s"):
        LatencyModel(tokens_per_s=0)
    with pytest.raises(ValueError, match="ttft_s"):
        LatencyModel(ttft_s=-1)


def test_chat_request_reads_fields_leniently() -> None:
    request = ChatRequest(
        body={
            "model": 3,
            "messages": ["not a message", {"role": "user", "content": None}],
            "tools": "none",
            "response_format": [],
            "max_tokens": True,
            "seed": 1.5,
            "temperature": 1,
        }
    )

    assert request.model is None
    assert request.messages == [{"role": "user", "content": None}]
    assert request.tools is None
    assert request.response_format is None
    assert request.max_tokens is None
    assert request.seed is None
    assert request.temperature == 1.0
    assert request.last_user_text == ""
    assert request.system_text == ""
    assert request.stage is None


def test_chat_request_prefers_max_completion_tokens() -> None:
    request = _request(max_tokens=10, max_completion_tokens=20)

    assert request.max_tokens == 20
