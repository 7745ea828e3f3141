"""What a verifying stage spent, summed over the findings it checked one by one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from assay.errors import LLMPending
from assay.llm.client import CallRecord
from assay.model import StageFailure
from assay.tools import ToolCallRecord

__all__ = ["CheckSpend", "StageSpend", "total_spend"]


class CheckSpend(Protocol):
    """One finding's check: its exchanges, tool calls, pending requests and failure."""

    @property
    def calls(self) -> tuple[CallRecord, ...]: ...

    @property
    def tool_calls(self) -> tuple[ToolCallRecord, ...]: ...

    @property
    def pending(self) -> tuple[LLMPending, ...]: ...

    @property
    def failure(self) -> str | None: ...


@dataclass(frozen=True, kw_only=True)
class StageSpend:
    """The calls, tool calls, pending requests and failures of a whole stage."""

    calls: tuple[CallRecord, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    """In finding order (failed checks included)."""
    pending: tuple[LLMPending, ...] = ()
    """Batch export: requests not answered yet."""
    failures: tuple[StageFailure, ...] = ()


def total_spend(results: Sequence[CheckSpend], stage: str) -> StageSpend:
    """Sum per-finding checks; a failure is named ``stage[index]`` after the finding's place."""
    return StageSpend(
        calls=tuple(call for result in results for call in result.calls),
        tool_calls=tuple(tool_call for result in results for tool_call in result.tool_calls),
        pending=tuple(pending for result in results for pending in result.pending),
        failures=tuple(
            StageFailure(stage=f"{stage}[{index}]", error=result.failure)
            for index, result in enumerate(results)
            if result.failure is not None
        ),
    )
