"""Stage 8, recheck: every earlier open finding this round did not find again, against the new head.

Each gets one status (``RecheckStatus``):

- ``fixed``: the code was changed to address it; the proof cites current lines;
- ``still_open``: it is still there; it is carried into this round's findings, moved to its
  current location;
- ``cannot_substantiate``: the code it talks about is gone, or its claims no longer hold;
- ``fail``: the recheck itself errored; the finding stays open (carried, like still_open).

Cheap, certain answers come first, so rounds work fully without a model:

1. the file does not exist at the new head → ``cannot_substantiate`` ("file X does not exist at
   head <sha12>");
2. a static-analysis finding is rechecked by its analyzer: this round's static findings are
   passed in; the same rule near the same place → ``still_open``, else ``fixed`` ("ruff no
   longer reports F821 at path:line");
3. its lines (and the head lines its claims cite) are unchanged since the previous reviewed
   head (the line map keeps them, adjacent, so their text is identical) → ``still_open``;
4. otherwise the model decides (stage ``recheck``, reply ``RecheckReply``), from the finding, the
   changes to its file since the previous head and the current code;
5. without a model, such a finding stays open unchecked: ``still_open`` in the KPI (nothing shows
   it closed) and listed in ``RecheckOutcome.unchecked``, so the caller can say so.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from assay.diff import anchor_to_diff
from assay.diff.linemap import LineMap
from assay.diff.types import FileDiff, Side
from assay.errors import LLMError, LLMPending, LLMUnreachable
from assay.forge.base import RevisionReader
from assay.llm._prompting import (
    content_nonce,
    format_diff_for_model,
    render_prompt,
    untrusted_block,
)
from assay.llm.client import CallRecord, LLMClient, Message, calls_of
from assay.llm.schemas import model_json_schema_strict
from assay.model import (
    ClosedFinding,
    Finding,
    FindingSource,
    RecheckKpi,
    RecheckStatus,
    ReportedFinding,
    StageFailure,
)
from assay.pipeline._evidence import ask_model
from assay.pipeline.match import analyzer_name
from assay.tools import Toolbox

__all__ = [
    "MAX_AGENT_STEPS",
    "STAGE",
    "RecheckMethod",
    "RecheckOutcome",
    "RecheckReply",
    "RecheckResult",
    "build_recheck_messages",
    "recheck_open_findings",
]

STAGE = "recheck"
"""The stage's name: its ``X-Assay-Stage`` header and its schema's name."""

RecheckMethod = Literal["deleted", "static", "unchanged", "llm", "none"]
"""How a status was reached: a deterministic shortcut, the model, or nothing (no model)."""

STATIC_LINES = 3
"""A static finding is still reported when its rule fires within this many lines of it."""
EXCERPT_RADIUS = 30
"""Current lines shown on each side of the finding's current location."""
MAX_CHANGES_CHARS = 12_000
"""Characters of the file's changes since the previous head shown to the model."""
MAX_CLAIM_EXCERPTS = 3
"""Other files a finding's claims cite, shown to the model (a few lines each)."""
CLAIM_RADIUS = 5
MAX_AGENT_STEPS = 10
"""Tool-calling steps an agentic recheck may take per finding."""


class RecheckReply(BaseModel):
    """The model's recheck of one finding."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    status: Literal["fixed", "still_open", "cannot_substantiate"] = Field(
        description="fixed: changed to address it; still_open: still present; "
        "cannot_substantiate: the code it is about is gone or its claims do not hold."
    )
    proof: str = Field(
        max_length=2000,
        description="One or two sentences about the current head, citing current line numbers.",
    )
    lines: list[Annotated[int, Field(ge=1)]] = Field(
        default_factory=list,
        max_length=40,
        description="Current line numbers of the finding's file the proof relies on "
        "(at least one for fixed and still_open).",
    )

    @model_validator(mode="after")
    def _cites_current_lines(self) -> Self:
        if not self.proof.strip():
            raise ValueError("the proof is empty")
        if self.status != "cannot_substantiate" and not self.lines:
            raise ValueError(f"status {self.status} needs at least one current line in `lines`")
        return self


@dataclass(frozen=True)
class RecheckResult:
    finding: ReportedFinding
    """The finding as it was (located at the previous reviewed head)."""
    status: RecheckStatus
    proof: str
    method: RecheckMethod
    error: str | None = None
    current_lines: tuple[int, ...] = ()
    """Current lines the proof cites (model answers)."""


@dataclass(frozen=True)
class RecheckOutcome:
    results: tuple[RecheckResult, ...] = ()
    """One per input finding, in input order."""
    still_open: tuple[ReportedFinding, ...] = ()
    """Findings that stay open (``still_open`` and ``fail``), moved to the new head and anchored
    on this round's diff, in input order: add them to this round's findings (and re-gate)."""
    closed: tuple[ClosedFinding, ...] = ()
    """This round's closures: ``fixed`` first, then ``cannot_substantiate``, in input order."""
    calls: tuple[CallRecord, ...] = ()
    pending: tuple[LLMPending, ...] = ()
    """Batch export: unanswered requests; the round is incomplete."""
    failures: tuple[StageFailure, ...] = field(default=())

    @property
    def kpi(self) -> RecheckKpi:
        counts = dict.fromkeys(RecheckStatus, 0)
        for result in self.results:
            counts[result.status] += 1
        return RecheckKpi(
            fixed=counts[RecheckStatus.FIXED],
            still_open=counts[RecheckStatus.STILL_OPEN],
            cannot_substantiate=counts[RecheckStatus.CANNOT_SUBSTANTIATE],
            fail=counts[RecheckStatus.FAIL],
        )

    @property
    def unchecked(self) -> tuple[str, ...]:
        """Ids of findings kept open without any check (no model for a changed location)."""
        return tuple(result.finding.id for result in self.results if result.method == "none")

    def cumulative_closed(self, earlier: Sequence[ClosedFinding]) -> tuple[ClosedFinding, ...]:
        """``RoundResult.closed`` for this round: its closures, then ``earlier`` (newest first).

        Args:
            earlier: The previous round's cumulative list (``RoundResult.closed``).
        """
        ids = {closed.id for closed in self.closed}
        return self.closed + tuple(closed for closed in earlier if closed.id not in ids)


async def recheck_open_findings(
    unmatched_open: Sequence[ReportedFinding],
    *,
    line_map: LineMap | None,
    head: RevisionReader,
    head_sha: str,
    pr_files: Sequence[FileDiff],
    client: LLMClient | None,
    static_findings_now: Sequence[Finding] | None,
    round_index: int,
    lang: Literal["en", "zh"] = "en",
    toolbox: Toolbox | None = None,
    max_steps: int = MAX_AGENT_STEPS,
) -> RecheckOutcome:
    """Recheck earlier open findings against the new head.

    Args:
        unmatched_open: The PR's open findings that this round did not match, located at the
            previous reviewed head (``MatchOutcome.unmatched_open``).
        line_map: Previous reviewed head → this head; ``None`` when the previous head no longer
            exists (then only the file-deleted and static shortcuts apply without a model).
        head: Reads files at this head.
        head_sha: This head's commit (12 hex digits of it appear in proofs).
        pr_files: This round's full diff (merge-base → head), to anchor carried findings.
        client: The model; ``None`` runs the deterministic shortcuts only.
        static_findings_now: This round's static findings, or ``None`` when static analysis
            did not run (or failed): static findings are then rechecked like the others.
        round_index: This round's number (``closed_round`` of closures).
        lang: The language of proofs.
        toolbox: Repository tools at this head (``assay.tools.Toolbox``) for an agentic
            recheck, or ``None``: the model then sees the excerpts only.
        max_steps: Tool-calling steps an agentic recheck may take per finding.

    Returns:
        Every finding's status and proof, the carried and closed findings, the KPI counts, the
        model calls, pending requests (batch export) and failures.

    Raises:
        LLMUnreachable: No connection to the model endpoint.
    """
    context = _Context(
        line_map=line_map,
        head=head,
        head12=head_sha[:12],
        client=client,
        static_now=static_findings_now,
        round_index=round_index,
        lang=lang,
        toolbox=toolbox,
        max_steps=max_steps,
    )
    checked = await asyncio.gather(
        *(_recheck_one(previous, context) for previous in unmatched_open)
    )
    results = tuple(result for result, _calls, _pending in checked)
    carried = tuple(
        _carry(result, line_map, pr_files)
        for result in results
        if result.status in (RecheckStatus.STILL_OPEN, RecheckStatus.FAIL)
    )
    closures = [
        _closure(result, round_index)
        for wanted in (RecheckStatus.FIXED, RecheckStatus.CANNOT_SUBSTANTIATE)
        for result in results
        if result.status is wanted
    ]
    return RecheckOutcome(
        results=results,
        still_open=carried,
        closed=tuple(closures),
        calls=tuple(call for _result, calls, _pending in checked for call in calls),
        pending=tuple(pending for _result, _calls, pending in checked if pending is not None),
        failures=tuple(
            StageFailure(stage=f"recheck[{result.finding.id}]", error=result.error)
            for result in results
            if result.status is RecheckStatus.FAIL and result.error and result.error != _PENDING
        ),
    )


@dataclass(frozen=True)
class _Context:
    line_map: LineMap | None
    head: RevisionReader
    head12: str
    client: LLMClient | None
    static_now: Sequence[Finding] | None
    round_index: int
    lang: Literal["en", "zh"]
    toolbox: Toolbox | None
    max_steps: int


_Checked = tuple[RecheckResult, tuple[CallRecord, ...], LLMPending | None]
_PENDING = "pending (batch export)"


async def _recheck_one(previous: ReportedFinding, context: _Context) -> _Checked:
    finding = previous.finding
    text = _PROOFS[context.lang]
    path_now = _path_now(finding, context.line_map)
    if path_now is None or not context.head.exists(path_now):
        proof = text["deleted"].format(path=path_now or finding.path, head=context.head12)
        return _done(previous, RecheckStatus.CANNOT_SUBSTANTIATE, proof, "deleted")
    line_now = _line_now(finding, context.line_map)
    if finding.source is FindingSource.STATIC and context.static_now is not None:
        return _static_recheck(previous, path_now, line_now, context)
    if _unchanged(finding, context.line_map):
        lines = _span(finding, context.line_map)
        proof = text["unchanged"].format(path=path_now, lines=lines, head=context.head12)
        return _done(previous, RecheckStatus.STILL_OPEN, proof, "unchanged")
    if context.client is None:
        return _done(previous, RecheckStatus.STILL_OPEN, text["unchecked"], "none")
    return await _model_recheck(previous, path_now, line_now, context.client, context)


def _done(
    previous: ReportedFinding, status: RecheckStatus, proof: str, method: RecheckMethod
) -> _Checked:
    return RecheckResult(previous, status, proof, method), (), None


def _path_now(finding: Finding, line_map: LineMap | None) -> str | None:
    if line_map is None:
        return finding.path
    return line_map.path_at_new(finding.path)


def _line_now(finding: Finding, line_map: LineMap | None) -> int:
    if line_map is None or finding.side is not Side.RIGHT:
        return finding.line
    moved = line_map.nearest(finding.path, finding.line)
    return moved.line if moved is not None else finding.line


def _span(finding: Finding, line_map: LineMap | None) -> str:
    start = _line_now(finding, line_map)
    end = start + (finding.end_line or finding.line) - finding.line
    return f"{start}-{end}" if end > start else f"{start}"


def _unchanged(finding: Finding, line_map: LineMap | None) -> bool:
    """Its lines, and the head lines its claims cite, are all kept as they were."""
    if line_map is None or finding.side is not Side.RIGHT:
        return False
    if not line_map.range_unchanged(finding.path, finding.line, finding.end_line):
        return False
    return all(
        line_map.map_line(claim.path, claim.line) is not None
        for claim in finding.claims
        if claim.revision == "head" and claim.path and claim.line is not None
    )


def _static_recheck(
    previous: ReportedFinding, path_now: str, line_now: int, context: _Context
) -> _Checked:
    finding = previous.finding
    analyzer = _analyzer(finding.rule, context.lang)
    rule = finding.rule or "?"
    still = next(
        (
            now
            for now in context.static_now or ()
            if now.rule == finding.rule
            and now.path == path_now
            and abs(now.line - line_now) <= STATIC_LINES
        ),
        None,
    )
    text = _PROOFS[context.lang]
    if still is not None:
        proof = text["static_open"].format(
            analyzer=analyzer, rule=rule, path=path_now, line=still.line, head=context.head12
        )
        return _done(previous, RecheckStatus.STILL_OPEN, proof, "static")
    proof = text["static_fixed"].format(
        analyzer=analyzer, rule=rule, path=path_now, line=line_now, head=context.head12
    )
    return _done(previous, RecheckStatus.FIXED, proof, "static")


def _analyzer(rule: str | None, lang: str) -> str:
    name = analyzer_name(rule)
    return _ANALYZER_NAMES_ZH.get(name, name) if lang == "zh" else name


async def _model_recheck(
    previous: ReportedFinding,
    path_now: str,
    line_now: int,
    client: LLMClient,
    context: _Context,
) -> _Checked:
    content = context.head.read(path_now) or b""
    current = content.decode("utf-8", errors="replace").splitlines()
    messages = build_recheck_messages(
        previous,
        path_now=path_now,
        line_now=line_now,
        current_lines=current,
        changes=context.line_map.file_diff(previous.finding.path) if context.line_map else None,
        previous_head_known=context.line_map is not None,
        claim_excerpts=_claim_excerpts(previous.finding, path_now, context.head),
        head12=context.head12,
        round_index=context.round_index,
        lang=context.lang,
        agentic=context.toolbox is not None,
    )
    try:
        answer = await ask_model(
            client,
            STAGE,
            messages,
            RecheckReply,
            toolbox=context.toolbox,
            max_steps=context.max_steps,
        )
    except LLMPending as pending:
        result = RecheckResult(previous, RecheckStatus.FAIL, "", "llm", error=_PENDING)
        return result, calls_of(pending), pending
    except LLMUnreachable:
        # No endpoint at all: every recheck would fail alike; the run stops with one error.
        raise
    except LLMError as error:
        result = RecheckResult(
            previous, RecheckStatus.FAIL, "", "llm", error=f"{type(error).__name__}: {error}"
        )
        return result, calls_of(error), None
    reply = answer.value
    beyond = [line for line in reply.lines if line > len(current)]
    if beyond:
        # A proof about lines the file does not have proves nothing: the finding stays open.
        problem = f"the proof cites line {beyond[0]} but {path_now} has {len(current)} lines"
        failed = RecheckResult(previous, RecheckStatus.FAIL, "", "llm", error=problem)
        return failed, answer.calls, None
    result = RecheckResult(
        previous,
        RecheckStatus(reply.status),
        " ".join(reply.proof.split()),
        "llm",
        current_lines=tuple(sorted(set(reply.lines))),
    )
    return result, answer.calls, None


def build_recheck_messages(
    previous: ReportedFinding,
    *,
    path_now: str,
    line_now: int,
    current_lines: Sequence[str],
    changes: FileDiff | None,
    previous_head_known: bool,
    claim_excerpts: Sequence[tuple[str, str]] = (),
    head12: str,
    round_index: int,
    lang: Literal["en", "zh"] = "en",
    agentic: bool = False,
) -> list[Message]:
    """Build the recheck conversation for one finding: instructions, then the data.

    Args:
        previous: The finding, located at the previous reviewed head.
        path_now: Its file's path at the current head.
        line_now: Where its line is (or was replaced) at the current head.
        current_lines: The file at the current head, split into lines.
        changes: The file's diff previous head → current head (``None``: unchanged or unknown).
        previous_head_known: ``False`` when the previous head is gone (changes are unknown).
        claim_excerpts: ``(label, numbered text)`` of other files the finding's claims cite.
        head12: The current head's short sha.
        round_index: This round.
        lang: The language of the proof.
        agentic: The model has repository tools.

    Returns:
        ``[system, user]`` messages.
    """
    schema = model_json_schema_strict(RecheckReply)
    schema_json = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    system = render_prompt("recheck.system.j2", lang=lang, schema_json=schema_json, agentic=agentic)
    finding_text = _finding_text(previous)
    changes_text = _changes_text(changes, previous_head_known)
    start = max(1, line_now - EXCERPT_RADIUS)
    end = min(len(current_lines), line_now + EXCERPT_RADIUS)
    code_texts = [
        (f"{path_now}, current lines {start}-{end}", _numbered(current_lines, start, end))
    ]
    code_texts += list(claim_excerpts)
    nonce = content_nonce(finding_text, changes_text, *(text for _label, text in code_texts))
    user = render_prompt(
        "recheck.user.j2",
        head=head12,
        nonce=nonce,
        finding_block=untrusted_block("finding", finding_text, nonce),
        changes_block=untrusted_block("changes-since-previous-head", changes_text, nonce),
        code_blocks=[
            untrusted_block("current-code", f"{label}\n{text}", nonce) for label, text in code_texts
        ],
        first_seen_round=previous.first_seen_round,
        round_index=round_index,
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _finding_text(previous: ReportedFinding) -> str:
    finding = previous.finding
    location = f"{finding.path}:{finding.line}"
    if finding.end_line is not None and finding.end_line > finding.line:
        location += f"-{finding.end_line}"
    lines = [
        f"Title: {finding.title}",
        f"Severity: {previous.severity.value}",
        f"Category: {finding.category}",
        f"Location at the previous head: {location} ({finding.side.value})",
        f"Evidence: {finding.evidence or '(none)'}",
        f"Suggestion: {finding.suggestion or '(none)'}",
    ]
    if finding.rule:
        lines.append(f"Analyzer rule: {finding.rule}")
    for claim in finding.claims:
        where = f" [{claim.path}:{claim.line}]" if claim.path and claim.line else ""
        lines.append(f"Claim ({claim.kind.value}){where}: {claim.text}")
    return "\n".join(lines)


def _changes_text(changes: FileDiff | None, previous_head_known: bool) -> str:
    if not previous_head_known:
        return "(unknown: the previously reviewed head no longer exists)"
    if changes is None:
        return "(the file did not change since the previous reviewed head)"
    text = format_diff_for_model([changes])
    if len(text) > MAX_CHANGES_CHARS:
        text = f"{text[:MAX_CHANGES_CHARS]}\n[changes cut at {MAX_CHANGES_CHARS} characters]"
    return text


def _numbered(lines: Sequence[str], start: int, end: int) -> str:
    if end < start:
        return "(the file is empty)"
    width = len(str(end))
    return "\n".join(f"{number:>{width}} | {lines[number - 1]}" for number in range(start, end + 1))


def _claim_excerpts(finding: Finding, path_now: str, head: RevisionReader) -> list[tuple[str, str]]:
    excerpts: list[tuple[str, str]] = []
    seen: set[tuple[str, int]] = set()
    for claim in finding.claims:
        if len(excerpts) >= MAX_CLAIM_EXCERPTS:
            break
        if not claim.path or claim.line is None or claim.path in (path_now, finding.path):
            continue
        if (claim.path, claim.line) in seen:
            continue
        seen.add((claim.path, claim.line))
        content = head.read(claim.path)
        if content is None:
            excerpts.append((claim.path, "(this file does not exist at the current head)"))
            continue
        lines = content.decode("utf-8", errors="replace").splitlines()
        start = max(1, claim.line - CLAIM_RADIUS)
        end = min(len(lines), claim.line + CLAIM_RADIUS)
        excerpts.append(
            (f"{claim.path}, current lines {start}-{end}", _numbered(lines, start, end))
        )
    return excerpts


def _carry(
    result: RecheckResult, line_map: LineMap | None, pr_files: Sequence[FileDiff]
) -> ReportedFinding:
    """The finding moved to the new head: path, lines, claims, anchor, on_changed_line."""
    previous = result.finding
    finding = previous.finding
    if line_map is None or finding.side is not Side.RIGHT:
        path, line, end_line, changed = finding.path, finding.line, finding.end_line, False
    else:
        exact = line_map.map_line(finding.path, finding.line)
        nearest = line_map.nearest(finding.path, finding.line)
        path = line_map.path_at_new(finding.path) or finding.path
        if exact is not None:
            line = exact.line
            end_line = _mapped_end(finding, line_map, exact.line)
        elif result.current_lines:
            line, end_line = result.current_lines[0], None
        else:
            line, end_line = (nearest.line if nearest else finding.line), None
        changed = line in line_map.added_lines(path)
    claims = tuple(
        claim.model_copy(update={"path": moved.path, "line": moved.line})
        if line_map is not None
        and claim.revision == "head"
        and claim.path
        and claim.line is not None
        and (moved := line_map.map_line(claim.path, claim.line)) is not None
        else claim
        for claim in finding.claims
    )
    moved_finding = finding.model_copy(
        update={"path": path, "line": line, "end_line": end_line, "claims": claims}
    )
    return previous.model_copy(
        update={
            "finding": moved_finding,
            "anchor": anchor_to_diff(path, line, finding.side, pr_files, end_line=end_line),
            "on_changed_line": changed,
        }
    )


def _mapped_end(finding: Finding, line_map: LineMap, line: int) -> int | None:
    if finding.end_line is None or finding.end_line <= finding.line:
        return None
    end = line_map.map_line(finding.path, finding.end_line)
    return end.line if end is not None and end.line >= line else None


def _closure(result: RecheckResult, round_index: int) -> ClosedFinding:
    previous = result.finding
    return ClosedFinding(
        id=previous.id,
        title=previous.finding.title,
        severity=previous.severity,
        path=previous.finding.path,
        line=previous.finding.line,
        status=result.status,
        proof=result.proof,
        first_seen_round=previous.first_seen_round,
        closed_round=round_index,
    )


_ANALYZER_NAMES_ZH = {"the import check": "导入检查"}

_PROOFS: dict[str, dict[str, str]] = {
    "en": {
        "deleted": (
            "file {path} does not exist at head {head}; the code the finding is about was "
            "deleted with it."
        ),
        "static_fixed": "{analyzer} no longer reports {rule} at {path}:{line} (head {head}).",
        "static_open": "{analyzer} still reports {rule} at {path}:{line} (head {head}).",
        "unchanged": "{path} lines {lines} are unchanged since the previous round (head {head}).",
        "unchecked": "not rechecked: no model is configured and the code it cites changed.",
    },
    "zh": {
        "deleted": "文件 {path} 在当前 head {head} 不存在，原发现所指的代码已随文件删除而消失。",
        "static_fixed": "{analyzer} 在当前 head {head} 的 {path}:{line} 已不再报告 {rule}。",
        "static_open": "{analyzer} 在当前 head {head} 的 {path}:{line} 仍报告 {rule}。",
        "unchanged": "{path} 第 {lines} 行自上一轮以来未改动（head {head}）。",
        "unchecked": "未复核：未配置模型，且所引用的代码已改动。",
    },
}
