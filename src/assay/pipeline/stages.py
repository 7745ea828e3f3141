"""Every model stage of a round: its ``X-Assay-Stage`` name and the schema of its reply.

One registry, so ``assay schema <stage>`` and the docs list exactly what the pipeline sends.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

from assay.checklists.reply import ChecklistReply
from assay.errors import ConfigError
from assay.eval.judge import JudgeReply
from assay.llm.schemas import DiscoveryReply, model_json_schema_strict
from assay.pipeline.confirm import ConfirmReply
from assay.pipeline.factcheck import FactCheckReply
from assay.pipeline.recheck import RecheckReply
from assay.pipeline.synthesize import SynthesisReply

__all__ = ["STAGE_REPLIES", "reply_schema", "stage_names"]

STAGE_REPLIES: dict[str, type[BaseModel]] = {
    "discover": DiscoveryReply,
    "synthesize": SynthesisReply,
    "confirm": ConfirmReply,
    "fact_check": FactCheckReply,
    "recheck": RecheckReply,
    "checklist": ChecklistReply,
    "judge": JudgeReply,
}
"""In pipeline order; ``judge`` is the evaluation harness's (``assay eval --judge``)."""


def stage_names() -> tuple[str, ...]:
    return tuple(STAGE_REPLIES)


def reply_schema(stage: str) -> dict[str, Any]:
    """The strict JSON schema a stage's reply must follow (what requests send).

    Raises:
        ConfigError: no such stage; the message lists the stages.
    """
    reply_model = STAGE_REPLIES.get(stage)
    if reply_model is None:
        raise ConfigError(f"unknown stage {stage!r}; stages: {', '.join(STAGE_REPLIES)}")
    return copy.deepcopy(model_json_schema_strict(reply_model))
