"""Stage 9, checklists: score the change against the applicable checklist items.

1. Applicability (pure, from the diff's paths) fixes which items count.
2. Deterministic checks decide what they can: analyzer rule hits fail items (the static finding
   represents them), complete checks pass them, built-in checks (tests changed, deleted tests,
   PR description) fail or pass them.
3. The model judges the remaining items, one request per catalog run concurrently, and names
   the representative finding of every failure (also of the built-in failures).
4. Every failing item is linked to exactly one finding; a failure no finding shows creates one
   (from the model's description, else from the check's or the item's own wording), so every
   failure is actionable and appears inline.

Without a model only the deterministic decisions are made; the other items are reported as not
evaluated (``ChecklistOutcome.not_evaluated``) and are not counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assay.checklists.applicability import ApplicableItem, applicable_items
from assay.checklists.catalog import Catalog, Lang
from assay.checklists.deterministic import (
    CheckContext,
    Decision,
    Passed,
    RuleFailed,
    StaticFailed,
    decide,
    first_changed_location,
)
from assay.checklists.judging import JudgeRequest, judge_items
from assay.checklists.outcome import ChecklistOutcome, checklist_links
from assay.checklists.reply import ChecklistItemVerdict, NewChecklistFinding
from assay.diff.types import FileDiff, FileStatus
from assay.errors import LLMError, LLMPending, LLMUnreachable
from assay.llm.client import CallRecord, LLMClient, calls_of
from assay.model import (
    ChecklistItemResult,
    ChecklistReport,
    ChecklistStatus,
    Finding,
    FindingSource,
    PullRequestMeta,
    ReportedFinding,
    Severity,
)

if TYPE_CHECKING:
    from assay.forge.base import RevisionReader

__all__ = ["evaluate_checklists"]

_CATEGORY = "checklist"


async def evaluate_checklists(
    catalogs: Sequence[Catalog],
    *,
    files: Sequence[FileDiff],
    findings: Sequence[ReportedFinding],
    client: LLMClient | None,
    lang: Lang,
    head: RevisionReader,
    pr: PullRequestMeta,
    analyzers_run: Collection[str] = (),
    seed: int | None = None,
) -> ChecklistOutcome:
    """Evaluate the applicable checklist items of a round.

    Args:
        catalogs: The catalogs in use, in group order (``resolve_catalogs``).
        files: The diff (all of it: applicability is decided from every changed path).
        findings: The round's reported findings, in body order; static ones carry ``rule``.
        client: The LLM client, or ``None`` for a static-only review.
        lang: The review's language (item texts, titles, created findings).
        head: The head revision (built-in checks read a few files, e.g. Rust test modules).
        pr: The pull request (its description is checked).
        analyzers_run: ``StaticReport.analyzers_run``: a complete rule check passes an item only
            when its analyzer (``ruff``) actually ran.
        seed: Sent with each model request when given.

    Returns:
        The report (evaluated items; ``M`` = their number), the created findings, the links
        finding id → item ids, the call records, pending requests, and whether a request
        failed.

    Raises:
        LLMUnreachable: No connection to the endpoint (after retries).
    """
    if not files:
        return ChecklistOutcome(report=ChecklistReport())
    applicable = applicable_items(catalogs, files)
    context = CheckContext(
        files=files,
        findings=findings,
        analyzers_run=analyzers_run,
        pr=pr,
        head=head,
        lang=lang,
    )
    decisions = {item.item_id: decide(item, context) for item in applicable}
    replies = _Replies()
    if client is not None:
        requests = _requests(catalogs, applicable, decisions)
        replies = await _ask(requests, client, files, findings, pr, lang, seed)
    return _outcome(catalogs, applicable, decisions, replies, files, findings, lang)


@dataclass
class _Replies:
    """What the model said, and how asking it went (merged over the catalogs' requests)."""

    verdicts: dict[str, ChecklistItemVerdict] = field(default_factory=dict)
    calls: list[CallRecord] = field(default_factory=list)
    pending: list[LLMPending] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _requests(
    catalogs: Sequence[Catalog],
    applicable: Sequence[ApplicableItem],
    decisions: dict[str, Decision | None],
) -> list[JudgeRequest]:
    requests = []
    for catalog in catalogs:
        items = [item for item in applicable if item.catalog is catalog]
        judge = tuple(item for item in items if decisions[item.item_id] is None)
        link = tuple(
            (item, decision.check)
            for item in items
            if isinstance(decision := decisions[item.item_id], RuleFailed)
        )
        if judge or link:
            requests.append(JudgeRequest(catalog=catalog, judge=judge, link=link))
    return requests


async def _ask(
    requests: Sequence[JudgeRequest],
    client: LLMClient,
    files: Sequence[FileDiff],
    findings: Sequence[ReportedFinding],
    pr: PullRequestMeta,
    lang: Lang,
    seed: int | None,
) -> _Replies:
    async def one(request: JudgeRequest) -> _Replies:
        replies = _Replies()
        try:
            verdicts, call = await judge_items(
                request, client, files=files, findings=findings, pr=pr, lang=lang, seed=seed
            )
        except LLMPending as pending:
            replies.calls += calls_of(pending)
            replies.pending.append(pending)
        except LLMUnreachable:
            # No endpoint at all: the round stops with one clear error (as discovery does).
            raise
        except LLMError as error:
            replies.calls += calls_of(error)
            replies.errors.append(f"{request.catalog.name}: {type(error).__name__}: {error}")
        else:
            replies.verdicts.update(verdicts)
            replies.calls += call.calls
        return replies

    merged = _Replies()
    for replies in await asyncio.gather(*(one(request) for request in requests)):
        merged.verdicts.update(replies.verdicts)
        merged.calls += replies.calls
        merged.pending += replies.pending
        merged.errors += replies.errors
    return merged


def _outcome(
    catalogs: Sequence[Catalog],
    applicable: Sequence[ApplicableItem],
    decisions: dict[str, Decision | None],
    replies: _Replies,
    files: Sequence[FileDiff],
    findings: Sequence[ReportedFinding],
    lang: Lang,
) -> ChecklistOutcome:
    known_ids = {finding.id for finding in findings}
    created: dict[str, Finding] = {}
    results: list[ChecklistItemResult] = []
    not_evaluated: list[str] = []

    def create(finding: Finding) -> str:
        finding_id = finding.fingerprint()
        if finding_id not in known_ids:
            created.setdefault(finding_id, finding)
        return finding_id

    for item in applicable:
        decision = decisions[item.item_id]
        verdict = replies.verdicts.get(item.item_id)
        status, finding_id, method = ChecklistStatus.FAIL, None, "llm"
        if isinstance(decision, StaticFailed):
            finding_id, method = decision.finding_id, "static"
        elif isinstance(decision, Passed):
            status, method = ChecklistStatus.PASS, decision.method
        elif isinstance(decision, RuleFailed):
            method = "rule"
            chosen = verdict.finding_id if verdict is not None else None
            if chosen is not None and chosen.strip() in known_ids:
                finding_id = chosen.strip()
            else:
                finding_id = create(_rule_finding(item, decision))
        elif verdict is None:
            not_evaluated.append(item.item_id)
            continue
        elif verdict.status == "pass":
            status = ChecklistStatus.PASS
        else:
            finding_id = _representative(verdict, known_ids) or create(
                _model_finding(item, verdict, files, lang)
            )
        results.append(
            ChecklistItemResult(
                item_id=item.item_id,
                checklist=item.catalog.name,
                label=item.label,
                section=item.section_title(lang),
                text=item.text(lang),
                status=status,
                finding_id=finding_id,
                method=method,
            )
        )

    in_report = [c for c in catalogs if any(item.catalog is c for item in applicable)]
    report = ChecklistReport(
        checklists=tuple(catalog.name for catalog in in_report),
        checklist_titles=tuple(catalog.catalog.title.get(lang) for catalog in in_report),
        items=tuple(results),
    )
    return ChecklistOutcome(
        report=report,
        new_findings=tuple(created.values()),
        links=checklist_links(report),
        calls=tuple(replies.calls),
        pending=tuple(replies.pending),
        failed=bool(replies.errors),
        error="\n".join(replies.errors) or None,
        applicable=len(applicable),
        not_evaluated=tuple(not_evaluated),
    )


def _representative(verdict: ChecklistItemVerdict, known_ids: set[str]) -> str | None:
    chosen = (verdict.finding_id or "").strip()
    return chosen if chosen in known_ids else None


def _rule_finding(item: ApplicableItem, failed: RuleFailed) -> Finding:
    return Finding(
        severity=Severity(item.item.severity),
        category=_CATEGORY,
        title=failed.title,
        path=failed.path,
        line=failed.line,
        side=failed.side,
        evidence=failed.evidence,
        suggestion=failed.suggestion,
        source=FindingSource.STATIC,
        rule=f"checklist:{failed.check}",
    )


def _model_finding(
    item: ApplicableItem,
    verdict: ChecklistItemVerdict,
    files: Sequence[FileDiff],
    lang: Lang,
) -> Finding:
    """The finding for a failure the model linked to no existing finding."""
    described = verdict.new_finding
    reason = verdict.reason.strip()
    if described is not None and described.title.strip():
        path, line = _location(described, files)
        return Finding(
            severity=Severity(described.severity),
            category=_CATEGORY,
            title=" ".join(described.title.split()),
            path=path,
            line=line,
            evidence=described.evidence.strip() or reason,
            suggestion=described.suggestion.strip(),
            source=FindingSource.LLM,
        )
    path, line = first_changed_location(files)
    text = item.text(lang)
    if lang == "zh":
        title = f"未满足清单项：{text}"
        evidence = reason or "清单评估判定本次改动未满足该条目，但未给出具体位置。"
        suggestion = f"按清单项要求调整本次改动：{text}"
    else:
        title = f"Checklist item not met: {text}"
        evidence = reason or (
            "The checklist evaluation judged that the change does not meet this item but named "
            "no location."
        )
        suggestion = f"Bring the change in line with the checklist item: {text}"
    return Finding(
        severity=Severity(item.item.severity),
        category=_CATEGORY,
        title=title,
        path=path,
        line=line,
        evidence=evidence,
        suggestion=suggestion,
        source=FindingSource.LLM,
    )


def _location(described: NewChecklistFinding, files: Sequence[FileDiff]) -> tuple[str, int]:
    """The model's location when it names a file of the diff, else the first changed line."""
    path = described.path.strip().replace("\\", "/").removeprefix("./").lstrip("/")
    if any(file.path == path and file.status is not FileStatus.DELETED for file in files):
        return path, described.line
    return first_changed_location(files)
