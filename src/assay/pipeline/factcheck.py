"""Stage 7b, fact-check: is every fact a blocking candidate rests on true at this head?

A finding's claims are typed (``model.ClaimKind``). Deterministic kinds are checked against the
repository without a model (``_claims``). A free-text claim is first screened: a hedged claim
("probably", "may", "可能" …) or one about code that is not there is unverified without asking
anyone. The remaining free claims of a finding go to one ``fact_check`` stage call (agentic when
a toolbox is given; otherwise the model sees the cited lines, read from the repository).

A finding's verdict: ``refuted`` when any claim is refuted (then its free claims are not sent to
the model: the verdict cannot change); ``hold`` when it has claims and every one is verified;
``parse_fail`` when the stage failed; ``unverified`` otherwise, no claims included. Only
``hold`` lets a finding block (``gate``). Checks run every round against the round's head, so a
carried-over blocker whose facts changed stops blocking.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.errors import AssayError, LLMError, LLMPending, LLMUnreachable
from assay.forge.base import RevisionReader
from assay.llm._prompting import content_nonce, render_prompt, untrusted_block
from assay.llm.agent import tool_calls_of
from assay.llm.client import CallRecord, LLMClient, Message, calls_of
from assay.llm.schemas import model_json_schema_strict
from assay.model import (
    Claim,
    ClaimCheck,
    ClaimStatus,
    FactCheck,
    FactCheckKpi,
    FactCheckVerdict,
    Finding,
)
from assay.pipeline._claims import (
    RevisionText,
    check_deterministic_claim,
    free_claim_obstacle,
)
from assay.pipeline._evidence import ask_model, cited_excerpts, finding_text
from assay.pipeline._spend import StageSpend, total_spend
from assay.tools import Toolbox, ToolCallRecord

__all__ = [
    "MAX_AGENT_STEPS",
    "STAGE",
    "CheckedClaim",
    "FactCheckOutcome",
    "FactCheckReply",
    "build_fact_check_messages",
    "fact_check_findings",
    "fact_check_verdict",
]

STAGE = "fact_check"
"""The stage's name: its ``X-Assay-Stage`` header and its schema's name."""
MAX_AGENT_STEPS = 8
"""Tool-calling steps an agentic fact-check may take per finding."""
_MAX_REPLY_CLAIMS = 40
_ERROR_CHARS = 300


class CheckedClaim(BaseModel):
    """The model's verdict on one numbered claim."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    claim: int = Field(ge=1, description="The claim's number, as listed.")
    status: Literal["verified", "refuted", "unverified"]
    reason: str = Field(max_length=1000, description="What you saw, citing path:line.")


class FactCheckReply(BaseModel):
    """The fact_check stage's reply: one verdict per listed claim."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    claims: list[CheckedClaim] = Field(max_length=_MAX_REPLY_CLAIMS)


@dataclass(frozen=True, kw_only=True)
class FactCheckOutcome(StageSpend):
    """The fact-checks of a batch of findings, parallel to the findings given.

    A finding whose request is pending (batch export) reads ``unverified`` meanwhile.
    """

    fact_checks: tuple[FactCheck, ...]
    kpi: FactCheckKpi


@dataclass
class _Result:
    fact_check: FactCheck
    calls: tuple[CallRecord, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    pending: tuple[LLMPending, ...] = ()
    failure: str | None = None


@dataclass(frozen=True)
class _Prepared:
    """A finding's checks as far as they go without a model (``None``: ask the model)."""

    checks: tuple[ClaimCheck | None, ...]
    excerpts: str = ""
    skip_model: str | None = None
    """Why the model is not asked about the remaining free claims."""
    asked: tuple[int, ...] = field(default=())

    @property
    def needs_model(self) -> bool:
        return bool(self.asked) and self.skip_model is None


async def fact_check_findings(
    findings: Sequence[Finding],
    *,
    head: RevisionReader,
    base: RevisionReader,
    client: LLMClient | None,
    toolbox: Toolbox | None = None,
    lang: str,
    round_index: int,
    max_steps: int = MAX_AGENT_STEPS,
) -> FactCheckOutcome:
    """Fact-check every finding's claims against this round's head (and base).

    Args:
        findings: The findings to check (the gate's P0/P1 candidates, carried blockers included).
        head: The head revision.
        base: The base revision (claims with ``revision="base"``).
        client: The LLM client for free-text claims; ``None``: they stay unverified.
        toolbox: Repository tools: the free-claim check is agentic (``run_agent``).
        lang: ``"en"`` or ``"zh"``: the language of the model's reasons.
        round_index: The round, recorded on each ``FactCheck``.
        max_steps: Tool-calling steps per agentic check.

    Returns:
        One ``FactCheck`` per finding (same order), the KPI, call records, pending requests.

    Raises:
        LLMUnreachable: No connection to the endpoint (it carries the call records).
    """
    head_text, base_text = RevisionText(head, "head"), RevisionText(base, "base")
    # File reads (git) and scans are blocking work: one worker thread does all of them.
    prepared = await asyncio.to_thread(
        _prepare_all, findings, head_text, base_text, client is not None
    )
    results = await asyncio.gather(
        *(
            _check_one(finding, ready, client, toolbox, lang, round_index, max_steps)
            for finding, ready in zip(findings, prepared, strict=True)
        )
    )
    fact_checks = tuple(result.fact_check for result in results)
    return FactCheckOutcome(
        fact_checks=fact_checks,
        kpi=FactCheckKpi(
            checked=len(fact_checks),
            hold=_count(fact_checks, FactCheckVerdict.HOLD),
            refuted=_count(fact_checks, FactCheckVerdict.REFUTED),
            parse_fail=_count(fact_checks, FactCheckVerdict.PARSE_FAIL),
        ),
        **vars(total_spend(results, STAGE)),
    )


def fact_check_verdict(checks: Sequence[ClaimCheck]) -> FactCheckVerdict:
    """``refuted`` if any claim is, ``hold`` if there are claims and all are verified, else
    ``unverified`` (a stage failure is the caller's ``parse_fail``)."""
    if any(check.status is ClaimStatus.REFUTED for check in checks):
        return FactCheckVerdict.REFUTED
    if checks and all(check.status is ClaimStatus.VERIFIED for check in checks):
        return FactCheckVerdict.HOLD
    return FactCheckVerdict.UNVERIFIED


def _count(fact_checks: Sequence[FactCheck], verdict: FactCheckVerdict) -> int:
    return sum(1 for fact_check in fact_checks if fact_check.verdict is verdict)


def _prepare_all(
    findings: Sequence[Finding], head: RevisionText, base: RevisionText, has_model: bool
) -> list[_Prepared]:
    return [_prepare(finding, head, base, has_model) for finding in findings]


def _prepare(
    finding: Finding, head: RevisionText, base: RevisionText, has_model: bool
) -> _Prepared:
    checks = [_screen(claim, head, base) for claim in finding.claims]
    asked = tuple(index for index, check in enumerate(checks) if check is None)
    refuted = next(
        (i for i, c in enumerate(checks) if c is not None and c.status is ClaimStatus.REFUTED),
        None,
    )
    skip: str | None = None
    if refuted is not None:
        skip = f"not checked: claim {refuted + 1} is refuted"
    elif not has_model:
        skip = "not checked: no model configured for free-text claims"
    excerpts = ""
    if asked and skip is None:
        claims = [finding.claims[index] for index in asked]
        excerpts = cited_excerpts(finding, head=head, base=base, claims=claims)
    return _Prepared(checks=tuple(checks), excerpts=excerpts, skip_model=skip, asked=asked)


def _screen(claim: Claim, head: RevisionText, base: RevisionText) -> ClaimCheck | None:
    """The claim's check without a model, or ``None`` when the model must judge it."""
    try:
        check = check_deterministic_claim(claim, head=head, base=base)
        if check is not None:
            return check
        obstacle = free_claim_obstacle(claim, head=head, base=base)
    except AssayError as error:
        # A repository that cannot be read makes a claim uncheckable, not the round fail.
        problem = f"could not read the repository: {error}"[:_ERROR_CHARS]
        return _unverified(claim, problem, method="deterministic")
    return None if obstacle is None else _unverified(claim, obstacle, method="deterministic")


def _unverified(
    claim: Claim, detail: str, *, method: Literal["deterministic", "llm"] = "llm"
) -> ClaimCheck:
    return ClaimCheck(claim=claim, status=ClaimStatus.UNVERIFIED, detail=detail, method=method)


async def _check_one(
    finding: Finding,
    prepared: _Prepared,
    client: LLMClient | None,
    toolbox: Toolbox | None,
    lang: str,
    round_index: int,
    max_steps: int,
) -> _Result:
    if not prepared.needs_model or client is None:
        checks = _fill(finding, prepared, prepared.skip_model or "", "deterministic")
        fact_check = FactCheck(
            verdict=fact_check_verdict(checks), checks=checks, round_index=round_index
        )
        return _Result(fact_check)
    claims = [finding.claims[index] for index in prepared.asked]
    messages = build_fact_check_messages(
        finding, claims, excerpts=prepared.excerpts, lang=lang, agentic=toolbox is not None
    )
    try:
        answer = await ask_model(
            client, STAGE, messages, FactCheckReply, toolbox=toolbox, max_steps=max_steps
        )
    except LLMPending as pending:
        checks = _fill(finding, prepared, "pending (batch export)", "llm")
        fact_check = FactCheck(
            verdict=fact_check_verdict(checks), checks=checks, round_index=round_index
        )
        return _Result(
            fact_check,
            calls=calls_of(pending),
            tool_calls=tool_calls_of(pending),
            pending=(pending,),
        )
    except LLMUnreachable:
        raise
    except LLMError as error:
        message = f"{type(error).__name__}: {error}"[:_ERROR_CHARS]
        checks = _fill(finding, prepared, f"fact-check failed: {message}", "llm")
        verdict = fact_check_verdict(checks)
        if verdict is not FactCheckVerdict.REFUTED:
            verdict = FactCheckVerdict.PARSE_FAIL
        fact_check = FactCheck(verdict=verdict, checks=checks, round_index=round_index)
        return _Result(
            fact_check, calls=calls_of(error), tool_calls=tool_calls_of(error), failure=message
        )
    by_number: dict[int, CheckedClaim] = {}
    for checked in answer.value.claims:
        by_number.setdefault(checked.claim, checked)
    checks = _fill_from_reply(finding, prepared, by_number)
    fact_check = FactCheck(
        verdict=fact_check_verdict(checks), checks=checks, round_index=round_index
    )
    return _Result(fact_check, calls=answer.calls, tool_calls=answer.tool_calls)


def _fill(
    finding: Finding,
    prepared: _Prepared,
    reason: str,
    method: Literal["deterministic", "llm"],
) -> tuple[ClaimCheck, ...]:
    """The prepared checks, with every claim the model did not answer unverified for ``reason``."""
    return tuple(
        check if check is not None else _unverified(finding.claims[index], reason, method=method)
        for index, check in enumerate(prepared.checks)
    )


def _fill_from_reply(
    finding: Finding, prepared: _Prepared, by_number: dict[int, CheckedClaim]
) -> tuple[ClaimCheck, ...]:
    checks = list(prepared.checks)
    for number, index in enumerate(prepared.asked, start=1):
        claim = finding.claims[index]
        checked = by_number.get(number)
        if checked is None:
            checks[index] = _unverified(claim, "the fact-checker gave no verdict for it")
            continue
        checks[index] = ClaimCheck(
            claim=claim,
            status=ClaimStatus(checked.status),
            detail=" ".join(checked.reason.split()) or "(no reason given)",
            method="llm",
        )
    return tuple(check for check in checks if check is not None)


def build_fact_check_messages(
    finding: Finding,
    claims: Sequence[Claim],
    *,
    excerpts: str,
    lang: str,
    agentic: bool,
) -> list[Message]:
    """Build the ``fact_check`` conversation for one finding's free-text claims.

    Args:
        finding: The finding the claims belong to.
        claims: The claims to check, numbered from 1 in this order.
        excerpts: The cited lines, read from the repository (``_evidence.cited_excerpts``).
        lang: The language of the reasons.
        agentic: The model has repository tools.

    Returns:
        ``[system, user]`` messages.
    """
    schema_json = json.dumps(
        model_json_schema_strict(FactCheckReply), ensure_ascii=False, separators=(",", ":")
    )
    system = render_prompt(
        "fact_check.system.j2", lang=lang, schema_json=schema_json, agentic=agentic
    )
    finding_data = finding_text(finding)
    claims_data = "\n".join(
        f"{number}. {_claim_line(claim)}" for number, claim in enumerate(claims, start=1)
    )
    excerpts_data = excerpts or "(no excerpts)"
    nonce = content_nonce(finding_data, excerpts_data, claims_data)
    user = render_prompt(
        "fact_check.user.j2",
        nonce=nonce,
        finding_block=untrusted_block("finding", finding_data, nonce),
        excerpts_block=untrusted_block("repository-excerpts", excerpts_data, nonce),
        claims_block=untrusted_block("claims", claims_data, nonce),
        count=len(claims),
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _claim_line(claim: Claim) -> str:
    text = " ".join(claim.text.split())
    if not claim.path:
        return text
    where = claim.path if claim.line is None else f"{claim.path}:{claim.line}"
    return f"{text} (cites {where} at {claim.revision})"
