"""Deterministic faults, queued or returned by the reply function, as the openai SDK sees them."""

from __future__ import annotations

import json
import time
from typing import Any

import openai
import pytest

from assay.testing import (
    ChatRequest,
    Fault,
    LatencyModel,
    Reply,
    ReplyValue,
    ScriptedLLMServer,
    script_by_stage,
)

USER_HI: Any = [{"role": "user", "content": "hi"}]


def _ask(client: openai.OpenAI, stage: str | None = None, **options: Any) -> str | None:
    headers = {"X-Assay-Stage": stage} if stage else {}
    completion = client.chat.completions.create(
        model="m", messages=USER_HI, extra_headers=headers, **options
    )
    content: str | None = completion.choices[0].message.content
    return content


def test_429_with_retry_after_is_a_rate_limit_error_without_retries(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.enqueue_faults(Fault.status(429, retry_after=0))

    with pytest.raises(openai.RateLimitError) as raised:
        _ask(client)

    assert raised.value.status_code == 429
    assert raised.value.response.headers["retry-after"] == "0"
    assert raised.value.code == "rate_limit_exceeded"
    assert server.request_count == 1


def test_429_then_success_when_the_sdk_may_retry(server: ScriptedLLMServer) -> None:
    server.reply = lambda request: "after the wait"
    server.enqueue_faults(Fault.status(429, retry_after=0.01), Fault.status(503, retry_after=0.01))

    with openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=2) as client:
        answer = _ask(client)

    assert answer == "after the wait"
    assert server.request_count == 3
    assert [request.headers["x-stainless-retry-count"] for request in server.requests] == [
        "0",
        "1",
        "2",
    ]


def test_server_errors_carry_status_and_message(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.enqueue_faults(Fault.status(500), Fault.status(503, message="overloaded"))

    with pytest.raises(openai.InternalServerError) as first:
        _ask(client)
    with pytest.raises(openai.InternalServerError) as second:
        _ask(client)

    assert first.value.status_code == 500
    assert first.value.type == "server_error"
    assert "retry-after" not in first.value.response.headers
    assert second.value.status_code == 503
    assert second.value.message.endswith("overloaded")


def test_status_with_a_custom_body(server: ScriptedLLMServer, client: openai.OpenAI) -> None:
    server.enqueue_faults(Fault.status(400, body={"error": {"message": "context too long"}}))

    with pytest.raises(openai.BadRequestError) as raised:
        _ask(client)

    assert raised.value.response.json() == {"error": {"message": "context too long"}}


def test_malformed_json_body_fails_to_parse(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.enqueue_faults(Fault.malformed_json())

    # The SDK lets the JSON decoder's error through (json.JSONDecodeError is a ValueError).
    with pytest.raises(ValueError, match="Expecting value"):
        _ask(client)


def test_truncated_reply_has_finish_reason_length(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.enqueue_faults(Fault.truncated('{"findings": [', completion_tokens=512))

    completion = client.chat.completions.create(model="m", messages=USER_HI, max_tokens=512)

    assert completion.choices[0].finish_reason == "length"
    assert completion.choices[0].message.content == '{"findings": ['
    assert completion.usage is not None
    assert completion.usage.completion_tokens == 512


def test_invalid_content_is_a_well_formed_completion(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.enqueue_faults(Fault.invalid_content('{"wrong": "shape"}'), Fault.invalid_content())

    assert _ask(client) == '{"wrong": "shape"}'
    with pytest.raises(ValueError):
        json.loads(_ask(client) or "")


def test_delay_makes_the_client_time_out_and_the_server_keeps_serving(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.enqueue_faults(Fault.delay(30))

    with pytest.raises(openai.APITimeoutError):
        _ask(client, timeout=0.2)

    assert _ask(client) == "hi"
    assert server.request_count == 2


def test_delay_then_answers(server: ScriptedLLMServer, client: openai.OpenAI) -> None:
    server.enqueue_faults(Fault.delay(0.05, then="late"), Fault.delay(0.05))

    assert _ask(client) == "late"
    assert _ask(client) == "hi"  # without `then`, the reply function answers


def test_dropped_connection_is_a_connection_error(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.enqueue_faults(Fault.drop_connection())

    with pytest.raises(openai.APIConnectionError) as raised:
        _ask(client)

    assert not isinstance(raised.value, openai.APITimeoutError)
    assert _ask(client) == "hi"


def test_stage_faults_hit_only_their_stage_and_come_before_shared_ones(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.enqueue_faults(Fault.status(500), stage="confirm")
    server.enqueue_faults(Fault.status(503), Fault.status(502))

    outcomes: list[str] = []
    for stage in ("discover", "confirm", "confirm", "confirm"):
        try:
            outcomes.append(f"{stage}:{_ask(client, stage)}")
        except openai.APIStatusError as error:
            outcomes.append(f"{stage}:{error.status_code}")

    assert outcomes == ["discover:503", "confirm:500", "confirm:502", "confirm:hi"]
    assert len(server.requests_for("confirm")) == 3


def test_reply_function_can_return_faults(server: ScriptedLLMServer, client: openai.OpenAI) -> None:
    server.reply = script_by_stage(
        {"discover": [Fault.status(429, retry_after=0.01), Fault.truncated("par"), "whole"]}
    )

    with pytest.raises(openai.RateLimitError):
        _ask(client, "discover")
    truncated = client.chat.completions.create(
        model="m", messages=USER_HI, extra_headers={"X-Assay-Stage": "discover"}
    )
    assert truncated.choices[0].finish_reason == "length"
    assert _ask(client, "discover") == "whole"


def test_delay_returned_by_the_reply_function_answers_empty_after_the_wait(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.reply = lambda request: Fault.delay(0.01)

    assert _ask(client) == ""
    assert server.request_count == 1


def test_a_raising_reply_function_is_a_500_with_the_traceback(
    server: ScriptedLLMServer,
) -> None:
    def reply(request: ChatRequest) -> ReplyValue:
        raise KeyError("no script for this prompt")

    server.reply = reply

    # Retries allowed, yet the SDK does not retry: the server says a script bug will not heal.
    with openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=2) as client:
        with pytest.raises(openai.InternalServerError) as raised:
            _ask(client)

    assert raised.value.code == "reply_function_error"
    assert "KeyError: 'no script for this prompt'" in raised.value.message
    assert "Traceback (most recent call last)" in raised.value.message
    assert server.request_count == 1
    [error] = server.errors
    assert isinstance(error, KeyError)


def test_a_reply_of_the_wrong_type_is_a_500(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.reply = lambda request: 42  # type: ignore[assignment,return-value]  # the mistake tested

    with pytest.raises(openai.InternalServerError, match="not int"):
        _ask(client)

    [error] = server.errors
    assert isinstance(error, TypeError)


def test_a_malformed_reply_is_a_500_not_a_dropped_connection(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    server.reply = lambda request: Reply(content=7)  # type: ignore[arg-type]  # the mistake tested

    with pytest.raises(openai.InternalServerError, match="TypeError"):
        _ask(client)

    assert len(server.errors) == 1


def test_latency_model_delays_every_reply() -> None:
    latency = LatencyModel(ttft_s=0.1, tokens_per_s=100)  # 10 tokens → 0.1 s more
    with ScriptedLLMServer(lambda request: "x" * 40, latency=latency) as server:
        with openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0) as client:
            started = time.monotonic()
            _ask(client)
            elapsed = time.monotonic() - started

    assert latency.seconds_for(10) == pytest.approx(0.2)
    assert elapsed >= 0.2


def test_closing_wakes_a_delayed_request(server: ScriptedLLMServer) -> None:
    server.enqueue_faults(Fault.delay(60))

    with openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0) as client:
        with pytest.raises(openai.APITimeoutError):
            _ask(client, timeout=0.1)
        started = time.monotonic()
        server.close()
        closing_s = time.monotonic() - started

    # Generous bound: without the wake-up, close() would wait the full minute.
    assert closing_s < 30


def test_enqueue_faults_rejects_other_values(server: ScriptedLLMServer) -> None:
    with pytest.raises(TypeError, match="Fault values"):
        server.enqueue_faults("429")  # type: ignore[arg-type]  # the mistake tested
