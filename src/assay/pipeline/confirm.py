"""Stage 7a, confirm: a second look at each blocking candidate, trying to refute it.

Every P0/P1 cluster with enough support is re-examined by the ``confirm`` stage (agentic when a
toolbox is given: it reads the repository with the tools; otherwise it sees the cited lines,
read from the head revision). The model is asked to look for the reason the finding is wrong
before it accepts it. Candidates are confirmed concurrently (the client bounds the requests in
flight). A stage error is a ``failed`` confirmation, and a finding whose confirmation failed
cannot block: nothing blocks unexamined.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.errors import LLMError, LLMPending, LLMUnreachable
from assay.forge.base import RevisionReader
from assay.llm._prompting import content_nonce, render_prompt, untrusted_block
from assay.llm.agent import tool_calls_of
from assay.llm.client import CallRecord, LLMClient, Message, calls_of
from assay.llm.schemas import model_json_schema_strict
from assay.model import (
    Confirmation,
    ConfirmKpi,
    ConfirmVerdict,
    Finding,
)
from assay.pipeline._claims import RevisionText
from assay.pipeline._evidence import ask_model, cited_excerpts, finding_text
from assay.pipeline._spend import StageSpend, total_spend
from assay.tools import Toolbox, ToolCallRecord

__all__ = [
    "MAX_AGENT_STEPS",
    "STAGE",
    "ConfirmOutcome",
    "ConfirmReply",
    "build_confirm_messages",
    "confirm_candidates",
]

STAGE = "confirm"
"""The stage's name: its ``X-Assay-Stage`` header and its schema's name."""
MAX_AGENT_STEPS = 10
"""Tool-calling steps an agentic confirmation may take per candidate."""
_ERROR_CHARS = 300


class ConfirmReply(BaseModel):
    """The confirm stage's reply: is the finding real, at P0/P1 severity?"""

    model_config = ConfigDict(frozen=True, extra="ignore")

    verdict: Literal["confirmed", "refuted"] = Field(
        description="confirmed: the defect is real and P0/P1; refuted: it is not (say why)."
    )
    reason: str = Field(max_length=1500, description="One to three sentences citing path:line.")


@dataclass(frozen=True, kw_only=True)
class ConfirmOutcome(StageSpend):
    """The confirmations of a batch of candidates, parallel to the candidates given.

    A candidate whose request is pending (batch export) reads ``failed`` meanwhile.
    """

    confirmations: tuple[Confirmation, ...]
    kpi: ConfirmKpi


@dataclass(frozen=True)
class _Result:
    confirmation: Confirmation
    calls: tuple[CallRecord, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    pending: tuple[LLMPending, ...] = ()
    failure: str | None = None


async def confirm_candidates(
    candidates: Sequence[Finding],
    *,
    client: LLMClient,
    toolbox: Toolbox | None,
    lang: str,
    head: RevisionReader,
    base: RevisionReader | None = None,
    max_steps: int = MAX_AGENT_STEPS,
) -> ConfirmOutcome:
    """Try to refute each blocking candidate; return one ``Confirmation`` per candidate.

    Args:
        candidates: P0/P1 findings with enough support (carried blockers included).
        client: The LLM client.
        toolbox: Repository tools for an agentic check (``run_agent``), or ``None``.
        lang: ``"en"`` or ``"zh"``: the language of the reasons.
        head: The head revision (the cited lines shown to the model are read from it).
        base: The base revision, for findings about removed lines (optional).
        max_steps: Tool-calling steps per agentic check.

    Returns:
        Confirmations in candidate order; KPI ``candidates``, ``to_block`` (confirmed) and
        ``confirm_fail`` (stage errors); call records and pending requests.

    Raises:
        LLMUnreachable: No connection to the endpoint (it carries the call records).
    """
    head_text = RevisionText(head, "head")
    base_text = RevisionText(base, "base") if base is not None else None
    # Reading the cited lines is blocking git work: one worker thread does all of it.
    excerpts = await asyncio.to_thread(
        lambda: [cited_excerpts(finding, head=head_text, base=base_text) for finding in candidates]
    )
    results = await asyncio.gather(
        *(
            _confirm_one(finding, excerpt, client, toolbox, lang, max_steps)
            for finding, excerpt in zip(candidates, excerpts, strict=True)
        )
    )
    confirmations = tuple(result.confirmation for result in results)
    counted = [result for result in results if not result.pending]
    return ConfirmOutcome(
        confirmations=confirmations,
        kpi=ConfirmKpi(
            candidates=len(candidates),
            to_block=sum(1 for r in counted if r.confirmation.verdict is ConfirmVerdict.CONFIRMED),
            confirm_fail=sum(1 for r in counted if r.confirmation.verdict is ConfirmVerdict.FAILED),
        ),
        **vars(total_spend(results, STAGE)),
    )


async def _confirm_one(
    finding: Finding,
    excerpts: str,
    client: LLMClient,
    toolbox: Toolbox | None,
    lang: str,
    max_steps: int,
) -> _Result:
    messages = build_confirm_messages(
        finding, excerpts=excerpts, lang=lang, agentic=toolbox is not None
    )
    try:
        answer = await ask_model(
            client, STAGE, messages, ConfirmReply, toolbox=toolbox, max_steps=max_steps
        )
    except LLMPending as pending:
        confirmation = Confirmation(verdict=ConfirmVerdict.FAILED, reason="pending (batch export)")
        return _Result(
            confirmation,
            calls=calls_of(pending),
            tool_calls=tool_calls_of(pending),
            pending=(pending,),
        )
    except LLMUnreachable:
        raise
    except LLMError as error:
        message = f"{type(error).__name__}: {error}"[:_ERROR_CHARS]
        confirmation = Confirmation(verdict=ConfirmVerdict.FAILED, reason=message)
        return _Result(
            confirmation, calls=calls_of(error), tool_calls=tool_calls_of(error), failure=message
        )
    reply = answer.value
    reason = " ".join(reply.reason.split()) or "(no reason given)"
    confirmation = Confirmation(verdict=ConfirmVerdict(reply.verdict), reason=reason)
    return _Result(confirmation, calls=answer.calls, tool_calls=answer.tool_calls)


def build_confirm_messages(
    finding: Finding, *, excerpts: str, lang: str, agentic: bool
) -> list[Message]:
    """Build the ``confirm`` conversation for one candidate.

    Args:
        finding: The candidate.
        excerpts: The lines it cites, read from the repository (``_evidence.cited_excerpts``).
        lang: The language of the reason.
        agentic: The model has repository tools.

    Returns:
        ``[system, user]`` messages.
    """
    schema_json = json.dumps(
        model_json_schema_strict(ConfirmReply), ensure_ascii=False, separators=(",", ":")
    )
    system = render_prompt("confirm.system.j2", lang=lang, schema_json=schema_json, agentic=agentic)
    finding_data = finding_text(finding)
    excerpts_data = excerpts or "(no excerpts)"
    nonce = content_nonce(finding_data, excerpts_data)
    user = render_prompt(
        "confirm.user.j2",
        nonce=nonce,
        finding_block=untrusted_block("finding", finding_data, nonce),
        excerpts_block=untrusted_block("repository-excerpts", excerpts_data, nonce),
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
