"""Well-formed replies through the real openai SDK: content, JSON, tools, usage, recording."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import openai
import pydantic
from openai.types.chat import ChatCompletion

from assay.testing import (
    ChatRequest,
    Reply,
    ReplyValue,
    ScriptedLLMServer,
    ToolCall,
    json_reply,
    tool_call_reply,
)

USER_HI: Any = [{"role": "user", "content": "hi"}]


def test_string_reply_is_a_well_formed_chat_completion(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.reply = lambda request: "looks good"

    raw = client.chat.completions.with_raw_response.create(model="gpt-x", messages=USER_HI)

    # Strict validation, not the SDK's lenient construction: every field is in its documented shape.
    completion = ChatCompletion.model_validate(raw.http_response.json())
    assert completion.object == "chat.completion"
    assert completion.id == "chatcmpl-00000001"
    assert completion.model == "gpt-x"
    assert completion.created > 0
    assert completion.choices[0].message.role == "assistant"
    assert completion.choices[0].message.content == "looks good"
    assert completion.choices[0].message.tool_calls is None
    assert completion.choices[0].finish_reason == "stop"
    assert raw.headers["content-type"] == "application/json"
    assert raw.parse().choices[0].message.content == "looks good"


def test_dict_list_and_pydantic_replies_are_sent_as_json_content(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    class Verdict(pydantic.BaseModel):
        holds: bool
        reason: str

    replies: list[ReplyValue] = [
        {"findings": [{"title": "ünïcode", "line": 3}]},
        [1, 2],
        Verdict(holds=True, reason="checked"),
        json_reply({"empty": None}),
    ]
    server.reply = lambda request: replies[server.request_count - 1]

    contents = [
        client.chat.completions.create(model="m", messages=USER_HI).choices[0].message.content
        for _ in replies
    ]

    assert [json.loads(content or "") for content in contents] == [
        {"findings": [{"title": "ünïcode", "line": 3}]},
        [1, 2],
        {"holds": True, "reason": "checked"},
        {"empty": None},
    ]


def test_tool_call_reply(server: ScriptedLLMServer, client: openai.OpenAI) -> None:
    server.reply = lambda request: tool_call_reply("read_file", {"path": "src/app.py"})

    completion = client.chat.completions.create(model="m", messages=USER_HI)

    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    assert choice.message.tool_calls is not None
    [call] = choice.message.tool_calls
    assert call.type == "function"
    assert call.function.name == "read_file"
    assert json.loads(call.function.arguments) == {"path": "src/app.py"}
    assert call.id == "call_00000001_0"


def test_several_tool_calls_keep_given_ids_and_raw_arguments(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.reply = lambda request: Reply(
        content="calling",
        tool_calls=[ToolCall("grep", '{"pattern": "TODO"}', "call_a"), ToolCall("ls", "{bad")],
    )

    completion = client.chat.completions.create(model="m", messages=USER_HI)

    seen = []
    for call in completion.choices[0].message.tool_calls or []:
        assert call.type == "function"
        seen.append((call.id, call.function.name, call.function.arguments))
    assert seen == [
        ("call_a", "grep", '{"pattern": "TODO"}'),
        ("call_00000001_1", "ls", "{bad"),
    ]
    assert completion.choices[0].message.content == "calling"


def test_usage_is_estimated_from_text_length(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.reply = lambda request: "x" * 10  # 10 characters → 3 tokens (rounded up)
    messages: Any = [
        {"role": "system", "content": "s" * 8},
        {"role": "user", "content": "u" * 9},
    ]

    usage = client.chat.completions.create(model="m", messages=messages).usage

    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (5, 3, 8)
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 0


def test_usage_given_in_the_reply_is_reported(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.reply = lambda request: Reply(
        "ok", prompt_tokens=1200, completion_tokens=30, cached_tokens=1024
    )

    usage = client.chat.completions.create(model="m", messages=USER_HI).usage

    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (1200, 30, 1230)
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 1024


def test_requests_are_recorded_with_headers_and_body(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    tools: Any = [{"type": "function", "function": {"name": "grep", "parameters": {}}}]
    response_format: Any = {
        "type": "json_schema",
        "json_schema": {"name": "Reply", "schema": {"type": "object"}},
    }
    messages: Any = [
        {"role": "system", "content": "You review code."},
        {"role": "developer", "content": [{"type": "text", "text": "Be terse."}]},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "sec"}, {"type": "text", "text": "ond"}],
        },
    ]

    client.chat.completions.create(
        model="review-model",
        messages=messages,
        max_completion_tokens=512,
        seed=7,
        temperature=0.3,
        tools=tools,
        response_format=response_format,
        extra_headers={"X-Assay-Stage": "discover", "X-Custom": "yes"},
    )
    client.chat.completions.create(model="m", messages=USER_HI, max_tokens=64)

    first, second = server.requests
    assert server.request_count == 2
    assert first.stage == "discover"
    assert first.headers["x-custom"] == "yes"
    assert first.headers["authorization"] == "Bearer x"
    assert first.model == "review-model"
    assert first.body["messages"] == messages
    assert first.messages == messages
    assert (first.max_tokens, first.seed, first.temperature) == (512, 7, 0.3)
    assert first.tools == tools
    assert first.response_format == response_format
    assert first.last_user_text == "second"
    assert first.system_text == "You review code.\n\nBe terse."
    assert second.stage is None
    assert second.max_tokens == 64
    assert (second.seed, second.temperature, second.tools, second.response_format) == (
        None,
        None,
        None,
        None,
    )
    assert server.requests_for("discover") == [first]
    assert server.requests_for(None) == [second]
    assert first.received_at <= second.received_at


def test_reset_forgets_requests_and_restarts_numbering(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    client.chat.completions.create(model="m", messages=USER_HI)

    server.reset()
    completion = client.chat.completions.create(model="m", messages=USER_HI)

    assert server.request_count == 1
    assert completion.id == "chatcmpl-00000001"


def test_default_reply_echoes_the_last_user_message(client: openai.OpenAI) -> None:
    messages: Any = [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}]

    completion = client.chat.completions.create(model="m", messages=messages)

    assert completion.choices[0].message.content == "two"


def test_model_is_reported_from_the_configured_list_when_the_request_names_none() -> None:
    with ScriptedLLMServer(models=("qwen3", "other")) as server:
        with openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0) as client:
            listed = [model.id for model in client.models.list()]
            raw = client.post(
                "/chat/completions",
                body={"messages": USER_HI},
                cast_to=ChatCompletion,
            )

    assert listed == ["qwen3", "other"]
    assert raw.model == "qwen3"


def test_async_client_gets_concurrent_answers(server: ScriptedLLMServer) -> None:
    def reply(request: ChatRequest) -> ReplyValue:
        return Reply(f"answer to {request.last_user_text}", delay_s=0.05)

    server.reply = reply

    async def ask_all() -> list[str | None]:
        async with openai.AsyncOpenAI(
            base_url=server.base_url, api_key="x", max_retries=0
        ) as async_client:
            completions = await asyncio.gather(
                *(
                    async_client.chat.completions.create(
                        model="m", messages=[{"role": "user", "content": f"q{index}"}]
                    )
                    for index in range(8)
                )
            )
        return [completion.choices[0].message.content for completion in completions]

    answers = asyncio.run(ask_all())

    assert answers == [f"answer to q{index}" for index in range(8)]
    assert sorted(request.last_user_text for request in server.requests) == [
        f"q{index}" for index in range(8)
    ]
