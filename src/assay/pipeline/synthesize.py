"""Stage 5, synthesize: one canonical finding per cluster.

How each cluster becomes one finding (``SynthesizedFinding.synthesized_by``):

- ``single``: one member; it is the finding.
- ``static``: an analyzer is among the members. Its finding stands: title, severity, category,
  location, rule, ``certain_failure`` and claims (all deterministic). The model members add
  only words: the best-supported model member's evidence becomes a second paragraph of the
  evidence, and its suggestion a second line of the suggestion, unless empty or already there.
  Their claims are not taken: a model's claim must not be able to refute a deterministic
  finding.
- ``agreement``: every member argued the same severity and the titles are near-identical
  (``fuzz.ratio`` ≥ 90 after ``utils.default_process``): the representative (the member most
  similar to the others) is the finding, without a model call.
- ``llm``: the members disagree, so the ``synthesize`` stage asks the model for one canonical
  finding. The reply is validated, then held to the members: its severity is clamped into the
  range the members argued (never above the most severe, never below the least severe); its
  location must be a member's file and side with lines inside the members' span there, else
  the representative's location is used; its category must be one a member used, else the
  representative's; its claims are chosen *by id* from the members' claims, so synthesis
  cannot invent one (an empty choice keeps the representative's claims). Each such correction
  is recorded in ``adjustments``.
- ``fallback``: the representative, because the stage failed (invalid or truncated reply, HTTP
  error, blank title: counted in ``synth_fail``), because batch export is waiting for the answer
  (``pending``), or because there is no model (``client is None``; not a failure).

Independent clusters are synthesized concurrently; the client bounds how many requests are in
flight. ``LLMUnreachable`` propagates: without an endpoint every cluster would fail alike.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz, utils

from assay.errors import LLMError, LLMPending, LLMUnreachable
from assay.llm._prompting import content_nonce, render_prompt, untrusted_block
from assay.llm.client import CallRecord, LLMClient, Message, calls_of
from assay.llm.schemas import MAX_CLAIMS, model_json_schema_strict
from assay.model import Claim, Finding, FindingSource, Severity, Side
from assay.pipeline.cluster import Cluster, normalize_path

__all__ = [
    "STAGE",
    "SynthesisOutcome",
    "SynthesisReply",
    "SynthesizedBy",
    "SynthesizedFinding",
    "build_synthesis_messages",
    "synthesize_clusters",
]

STAGE = "synthesize"
"""The stage's name: its ``X-Assay-Stage`` header and its schema's name."""

SynthesizedBy = Literal["single", "static", "agreement", "llm", "fallback"]

_NEAR_IDENTICAL_TITLE = 90.0
_ECHO_CHARS = 80
"""Characters of a rejected model value quoted in an adjustment (model output is untrusted)."""
_SYNTHESIS_TEMPERATURE = 0.0
"""Consolidation is not a search for new defects: the most likely wording is the right one."""


class SynthesisReply(BaseModel):
    """The model's canonical finding for one cluster.

    The finding's fields mirror ``DiscoveredFinding`` (same limits), except claims: the model
    picks them by id from the members' claims instead of writing them, so it cannot invent one.
    """

    # Unknown keys are ignored (a lenient server may add some); they never reach Assay.
    model_config = ConfigDict(frozen=True, extra="ignore")

    severity: Literal["P0", "P1", "P2", "P3"] = Field(
        description="Within the range the reports argued (stated at the end of the request)."
    )
    category: str = Field(max_length=64, description="One of the categories the reports used.")
    title: str = Field(max_length=300, description="One line naming the defect.")
    path: str = Field(max_length=1024, description="The file, as one of the reports gives it.")
    line: int = Field(ge=1, description="A line inside the lines the reports cover.")
    end_line: int | None = Field(
        default=None, ge=1, description="Last line of a range (inclusive), or null."
    )
    side: Literal["RIGHT", "LEFT"] = Field(
        default="RIGHT", description="The side of the report whose location is used."
    )
    evidence: str = Field(
        max_length=4000, description="Why it is a defect, citing path:line of the head."
    )
    suggestion: str = Field(max_length=4000, description="The concrete fix.")
    claim_ids: list[str] = Field(
        default_factory=list,
        max_length=MAX_CLAIMS,
        description='Ids of the reports\' claims the finding rests on, e.g. "2.1".',
    )


@dataclass(frozen=True)
class SynthesizedFinding:
    """A cluster's canonical finding and how it was made."""

    finding: Finding
    votes: int
    """Distinct discovery reps in the cluster (``Cluster.votes``)."""
    members: int
    """Findings in the cluster, static ones included."""
    static: bool
    """An analyzer is among the members."""
    synthesized_by: SynthesizedBy
    adjustments: tuple[str, ...] = ()
    """What validation corrected in the model's reply (``llm`` only), e.g. a clamped severity."""


@dataclass(frozen=True)
class SynthesisOutcome:
    """One canonical finding per cluster, in cluster order, and what it took."""

    findings: tuple[SynthesizedFinding, ...]
    calls: tuple[CallRecord, ...]
    synth_fail: int
    """Clusters whose synthesis failed and fell back to the representative (KPI ``synth_fail``)."""
    pending: tuple[LLMPending, ...]
    """Batch export: the synthesis requests not answered yet."""


@dataclass(frozen=True)
class _ClusterResult:
    finding: SynthesizedFinding
    calls: tuple[CallRecord, ...] = ()
    failed: bool = False
    pending: LLMPending | None = None


async def synthesize_clusters(
    clusters: Sequence[Cluster], client: LLMClient | None, *, lang: str, reps: int
) -> SynthesisOutcome:
    """Make one canonical finding per cluster (see the module docstring for how).

    Args:
        clusters: From :func:`assay.pipeline.cluster.cluster_findings`.
        client: The LLM client; ``None``: no model, every cluster is decided without one.
        lang: ``en`` or ``zh``: the language the model writes in.
        reps: Discovery reps this round (the denominator of the votes, for the prompt).

    Returns:
        The findings in cluster order, every call record (cluster order), the number of failed
        syntheses and the pending requests (batch export).

    Raises:
        LLMUnreachable: No connection to the endpoint (it carries the call records).
    """
    results = await asyncio.gather(
        *(_synthesize_one(cluster, client, lang=lang, reps=reps) for cluster in clusters),
        return_exceptions=True,
    )
    # Raised after every task has finished, in cluster order, so no call is left running.
    for result in results:
        if isinstance(result, BaseException):
            raise result
    done = [result for result in results if isinstance(result, _ClusterResult)]
    return SynthesisOutcome(
        findings=tuple(result.finding for result in done),
        calls=tuple(call for result in done for call in result.calls),
        synth_fail=sum(result.failed for result in done),
        pending=tuple(result.pending for result in done if result.pending is not None),
    )


def build_synthesis_messages(cluster: Cluster, *, lang: str, reps: int) -> list[Message]:
    """Build the synthesis conversation: instructions (the same for every cluster), then the
    cluster's members as one untrusted JSON block and the severity range they argued.

    Args:
        cluster: The cluster to consolidate.
        lang: ``en`` or ``zh``.
        reps: Discovery reps this round.

    Returns:
        ``[system, user]`` messages.
    """
    schema_json = json.dumps(
        model_json_schema_strict(SynthesisReply), ensure_ascii=False, separators=(",", ":")
    )
    system = render_prompt("synthesize.system.j2", lang=lang, schema_json=schema_json)
    reports = json.dumps(
        [_report(number, member) for number, member in enumerate(cluster.members, start=1)],
        ensure_ascii=False,
        indent=1,
    )
    nonce = content_nonce(reports)
    user = render_prompt(
        "synthesize.user.j2",
        member_count=len(cluster.members),
        votes=cluster.votes,
        reps=reps,
        nonce=nonce,
        reports_block=untrusted_block("reports", reports, nonce),
        most_severe=cluster.max_severity.value,
        least_severe=_least_severe(cluster).value,
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


async def _synthesize_one(
    cluster: Cluster, client: LLMClient | None, *, lang: str, reps: int
) -> _ClusterResult:
    if len(cluster.members) == 1:
        return _ClusterResult(_wrap(cluster, cluster.members[0], "single"))
    if cluster.static:
        return _ClusterResult(_wrap(cluster, _merge_static(cluster), "static"))
    if _members_agree(cluster):
        return _ClusterResult(_wrap(cluster, cluster.representative, "agreement"))
    fallback = _wrap(cluster, cluster.representative, "fallback")
    if client is None:
        return _ClusterResult(fallback)
    messages = build_synthesis_messages(cluster, lang=lang, reps=reps)
    try:
        call = await client.call_stage(
            STAGE, messages, SynthesisReply, temperature=_SYNTHESIS_TEMPERATURE
        )
    except LLMPending as pending:
        return _ClusterResult(fallback, calls=calls_of(pending), pending=pending)
    except LLMUnreachable:
        raise
    except LLMError as error:
        return _ClusterResult(fallback, calls=calls_of(error), failed=True)
    built = _from_reply(call.value, cluster)
    if built is None:
        return _ClusterResult(fallback, calls=call.calls, failed=True)
    finding, adjustments = built
    return _ClusterResult(_wrap(cluster, finding, "llm", adjustments), calls=call.calls)


def _wrap(
    cluster: Cluster, finding: Finding, how: SynthesizedBy, adjustments: tuple[str, ...] = ()
) -> SynthesizedFinding:
    return SynthesizedFinding(
        finding=finding,
        votes=cluster.votes,
        members=len(cluster.members),
        static=cluster.static,
        synthesized_by=how,
        adjustments=adjustments,
    )


def _members_agree(cluster: Cluster) -> bool:
    if len(cluster.severities) != 1:
        return False
    titles = [utils.default_process(member.title) for member in cluster.members]
    return all(
        fuzz.ratio(first, second) >= _NEAR_IDENTICAL_TITLE
        for index, first in enumerate(titles)
        for second in titles[index + 1 :]
    )


def _merge_static(cluster: Cluster) -> Finding:
    """The analyzer's finding, with the best model member's words added where they add any."""
    static = cluster.representative
    model_members = tuple(m for m in cluster.members if m.source is FindingSource.LLM)
    if not model_members:
        return static
    explained = Cluster(members=model_members).representative
    return static.model_copy(
        update={
            "evidence": _append_paragraph(static.evidence, explained.evidence, "\n\n"),
            "suggestion": _append_paragraph(static.suggestion, explained.suggestion, "\n"),
        }
    )


def _append_paragraph(base: str, addition: str, separator: str) -> str:
    addition = addition.strip()
    if not addition or _folded(addition) in _folded(base):
        return base
    return f"{base.rstrip()}{separator}{addition}" if base.strip() else addition


def _from_reply(reply: SynthesisReply, cluster: Cluster) -> tuple[Finding, tuple[str, ...]] | None:
    """The canonical finding the reply describes, held to the members; ``None``: unusable."""
    title = " ".join(reply.title.split())
    if not title:
        return None
    representative = cluster.representative
    adjustments: list[str] = []

    severity = _clamp_severity(Severity(reply.severity), cluster)
    if severity.value != reply.severity:
        adjustments.append(f"severity {reply.severity} clamped to {severity.value}")

    location = _member_location(reply, cluster)
    if location is None:
        adjustments.append(
            f"location {reply.path[:_ECHO_CHARS]}:{reply.line} ({reply.side}) is not a member's; "
            "kept the representative's"
        )
        location = (
            representative.path,
            representative.line,
            representative.end_line,
            representative.side,
        )
    path, line, end_line, side = location

    category = "-".join(reply.category.strip().lower().split())
    if category not in {member.category for member in cluster.members}:
        adjustments.append(
            f"category {reply.category[:_ECHO_CHARS]!r} is not a member's; "
            "kept the representative's"
        )
        category = representative.category

    claims, unknown = _chosen_claims(reply.claim_ids, cluster)
    if unknown:
        adjustments.append(f"ignored unknown claim ids: {', '.join(unknown)}")
    if not claims:
        claims = representative.claims

    evidence = reply.evidence.strip() or representative.evidence
    suggestion = reply.suggestion.strip() or representative.suggestion
    finding = Finding(
        severity=severity,
        category=category,
        title=title,
        path=path,
        line=line,
        end_line=end_line,
        side=side,
        evidence=evidence,
        suggestion=suggestion,
        claims=claims,
        source=FindingSource.LLM,
        rep=None,  # it speaks for every rep of the cluster
    )
    return finding, tuple(adjustments)


def _clamp_severity(severity: Severity, cluster: Cluster) -> Severity:
    most, least = cluster.max_severity, _least_severe(cluster)
    if severity.rank < most.rank:
        return most
    if severity.rank > least.rank:
        return least
    return severity


def _least_severe(cluster: Cluster) -> Severity:
    return cluster.severities[-1]


def _member_location(
    reply: SynthesisReply, cluster: Cluster
) -> tuple[str, int, int | None, Side] | None:
    """The reply's location if it lies in a member's file and side, within the members' span."""
    path, side = normalize_path(reply.path), Side(reply.side)
    same_place = [
        member
        for member in cluster.members
        if normalize_path(member.path) == path and member.side is side
    ]
    if not same_place:
        return None
    low = min(member.line for member in same_place)
    high = max(max(member.line, member.end_line or member.line) for member in same_place)
    end_line = (
        reply.end_line if reply.end_line is not None and reply.end_line > reply.line else None
    )
    if not low <= reply.line <= high or (end_line is not None and end_line > high):
        return None
    return same_place[0].path, reply.line, end_line, side


def _chosen_claims(
    claim_ids: Sequence[str], cluster: Cluster
) -> tuple[tuple[Claim, ...], list[str]]:
    by_id = {
        f"{number}.{index}": claim
        for number, member in enumerate(cluster.members, start=1)
        for index, claim in enumerate(member.claims, start=1)
    }
    chosen: list[Claim] = []
    unknown: list[str] = []
    for claim_id in claim_ids:
        claim = by_id.get(claim_id.strip())
        if claim is None:
            unknown.append(claim_id.strip()[:_ECHO_CHARS])
        elif claim not in chosen:
            chosen.append(claim)
    return tuple(chosen), unknown


def _report(number: int, member: Finding) -> dict[str, Any]:
    """One member as the prompt shows it (its claims numbered ``<report>.<claim>``)."""
    return {
        "report": number,
        "reporter": _reporter(member),
        "severity": member.severity.value,
        "category": member.category,
        "path": member.path,
        "line": member.line,
        "end_line": member.end_line,
        "side": member.side.value,
        "title": member.title,
        "evidence": member.evidence,
        "suggestion": member.suggestion,
        "claims": [
            {
                "id": f"{number}.{index}",
                "kind": claim.kind.value,
                "text": claim.text,
                "path": claim.path,
                "line": claim.line,
                "needle": claim.needle,
                "count": claim.count,
            }
            for index, claim in enumerate(member.claims, start=1)
        ],
    }


def _reporter(member: Finding) -> str:
    if member.source is FindingSource.STATIC:
        return f"static analyzer {member.rule or ''}".strip()
    return f"reviewer {member.rep + 1}" if member.rep is not None else "reviewer"


def _folded(text: str) -> str:
    return " ".join(text.lower().split())
