"""What the verifying stages (confirm, fact-check) show the model, and how they ask it.

Both stages show a finding and the lines it cites, read from the repository rather than taken
from the finding: the model judges the code, not the reviewer's quotation of it. Without tools
these excerpts are all the model sees; with tools (agentic) they are where it starts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel

from assay.diff.types import Side
from assay.errors import AssayError
from assay.llm.agent import run_agent
from assay.llm.client import CallRecord, LLMClient, Message
from assay.model import Claim, Finding
from assay.pipeline._claims import RevisionText, clean_path
from assay.tools import Toolbox, ToolCallRecord

__all__ = ["Answer", "ask_model", "cited_excerpts", "finding_text"]

ReplyT = TypeVar("ReplyT", bound=BaseModel)

EXCERPT_CHARS = 12_000
"""Characters of excerpts one prompt carries at most (the rest is named as cut)."""
_FINDING_CONTEXT = 8
_CITED_CONTEXT = 3
_MAX_RANGE_LINES = 80
_MAX_FILES = 12
"""Distinct files one prompt shows excerpts of (each read costs a blob read)."""
_MAX_LINE_CHARS = 300
_TEXT_REFERENCE = re.compile(
    r"(?<![\w/.\-])(?P<path>[\w.\-]+(?:/[\w.\-]+)*\.[A-Za-z]\w*|[\w.\-]+(?:/[\w.\-]+)+)"
    r":(?P<start>\d+)(?:-(?P<end>\d+))?"
)


def finding_text(finding: Finding) -> str:
    """The finding as the model reads it (untrusted: the caller delimits it)."""
    where = f"{finding.path}:{finding.line}"
    if finding.end_line is not None and finding.end_line != finding.line:
        where += f"-{finding.end_line}"
    side = " (base line numbers: removed code)" if finding.side is Side.LEFT else ""
    lines = [
        f"Severity: {finding.severity.value}",
        f"Category: {finding.category}",
        f"Title: {finding.title}",
        f"Location: {where}{side}",
        f"Source: {finding.source.value}" + (f" ({finding.rule})" if finding.rule else ""),
        "Evidence:",
        finding.evidence.strip() or "(none)",
        "Suggestion:",
        finding.suggestion.strip() or "(none)",
    ]
    return "\n".join(lines)


@dataclass
class _Ranges:
    """Line ranges to show, per (revision name, path), in order of first mention."""

    order: list[tuple[RevisionText, str]] = field(default_factory=list)
    spans: dict[tuple[str, str], list[tuple[int, int]]] = field(default_factory=dict)

    def add(self, revision: RevisionText, path: str, start: int, end: int) -> None:
        key = (revision.name, path)
        if key not in self.spans:
            if len(self.order) >= _MAX_FILES:
                return
            self.order.append((revision, path))
            self.spans[key] = []
        end = min(end, start + _MAX_RANGE_LINES - 1)
        self.spans[key].append((max(1, start), end))


def cited_excerpts(
    finding: Finding,
    *,
    head: RevisionText,
    base: RevisionText | None = None,
    claims: Sequence[Claim] = (),
    max_chars: int = EXCERPT_CHARS,
) -> str:
    """The lines the finding and its claims cite, read from the repository, numbered.

    The finding's own lines (with context), each claim's ``path:line``, and every ``path:line``
    the evidence or a claim's text mentions. Paths that do not exist are named as such.

    Args:
        finding: The finding.
        head: Head revision text.
        base: Base revision text (for removed-code findings and base claims).
        claims: The claims to show lines for (default: none beyond the finding's).
        max_chars: Cut the excerpts here, saying so.

    Returns:
        ``=== <path> @ <revision> ===`` blocks of ``<number> | <text>`` lines.
    """
    ranges = _Ranges()
    location_revision = base if finding.side is Side.LEFT and base is not None else head
    last = finding.end_line or finding.line
    ranges.add(
        location_revision,
        finding.path,
        finding.line - _FINDING_CONTEXT,
        max(last, finding.line) + _FINDING_CONTEXT,
    )
    for claim in claims:
        revision = base if claim.revision == "base" and base is not None else head
        if claim.path and claim.line is not None:
            ranges.add(
                revision, claim.path, claim.line - _CITED_CONTEXT, claim.line + _CITED_CONTEXT
            )
    for text in [finding.evidence, *(claim.text for claim in claims)]:
        for match in _TEXT_REFERENCE.finditer(text):
            start = int(match.group("start"))
            end = max(start, int(match.group("end") or start))
            ranges.add(head, match.group("path"), start - _CITED_CONTEXT, end + _CITED_CONTEXT)
    return _render(ranges, max_chars)


def _render(ranges: _Ranges, max_chars: int) -> str:
    blocks: list[str] = []
    used = 0
    for revision, cited in ranges.order:
        try:
            block = _excerpt(revision, cited, ranges.spans[(revision.name, cited)])
        except AssayError as error:
            block = f"=== {cited} @ {revision.name} ===\n(could not be read: {error})"
        if used + len(block) > max_chars:
            blocks.append(f"[excerpts cut at {max_chars} characters]")
            break
        blocks.append(block)
        used += len(block)
    return "\n\n".join(blocks)


def _excerpt(revision: RevisionText, cited: str, spans: Sequence[tuple[int, int]]) -> str:
    path = clean_path(cited)
    header = f"=== {cited} @ {revision.name} ==="
    if path is None:
        return f"{header}\n(not a usable path)"
    candidates = revision.candidates(path)
    if len(candidates) != 1:
        problem = "does not exist" if not candidates else f"matches {len(candidates)} files"
        return f"{header}\n({path} {problem} at {revision.name})"
    resolved = candidates[0]
    if resolved != path:
        header = f"=== {resolved} @ {revision.name} (cited as {path}) ==="
    found = revision.file(resolved)
    if found.status != "ok":
        return f"{header}\n({found.status.replace('_', ' ')}; not shown)"
    lines = found.text.split("\n")
    width = len(str(len(lines)))
    shown: list[str] = []
    for start, end in _merged(spans, len(lines)):
        if shown:
            shown.append("…")
        shown += [
            f"{number:>{width}} | {lines[number - 1][:_MAX_LINE_CHARS]}"
            for number in range(start, end + 1)
        ]
    if not shown:
        return f"{header}\n(the file has {len(lines)} lines; the cited lines are past its end)"
    return "\n".join([header, *shown])


def _merged(spans: Sequence[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted((s, min(e, length)) for s, e in spans if s <= length):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


@dataclass(frozen=True)
class Answer(Generic[ReplyT]):
    """A verifying stage's validated reply, with every exchange and tool call it took."""

    value: ReplyT
    calls: tuple[CallRecord, ...]
    tool_calls: tuple[ToolCallRecord, ...] = ()
    steps: int = 1


async def ask_model(
    client: LLMClient,
    stage: str,
    messages: list[Message],
    reply_model: type[ReplyT],
    *,
    toolbox: Toolbox | None,
    max_steps: int,
) -> Answer[ReplyT]:
    """Ask a verifying stage's question: with the repository tools when a toolbox is given.

    Args:
        client: The LLM client.
        stage: The stage's name (``X-Assay-Stage``).
        messages: The conversation.
        reply_model: The reply's model.
        toolbox: The repository tools, or ``None`` for one plain call.
        max_steps: Tool-calling steps an agentic ask may take.

    Returns:
        The answer.

    Raises:
        LLMError: As ``LLMClient.call_stage`` and ``run_agent`` raise them (with the call
            records, and the agent's tool calls: ``assay.llm.agent.tool_calls_of``).
    """
    if toolbox is None:
        call = await client.call_stage(stage, messages, reply_model)
        return Answer(value=call.value, calls=call.calls)
    result = await run_agent(client, stage, messages, reply_model, toolbox, max_steps=max_steps)
    return Answer(
        value=result.value,
        calls=result.calls,
        tool_calls=result.tool_calls,
        steps=result.steps,
    )
