"""Ask the model to judge checklist items: one request per catalog, its prompt and its reply.

The prompt is laid out for the providers' prefix caches: instructions, then the PR's metadata,
diff and findings (identical for every catalog of the round), then the catalog's items last.
Everything from the pull request (metadata, diff, and findings, which reviewers wrote from it)
is delimited as untrusted data; the items come from the catalogs (shipped, or the repository's
base revision) and are the instructions.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.checklists.applicability import ApplicableItem
from assay.checklists.catalog import Catalog, Lang
from assay.checklists.reply import STAGE, ChecklistItemVerdict, ChecklistReply, reply_model_for
from assay.diff.types import FileDiff
from assay.llm._prompting import (
    content_nonce,
    format_diff_for_model,
    render_prompt,
    untrusted_block,
)
from assay.llm.client import LLMClient, Message, StageCall
from assay.llm.schemas import model_json_schema_strict
from assay.model import PullRequestMeta, ReportedFinding

__all__ = ["JudgeRequest", "build_checklist_messages", "judge_items"]

_DESCRIPTION_LIMIT = 4000
_EVIDENCE_LIMIT = 600
_DEFAULT_DIFF_LIMIT = 240_000


@dataclass(frozen=True)
class JudgeRequest:
    """What one catalog's request asks: items to judge, and failed items to link."""

    catalog: Catalog
    judge: tuple[ApplicableItem, ...]
    """Items only the model can decide."""
    link: tuple[tuple[ApplicableItem, str], ...]
    """Items a built-in check failed (with the check's name): only the representative is asked."""

    @property
    def item_ids(self) -> frozenset[str]:
        return frozenset(item.item_id for item in self.judge) | frozenset(
            item.item_id for item, _ in self.link
        )


async def judge_items(
    request: JudgeRequest,
    client: LLMClient,
    *,
    files: Sequence[FileDiff],
    findings: Sequence[ReportedFinding],
    pr: PullRequestMeta,
    lang: Lang,
    seed: int | None = None,
    max_diff_chars: int = _DEFAULT_DIFF_LIMIT,
) -> tuple[dict[str, ChecklistItemVerdict], StageCall[ChecklistReply]]:
    """Ask the model about one catalog's items.

    Args:
        request: The items.
        client: The LLM client.
        files: The diff.
        findings: The round's findings (their ids are what the model may link to).
        pr: The pull request.
        lang: The language of the reasons and of any new finding.
        seed: Sent with the request when given.
        max_diff_chars: The diff text is cut here (with a note) to bound the request.

    Returns:
        The verdicts by item id (the first one per id; ids not asked about are dropped) and the
        stage call (its records).

    Raises:
        LLMError: As ``LLMClient.call_stage`` raises (``LLMPending`` in batch export).
    """
    messages = build_checklist_messages(
        request, files=files, findings=findings, pr=pr, lang=lang, max_diff_chars=max_diff_chars
    )
    call = await client.call_stage(STAGE, messages, reply_model_for(request.item_ids), seed=seed)
    verdicts: dict[str, ChecklistItemVerdict] = {}
    for result in call.value.results:
        item_id = result.item_id.strip()
        if item_id in request.item_ids and item_id not in verdicts:
            verdicts[item_id] = result
    return verdicts, call


def build_checklist_messages(
    request: JudgeRequest,
    *,
    files: Sequence[FileDiff],
    findings: Sequence[ReportedFinding],
    pr: PullRequestMeta,
    lang: Lang,
    max_diff_chars: int = _DEFAULT_DIFF_LIMIT,
) -> list[Message]:
    """Build ``[system, user]`` for one catalog: the shared part first, the catalog's items last.

    Args:
        request: The items.
        files: The diff.
        findings: The round's findings.
        pr: The pull request.
        lang: The reply's language.
        max_diff_chars: Where the diff text is cut.

    Returns:
        The messages.
    """
    schema = model_json_schema_strict(ChecklistReply)
    schema_json = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    system = render_prompt("checklist.system.j2", lang=lang, schema_json=schema_json)
    metadata = _metadata_text(pr, files)
    diff = _cut(format_diff_for_model([f for f in files if not f.is_binary]), max_diff_chars)
    findings_text = _findings_text(findings)
    nonce = content_nonce(metadata, diff, findings_text)
    ids = [item.item_id for item in request.judge] + [item.item_id for item, _ in request.link]
    user = render_prompt(
        "checklist.user.j2",
        nonce=nonce,
        metadata_block=untrusted_block("pull-request", metadata, nonce),
        diff_block=untrusted_block("diff", diff, nonce),
        findings_block=untrusted_block("findings", findings_text, nonce),
        checklist_title=request.catalog.catalog.title.get(lang),
        judge_items=[_item_view(item, lang) for item in request.judge],
        failed_items=[{**_item_view(item, lang), "check": check} for item, check in request.link],
        count=len(ids),
        ids=ids,
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _item_view(item: ApplicableItem, lang: Lang) -> dict[str, Any]:
    return {
        "id": item.item_id,
        "label": item.label,
        "section": item.section_title(lang),
        "text": item.text(lang),
        "guidance": item.item.guidance or "",
    }


def _metadata_text(pr: PullRequestMeta, files: Sequence[FileDiff]) -> str:
    description = pr.description.strip()
    if len(description) > _DESCRIPTION_LIMIT:
        description = f"{description[:_DESCRIPTION_LIMIT]}\n[description cut]"
    listing = "\n".join(
        f"{number}. {file.path} ({file.status.value}, +{file.added_lines} -{file.removed_lines})"
        for number, file in enumerate(files, start=1)
    )
    return "\n".join(
        [
            f"Title: {pr.title.strip()}",
            f"Branch: {pr.head_ref} -> {pr.base_ref}",
            "Description:",
            description or "(none)",
            f"Files ({len(files)}):",
            listing,
        ]
    )


def _findings_text(findings: Sequence[ReportedFinding]) -> str:
    if not findings:
        return "(no findings)"
    lines = []
    for reported in findings:
        finding = reported.finding
        evidence = " ".join(finding.evidence.split())
        if len(evidence) > _EVIDENCE_LIMIT:
            evidence = evidence[:_EVIDENCE_LIMIT] + " …"
        title = " ".join(finding.title.split())
        lines.append(
            f"id={reported.id} {reported.severity.value} {finding.path}:{finding.line} — {title}"
        )
        if evidence:
            lines.append(f"    evidence: {evidence}")
    return "\n".join(lines)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[diff cut at {limit} characters]"
