"""The agentic loop: the model calls the repository tools, then answers with the stage's JSON.

Each step is one exchange through :meth:`LLMClient.complete` (replay cache, retries, the
``X-Assay-Stage`` header). A reply with ``tool_calls`` is answered by running the tools and
appending one ``role: tool`` message per call; a reply with content is validated against the
stage's reply model and, when invalid or truncated, re-asked within the client's re-ask budget.
When ``max_steps`` exchanges have offered the tools, or the token budget is spent, one more
request with ``tool_choice: "none"`` asks for the final answer.

Every request is a pure function of the messages, the model's earlier (cached) answers and
the tools' answers, which depend only on the repository. In batch-export mode a rerun
therefore replays the answered steps from the cache and raises ``LLMPending`` for the next one:
the loop advances one step per export/import cycle.

Example::

    result = await run_agent(client, "confirm", messages, ConfirmReply, toolbox, max_steps=6)
    result.value, result.calls, result.tool_calls
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import structlog
from pydantic import BaseModel, ValidationError

from assay.errors import LLMError, LLMOutputInvalid, LLMTruncated
from assay.llm._completion import extract_json_text, summarize_validation_error
from assay.llm._prompting import content_nonce, untrusted_block
from assay.llm.client import CallRecord, Completion, LLMClient, Message, calls_of
from assay.llm.tokens import estimate_tokens
from assay.tools import Toolbox, ToolCallRecord

__all__ = ["AgentResult", "StopReason", "run_agent", "tool_calls_of"]

log = structlog.get_logger(__name__)

ReplyT = TypeVar("ReplyT", bound=BaseModel)

StopReason = Literal["answered", "max_steps", "token_budget"]
"""Why the loop ended: the model answered on its own, or it was asked to answer because it
used its steps or its token budget."""

_ECHO_LIMIT = 4000
"""Characters of an unusable reply echoed back in a re-ask."""
_PER_MESSAGE_TOKENS = 4


@dataclass(frozen=True)
class AgentResult(Generic[ReplyT]):
    """The validated answer of an agentic stage, and everything it took to get it."""

    value: ReplyT
    calls: tuple[CallRecord, ...]
    """One record per exchange with the model, re-asks and the final request included."""
    tool_calls: tuple[ToolCallRecord, ...]
    """The tool calls this run made, in order."""
    steps: int
    """Exchanges with the model (``len(calls)``)."""
    stop_reason: StopReason
    raw_message: dict[str, Any]
    """The final assistant message as the endpoint sent it."""

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens over every exchange, as the server reported them."""
        return sum(call.prompt_tokens + call.completion_tokens for call in self.calls)


def tool_calls_of(error: BaseException) -> tuple[ToolCallRecord, ...]:
    """Return the tool calls an error raised by :func:`run_agent` carries (``()`` if none).

    Args:
        error: The error.

    Returns:
        The tool calls made before the error.
    """
    records = getattr(error, "tool_calls", ())
    return tuple(record for record in records if isinstance(record, ToolCallRecord))


async def run_agent(
    client: LLMClient,
    stage: str,
    messages: list[Message],
    reply_model: type[ReplyT],
    toolbox: Toolbox,
    *,
    max_steps: int = 8,
    max_total_tokens: int | None = None,
    seed: int | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    max_calls_per_step: int = 8,
) -> AgentResult[ReplyT]:
    """Run a tool-calling conversation until the model gives a valid answer.

    Args:
        client: The LLM client (its re-ask budget applies to invalid answers).
        stage: Sent as ``X-Assay-Stage`` on every step.
        messages: The conversation (system instructions first); not modified.
        reply_model: The pydantic model the answer must validate against.
        toolbox: The repository tools offered to the model.
        max_steps: Exchanges that may offer the tools; then the final answer is requested.
        max_total_tokens: Prompt plus completion tokens for the whole run. Before each step
            the loop estimates the step's prompt; it stops offering tools when the tokens used
            so far plus twice that estimate (the step, and the final answer after it) would
            pass the budget. ``None``: no budget.
        seed: Sent with every request.
        temperature: Defaults to the client's.
        max_tokens: Completion tokens per exchange; defaults to the client's.
        max_calls_per_step: Tool calls run per reply; further calls are answered with an
            error asking to call again.

    Returns:
        The answer, the call records, the tool calls and why the loop stopped.

    Raises:
        LLMOutputInvalid: The answer was still invalid after the re-asks.
        LLMTruncated: The answer was still cut at ``max_tokens`` after the re-asks.
        LLMPending: Batch export, and the next step is not answered in the cache yet.
        LLMError: As :meth:`LLMClient.complete` raises.

        Every error carries the records made so far (:func:`assay.llm.calls_of`) and the tool
        calls (:func:`tool_calls_of`).
    """
    if max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, not {max_steps}")
    run = _AgentRun(
        client,
        stage,
        messages,
        reply_model,
        toolbox,
        _Policy(max_steps, max_total_tokens, seed, temperature, max_tokens, max_calls_per_step),
    )
    return await run.run()


@dataclass(frozen=True)
class _Policy:
    max_steps: int
    max_total_tokens: int | None
    seed: int | None
    temperature: float | None
    max_tokens: int | None
    max_calls_per_step: int


@dataclass(frozen=True)
class _ToolCall:
    id: str
    name: str
    arguments: str


class _AgentRun(Generic[ReplyT]):
    """One run's state: the conversation, the records, the budgets used."""

    def __init__(
        self,
        client: LLMClient,
        stage: str,
        messages: list[Message],
        reply_model: type[ReplyT],
        toolbox: Toolbox,
        policy: _Policy,
    ) -> None:
        self._client = client
        self._stage = stage
        self._conversation: list[Message] = list(messages)
        self._reply_model = reply_model
        self._toolbox = toolbox
        self._policy = policy
        self._response_format = client.response_format_for(stage, reply_model)
        self._definition_tokens = estimate_tokens(json.dumps(toolbox.definitions))
        self._records: list[CallRecord] = []
        self._tool_records: list[ToolCallRecord] = []
        self._used_tokens = 0
        self._failed_answers = 0

    async def run(self) -> AgentResult[ReplyT]:
        stop_reason: StopReason = "max_steps"
        for step in range(self._policy.max_steps):
            if self._budget_spent():
                stop_reason = "token_budget"
                break
            completion = await self._exchange(final=False)
            tool_calls = _tool_calls(completion.view.message, step)
            if tool_calls:
                self._records.append(completion.record)
                await self._run_tools(completion, tool_calls)
                continue
            value = self._accept(completion)
            if value is not None:
                return self._result(value, completion, "answered")
        log.info("agent.final_request", stage=self._stage, reason=stop_reason)
        self._append_user(_final_request(stop_reason))
        while True:  # ends by returning, or by the re-ask budget raising in _accept
            completion = await self._exchange(final=True)
            value = self._accept(completion)
            if value is not None:
                return self._result(value, completion, stop_reason)

    async def _exchange(self, *, final: bool) -> Completion:
        body = self._client.build_request(
            list(self._conversation),
            response_format=self._response_format,
            seed=self._policy.seed,
            temperature=self._policy.temperature,
            max_tokens=self._policy.max_tokens,
            tools=self._toolbox.definitions,
        )
        if final:
            # The tools stay in the request (the conversation refers to them, and the prefix
            # stays cacheable); tool_choice forbids calling them.
            body["tool_choice"] = "none"
        try:
            completion = await self._client.complete(self._stage, body)
        except LLMError as error:
            raise self._with_records(error, calls_of(error)) from None
        self._used_tokens += completion.view.prompt_tokens + completion.view.completion_tokens
        return completion

    async def _run_tools(self, completion: Completion, tool_calls: list[_ToolCall]) -> None:
        message = completion.view.message
        self._conversation.append(
            {
                "role": "assistant",
                "content": message.get("content"),
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                    for call in tool_calls
                ],
            }
        )
        runnable = tool_calls[: self._policy.max_calls_per_step]
        # Worker threads: the tools read files and run ripgrep; the event loop keeps serving
        # the other reps meanwhile.
        results = await asyncio.gather(
            *(
                asyncio.to_thread(self._toolbox.dispatch, call.name, call.arguments)
                for call in runnable
            )
        )
        answers = [result.text for result in results]
        self._tool_records.extend(result.record for result in results)
        for call in tool_calls[len(runnable) :]:
            refusal = (
                f"at most {self._policy.max_calls_per_step} tool calls are run per reply; "
                "this one was not run: call it again"
            )
            answers.append(f"error: {refusal}")
            self._tool_records.append(
                ToolCallRecord(
                    tool=call.name[:100],
                    arguments=call.arguments[:2000],
                    ok=False,
                    error=refusal,
                    output_chars=0,
                    duration_ms=0,
                )
            )
        for call, answer in zip(tool_calls, answers, strict=True):
            self._conversation.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": untrusted_block("tool output", answer, content_nonce(answer)),
                }
            )
        log.info("agent.tools", stage=self._stage, calls=len(tool_calls))

    def _accept(self, completion: Completion) -> ReplyT | None:
        """The validated answer, or ``None`` after asking again (raises when out of re-asks)."""
        view = completion.view
        content = view.content
        problem: LLMError
        if view.finish_reason == "length":
            problem = LLMTruncated(
                f"stage {self._stage!r}: the answer was cut at the token limit", stage=self._stage
            )
            follow_up = _truncation_request()
            error_text = "truncated (finish_reason=length)"
        else:
            value, summary = _validate(content, view.message, self._reply_model)
            if value is not None:
                self._records.append(completion.record)
                return value
            problem = LLMOutputInvalid(
                f"stage {self._stage!r}: the answer does not match the schema:\n{summary}",
                stage=self._stage,
                body=(content or "")[:_ECHO_LIMIT],
                errors=summary,
            )
            follow_up = _correction_request(summary)
            error_text = f"invalid reply: {summary}"
        self._records.append(
            completion.record.model_copy(update={"ok": False, "error": error_text})
        )
        self._failed_answers += 1
        if self._failed_answers > self._client.settings.reasks:
            raise self._with_records(problem, ())
        log.info("llm.reask", stage=self._stage, problem=type(problem).__name__)
        self._conversation.append({"role": "assistant", "content": (content or "")[:_ECHO_LIMIT]})
        self._append_user(follow_up)
        return None

    def _append_user(self, text: str) -> None:
        # Two user messages in a row are merged: some chat templates insist on alternation.
        last = self._conversation[-1] if self._conversation else None
        if last is not None and last.get("role") == "user" and isinstance(last.get("content"), str):
            self._conversation[-1] = {**last, "content": f"{last['content']}\n\n{text}"}
        else:
            self._conversation.append({"role": "user", "content": text})

    def _budget_spent(self) -> bool:
        if self._policy.max_total_tokens is None:
            return False
        next_prompt = self._definition_tokens + sum(
            _PER_MESSAGE_TOKENS + estimate_tokens(json.dumps(message, ensure_ascii=False))
            for message in self._conversation
        )
        return self._used_tokens + 2 * next_prompt > self._policy.max_total_tokens

    def _result(
        self, value: ReplyT, completion: Completion, stop_reason: StopReason
    ) -> AgentResult[ReplyT]:
        log.info(
            "agent.done",
            stage=self._stage,
            steps=len(self._records),
            tool_calls=len(self._tool_records),
            stop_reason=stop_reason,
            tokens=self._used_tokens,
        )
        return AgentResult(
            value=value,
            calls=tuple(self._records),
            tool_calls=tuple(self._tool_records),
            steps=len(self._records),
            stop_reason=stop_reason,
            raw_message=completion.view.message,
        )

    def _with_records(self, error: LLMError, extra: tuple[CallRecord, ...]) -> LLMError:
        # The same attribute the client uses (read with calls_of); errors.py is shared.
        setattr(error, "calls", (*self._records, *extra))  # noqa: B010
        setattr(error, "tool_calls", tuple(self._tool_records))  # noqa: B010
        return error


def _tool_calls(message: dict[str, Any], step: int) -> list[_ToolCall]:
    """The reply's tool calls, with ids filled in deterministically and arguments as text."""
    raw_calls = message.get("tool_calls")
    if not isinstance(raw_calls, list):
        return []
    calls = []
    for index, raw in enumerate(raw_calls):
        entry = raw if isinstance(raw, dict) else {}
        function = entry.get("function")
        function = function if isinstance(function, dict) else {}
        name = function.get("name")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            # Some servers send an object; the protocol says a JSON string.
            arguments = "{}" if arguments is None else json.dumps(arguments, ensure_ascii=False)
        call_id = entry.get("id")
        calls.append(
            _ToolCall(
                id=call_id if isinstance(call_id, str) and call_id else f"call_{step}_{index}",
                name=name if isinstance(name, str) else "",
                arguments=arguments,
            )
        )
    return calls


def _validate(
    content: str | None, message: dict[str, Any], reply_model: type[ReplyT]
) -> tuple[ReplyT | None, str]:
    if content is None or not content.strip():
        called = bool(message.get("tool_calls"))
        reason = "it calls tools, which are disabled now" if called else "it is empty"
        return None, f"- (root): the reply has no content ({reason}); a JSON object is required"
    try:
        return reply_model.model_validate_json(extract_json_text(content)), ""
    except ValidationError as error:
        return None, summarize_validation_error(error)


def _final_request(reason: StopReason) -> str:
    why = "the step limit" if reason == "max_steps" else "the token budget"
    return (
        f"You have reached {why} for tool calls: no more tools can be called. Reply now with "
        "your final answer, built from what you have read so far: one JSON object that matches "
        "the required schema. JSON only: no prose, no code fence."
    )


def _correction_request(summary: str) -> str:
    return (
        "Your reply is not valid against the required JSON schema:\n"
        f"{summary}\n"
        "Reply again with the complete, corrected JSON object only: no prose, no code fence."
    )


def _truncation_request() -> str:
    return (
        "Your reply was cut off at the output limit, so it is not valid JSON. Reply again with "
        "a complete JSON object that is shorter: keep the most important items and shorten the "
        "text. JSON only: no prose, no code fence."
    )
