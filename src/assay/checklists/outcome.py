"""What the checklist stage returns, and how its links are put on the round's findings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from assay.checklists.catalog import Lang
from assay.errors import LLMPending
from assay.llm.client import CallRecord
from assay.model import ChecklistItemResult, ChecklistReport, Finding, ReportedFinding

__all__ = [
    "ChecklistOutcome",
    "checklist_links",
    "entry_text",
    "link_findings",
    "remap_finding_ids",
]


@dataclass(frozen=True)
class ChecklistOutcome:
    """The checklist stage's result for one round.

    ``report.items`` holds every applicable item that was evaluated (statically, by a built-in
    rule or by the model), so ``report.total`` is ``M`` and ``len(report.failed)`` is ``N``.
    With a model and no failure every applicable item is evaluated and ``M == applicable``,
    a number decided by the diff alone. Items nobody could evaluate (no model configured, the
    model call failed, batch export pending) are listed in ``not_evaluated`` and not counted:
    a review never reports an unexamined item as passed.
    """

    report: ChecklistReport
    new_findings: tuple[Finding, ...] = ()
    """Findings created for failing items that no finding of the round shows. Their ids in
    ``links`` and in ``report`` are ``Finding.fingerprint()``."""
    links: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Finding id → ids of the failing items it represents, in the review body's order."""
    calls: tuple[CallRecord, ...] = ()
    pending: tuple[LLMPending, ...] = ()
    """Batch export: requests the replay cache could not answer yet."""
    failed: bool = False
    """A model request failed: its catalog's model-judged items are not evaluated."""
    error: str | None = None
    """Why it failed (one line per failed request)."""
    applicable: int = 0
    """Applicable items, evaluated or not."""
    not_evaluated: tuple[str, ...] = ()
    """Ids of applicable items left unevaluated (not counted in ``report.total``)."""

    def not_evaluated_note(self, lang: Lang) -> str | None:
        """A one-line note for the review's coverage notes, or ``None`` when all were evaluated.

        Args:
            lang: ``en`` or ``zh``.
        """
        count = len(self.not_evaluated)
        if not count:
            return None
        if lang == "zh":
            return (
                f"Checklist：{self.applicable} 个适用条目中有 {count} 个未评估（需要模型判断），"
                f"未计入 {self.report.total} total。"
            )
        return (
            f"Checklists: {count} of {self.applicable} applicable items were not evaluated (they "
            f"need a model) and are not counted in the {self.report.total} total."
        )


def entry_text(item: ChecklistItemResult) -> str:
    """``[<label>] <section> — <item text>``: the body entry, and its sort key within a group."""
    return f"[{item.label}] {item.section} — {item.text}"


def checklist_links(report: ChecklistReport) -> dict[str, tuple[str, ...]]:
    """Finding id → ids of the failing items it represents, in the review body's order.

    The body's order is the group order (``report.checklists``) and, within a group, the code
    point order of ``entry_text``; the inline ``Checklist:`` line lists a finding's items in it.

    Args:
        report: A checklist report.

    Returns:
        The links (failing items without a finding, which the stage never produces, are skipped).
    """
    groups = {name: index for index, name in enumerate(report.checklists)}
    ordered_items = sorted(
        report.failed, key=lambda item: (groups.get(item.checklist, len(groups)), entry_text(item))
    )
    links: dict[str, list[str]] = {}
    for item in ordered_items:
        if item.finding_id is not None:
            links.setdefault(item.finding_id, []).append(item.item_id)
    return {finding_id: tuple(item_ids) for finding_id, item_ids in links.items()}


def link_findings(
    findings: Sequence[ReportedFinding], links: Mapping[str, tuple[str, ...]]
) -> tuple[ReportedFinding, ...]:
    """Set each finding's ``checklist_items`` from the stage's links (others get none).

    Args:
        findings: The round's reported findings (the created ones included, once reported).
        links: ``ChecklistOutcome.links``.

    Returns:
        The findings, in the same order.
    """
    return tuple(
        finding.model_copy(update={"checklist_items": tuple(links.get(finding.id, ()))})
        for finding in findings
    )


def remap_finding_ids(outcome: ChecklistOutcome, ids: Mapping[str, str]) -> ChecklistOutcome:
    """Rename finding ids in the report and the links (when the round reports a finding under
    another id than the one the stage used, e.g. a created finding merged into a stable id).

    Args:
        outcome: The stage's outcome.
        ids: Old id → new id; ids not in it stay.

    Returns:
        The outcome with renamed ids (links of ids that merge are concatenated, without repeats).
    """
    items = tuple(
        item.model_copy(update={"finding_id": ids.get(item.finding_id, item.finding_id)})
        if item.finding_id is not None
        else item
        for item in outcome.report.items
    )
    links: dict[str, tuple[str, ...]] = {}
    for finding_id, item_ids in outcome.links.items():
        target = ids.get(finding_id, finding_id)
        links[target] = tuple(dict.fromkeys((*links.get(target, ()), *item_ids)))
    report = outcome.report.model_copy(update={"items": items})
    return replace(outcome, report=report, links=links)
