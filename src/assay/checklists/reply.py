"""The model's reply to the checklist stage (``X-Assay-Stage: checklist``).

Strict-schema friendly like ``assay.llm.schemas``: every key present, optional values nullable,
limits stated in descriptions and enforced here. One result per item asked; a reply that leaves
an item out is re-asked (the validation error names the missing ids), so the number of evaluated
items, ``M total``, never depends on how diligent the model was.
"""

from __future__ import annotations

import functools
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "MAX_RESULTS",
    "STAGE",
    "ChecklistItemVerdict",
    "ChecklistReply",
    "NewChecklistFinding",
    "reply_model_for",
]

STAGE = "checklist"
"""The stage's name: its ``X-Assay-Stage`` header and its schema's name."""

MAX_RESULTS = 200


class _Reply(BaseModel):
    # Unknown keys are ignored (lenient servers add some); they never reach Assay.
    model_config = ConfigDict(frozen=True, extra="ignore")


class NewChecklistFinding(_Reply):
    """A defect the round's findings do not cover, shown by a failing checklist item."""

    severity: Literal["P2", "P3"] = Field(
        description="P2: a real gap with conditional impact; P3: hygiene."
    )
    title: str = Field(max_length=300, description="One line naming the defect.")
    path: str = Field(
        max_length=1024, description="A file of the diff, as its FILE header shows it."
    )
    line: int = Field(ge=1, description="A head line number of that file (the second column).")
    evidence: str = Field(
        max_length=4000, description="Why the change fails the item, citing path:line."
    )
    suggestion: str = Field(max_length=4000, description="The concrete fix.")


class ChecklistItemVerdict(_Reply):
    """The judgement of one checklist item."""

    item_id: str = Field(max_length=64, description="The item's id exactly as listed.")
    status: Literal["pass", "fail"]
    finding_id: str | None = Field(
        default=None,
        max_length=64,
        description=(
            "For a fail: the id of the ONE listed finding that best shows the failure; null "
            "when none does. Null for a pass."
        ),
    )
    new_finding: NewChecklistFinding | None = Field(
        default=None,
        description="For a fail that no listed finding shows: the finding to add. Else null.",
    )
    reason: str = Field(
        default="",
        max_length=1000,
        description="One sentence: why the item fails (may be empty for a pass).",
    )


class ChecklistReply(_Reply):
    """The judgements of the checklist items asked for."""

    results: list[ChecklistItemVerdict] = Field(max_length=MAX_RESULTS)


@functools.lru_cache(maxsize=256)
def reply_model_for(item_ids: frozenset[str]) -> type[ChecklistReply]:
    """A ``ChecklistReply`` that also requires a result for every one of ``item_ids``.

    The JSON schema is the same as ``ChecklistReply``'s (validators do not change it), so the
    request and its replay-cache key do not depend on this class; an incomplete reply fails
    validation and the client re-asks, quoting the missing ids.

    Args:
        item_ids: The ids the request asks about.

    Returns:
        The reply model to validate with.
    """

    class CompleteChecklistReply(ChecklistReply):
        @model_validator(mode="after")
        def _every_item_answered(self) -> CompleteChecklistReply:
            answered = {result.item_id.strip() for result in self.results}
            missing = sorted(item_ids - answered)
            if missing:
                raise ValueError(
                    f"missing results for item ids {', '.join(missing)}: give exactly one "
                    "result for every item id listed"
                )
            return self

    return CompleteChecklistReply
