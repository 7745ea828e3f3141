"""Stage 3, discover: one rep's independent review of the change (findings and strengths).

The prompt is laid out for the providers' prefix caches: system instructions, then the PR's
metadata and diff (identical for every rep of a round), then a short rep-specific tail (the
rep's number, the order in which to walk the files, a focus hint). Reps of one round therefore
send byte-identical prefixes and differ only at the end, and never share a replay-cache key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from assay.diff.types import FileDiff
from assay.errors import LLMError, LLMPending, LLMUnreachable
from assay.llm._prompting import (
    content_nonce,
    format_diff_for_model,
    render_prompt,
    untrusted_block,
)
from assay.llm.agent import run_agent, tool_calls_of
from assay.llm.client import CallRecord, LLMClient, Message, calls_of
from assay.llm.schemas import (
    DiscoveryReply,
    stage_json_schema,
    to_finding,
    to_strength,
)
from assay.model import Finding, PullRequestMeta, Strength
from assay.tools import Toolbox, ToolCallRecord

__all__ = [
    "STAGE",
    "DiscoveryInput",
    "DiscoveryOutcome",
    "build_discovery_messages",
    "discover",
]

STAGE = "discover"
"""The stage's name: its ``X-Assay-Stage`` header and its schema's name."""

_DESCRIPTION_LIMIT = 8000
"""Characters of the PR description sent; the rest is cut with a note (it is context only)."""


class DiscoveryInput(BaseModel):
    """What one discovery rep reviews."""

    model_config = ConfigDict(frozen=True)

    pr: PullRequestMeta
    files: tuple[FileDiff, ...]
    """The diff to review, in canonical order (the shared prefix of every rep)."""
    lang: Literal["en", "zh"] = "en"
    """The language the model writes findings in."""
    file_order: tuple[str, ...] | None = None
    """The order in which this rep walks the files (paths); ``None``: the diff's order."""
    focus: str | None = None
    """A short hint for this rep (e.g. "concurrency and error handling"); from configuration,
    never from the PR."""
    other_files: tuple[str, ...] = ()
    """One-line notes on changed files NOT in this request (other shards, generated files),
    so the rep knows the whole change without reviewing it twice."""


@dataclass(frozen=True)
class DiscoveryOutcome:
    """One rep's result. ``error`` is set when the stage failed; findings are never silently
    empty on failure."""

    findings: tuple[Finding, ...] = ()
    strengths: tuple[Strength, ...] = ()
    calls: tuple[CallRecord, ...] = ()
    error: str | None = None
    pending: tuple[LLMPending, ...] = ()
    """Batch export: the requests the replay cache could not answer yet."""
    dropped_findings: int = 0
    """Findings the reply contained but that had an empty title or path."""
    tool_calls: tuple[ToolCallRecord, ...] = ()
    """Repository tool calls an agentic rep made."""

    @property
    def ok(self) -> bool:
        """The rep produced a validated review (possibly with no findings)."""
        return self.error is None and not self.pending

    @property
    def attempts(self) -> int:
        """HTTP attempts across every exchange of this rep (retries and re-asks included)."""
        return sum(call.attempts for call in self.calls)


async def discover(
    inputs: DiscoveryInput,
    client: LLMClient,
    *,
    rep: int = 0,
    seed: int | None = None,
    toolbox: Toolbox | None = None,
    max_steps: int = 8,
) -> DiscoveryOutcome:
    """Run one discovery rep.

    Args:
        inputs: The PR, its diff and the rep's language, file order and focus.
        client: The LLM client (its mode decides between HTTP and batch export).
        rep: The rep's index, recorded on each finding and named in the prompt's tail.
        seed: Sent with the request when given.
        toolbox: Repository tools: the rep is agentic and may explore before answering.
        max_steps: Tool-calling steps an agentic rep may take.

    Returns:
        The findings and strengths, the call records, and either an ``error`` (the stage
        failed after retries and re-asks) or ``pending`` requests (batch export). With no
        files to review, an empty outcome without any call.

    Raises:
        LLMUnreachable: No connection to the endpoint (after retries); it carries the call
            records (``calls_of``).
    """
    if not inputs.files:
        return DiscoveryOutcome()
    messages = build_discovery_messages(inputs, rep=rep, agentic=toolbox is not None)
    tool_calls: tuple[ToolCallRecord, ...] = ()
    try:
        if toolbox is None:
            call = await client.call_stage(STAGE, messages, DiscoveryReply, seed=seed)
            reply, calls = call.value, call.calls
        else:
            agent = await run_agent(
                client, STAGE, messages, DiscoveryReply, toolbox, max_steps=max_steps, seed=seed
            )
            reply, calls, tool_calls = agent.value, agent.calls, agent.tool_calls
    except LLMPending as pending:
        return DiscoveryOutcome(calls=calls_of(pending), pending=(pending,))
    except LLMUnreachable:
        # No endpoint at all: every rep and stage would fail alike, and a review without a
        # model must not read as a clean one. The run stops with this one-line error.
        raise
    except LLMError as error:
        return DiscoveryOutcome(
            calls=calls_of(error),
            tool_calls=tool_calls_of(error),
            error=f"{type(error).__name__}: {error}",
        )
    kept = [
        discovered
        for discovered in reply.findings
        if discovered.title.strip() and discovered.path.strip()
    ]
    return DiscoveryOutcome(
        findings=tuple(to_finding(discovered, rep) for discovered in kept),
        strengths=tuple(
            to_strength(strength) for strength in reply.strengths if strength.text.strip()
        ),
        calls=calls,
        tool_calls=tool_calls,
        dropped_findings=len(reply.findings) - len(kept),
    )


def build_discovery_messages(
    inputs: DiscoveryInput, *, rep: int, agentic: bool = False
) -> list[Message]:
    """Build the discovery conversation: system instructions, then one user message whose
    long part (metadata and diff) is the same for every rep and whose tail is the rep's own.

    Args:
        inputs: What to review.
        rep: The rep's index (0-based; shown 1-based).

    Returns:
        ``[system, user]`` messages.
    """
    schema_json = json.dumps(stage_json_schema(STAGE), ensure_ascii=False, separators=(",", ":"))
    system = render_prompt("discover.system.j2", lang=inputs.lang, schema_json=schema_json)
    metadata = _metadata_text(inputs.pr, inputs.files, inputs.other_files)
    diff = format_diff_for_model(inputs.files)
    nonce = content_nonce(metadata, diff)
    user = render_prompt(
        "discover.user.j2",
        nonce=nonce,
        metadata_block=untrusted_block("pull-request", metadata, nonce),
        diff_block=untrusted_block("diff", diff, nonce),
        rep=rep,
        agentic=agentic,
        file_order=_file_numbers(inputs.files, inputs.file_order),
        focus=inputs.focus,
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _metadata_text(
    pr: PullRequestMeta, files: tuple[FileDiff, ...], other_files: tuple[str, ...] = ()
) -> str:
    description = pr.description.strip()
    if len(description) > _DESCRIPTION_LIMIT:
        description = (
            f"{description[:_DESCRIPTION_LIMIT]}\n[description cut at {_DESCRIPTION_LIMIT} "
            "characters]"
        )
    listing = "\n".join(
        f"{number}. {file.path} ({file.status.value}, +{file.added_lines} -{file.removed_lines})"
        for number, file in enumerate(files, start=1)
    )
    return "\n".join(
        [
            f"Title: {pr.title.strip()}",
            f"Branch: {pr.head_ref} -> {pr.base_ref}",
            f"Author: {pr.author}",
            "Description:",
            description or "(none)",
            f"Files ({len(files)}):",
            listing,
            *(
                [f"Other changed files, not in this request ({len(other_files)}):", *other_files]
                if other_files
                else []
            ),
        ]
    )


def _file_numbers(files: tuple[FileDiff, ...], order: tuple[str, ...] | None) -> list[int]:
    """Turn a path order into FILE numbers, so untrusted paths stay inside the data blocks.

    Paths not in the diff are ignored; files the order leaves out follow in diff order.
    """
    if order is None:
        return []
    numbers = {file.path: number for number, file in enumerate(files, start=1)}
    ordered = list(dict.fromkeys(numbers[path] for path in order if path in numbers))
    return ordered + [number for number in numbers.values() if number not in ordered]
