"""The simulator's configuration and what a stage responder receives."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from assay.eval.cases import EvalCase, TruthDefect
from assay.testing import ChatRequest, ReplyValue
from assay.testing._request import message_text

__all__ = ["Responder", "SimulatedCase", "SimulatorConfig", "StageContext", "digest"]


class SimulatorConfig(BaseModel):
    """How good (and how bad) the simulated reviewer is.

    Example::

        SimulatorConfig(recall=0.5, fp_rate=2.0, seed=3)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    recall: float = Field(default=0.6, ge=0, le=1)
    """Probability that one discovery rep reports a given defect."""
    fp_rate: float = Field(default=1.0, ge=0, le=20)
    """False findings per discovery rep and case, on average."""
    fp_shared: float = Field(default=0.3, ge=0, le=1)
    """Share of false findings drawn from the case's few plausible decoys (the same remark at
    the same place in every rep that draws it), the rest scattered over the changed lines."""
    decoys: int = Field(default=3, ge=0, le=20)
    """Plausible decoys per case."""
    fp_false_claim: float = Field(default=0.5, ge=0, le=1)
    """Probability that a false finding rests on a checkable claim that is false (so a
    deterministic fact-check can refute it); otherwise its claims are true but beside the
    point and only a model check can refute it."""
    line_jitter: int = Field(default=2, ge=0, le=50)
    """Largest offset, in lines, between a reported and the true location."""
    line_jitter_rate: float = Field(default=0.3, ge=0, le=1)
    """Probability that a report cites the wrong line (off by 1 to ``line_jitter`` lines);
    otherwise it cites the true line."""
    severity_noise: float = Field(default=0.2, ge=0, le=1)
    """Probability that a true defect is reported one severity level off."""
    category_noise: float = Field(default=0.1, ge=0, le=1)
    """Probability that a true defect is filed under a neighbouring category."""
    wording_variants: int = Field(default=4, ge=1, le=4)
    """How many phrasings of a title the reps choose from (1: every rep words it alike)."""
    check_error_rate: float = Field(default=0.1, ge=0, le=1)
    """Probability that confirm, fact-check, recheck or the judge answers wrongly."""
    seed: int = 0
    ttft_s: float = Field(default=0.0, ge=0)
    """Simulated time to first token, per request."""
    tokens_per_s: float | None = Field(default=None, gt=0)
    """Simulated decoding speed; ``None`` for instant replies."""

    @property
    def model_name(self) -> str:
        """The model id the simulator serves: names the whole configuration.

        Replay-cache keys include the model, so two configurations never share answers.
        """
        reviewer = self.model_dump(exclude={"ttft_s", "tokens_per_s"})
        digest = hashlib.sha256(json.dumps(reviewer, sort_keys=True).encode()).hexdigest()
        return f"assay-sim-{digest[:12]}"


@dataclass(frozen=True)
class SimulatedCase:
    """What the simulator knows about the case under review."""

    name: str
    defects: tuple[TruthDefect, ...]

    @classmethod
    def of(cls, case: EvalCase) -> SimulatedCase:
        return cls(name=case.name, defects=case.defects)


@dataclass(frozen=True)
class StageContext:
    """Everything a responder may use to answer one request."""

    request: ChatRequest
    case: SimulatedCase
    config: SimulatorConfig
    rng: random.Random
    """Seeded by the configuration's seed, the stage and the request body."""

    @property
    def user_text(self) -> str:
        """Every user message's text (a re-ask keeps the first question in an earlier one)."""
        return "\n".join(
            message_text(message.get("content"))
            for message in self.request.messages
            if message.get("role") == "user"
        )

    def case_rng(self, *parts: object) -> random.Random:
        """A generator that depends on the seed, the case and ``parts`` only (not the request):
        for what every rep should agree on, like the case's decoys."""
        return random.Random(digest(self.config.seed, self.case.name, *parts))


Responder = Callable[[StageContext], ReplyValue]
"""Answers one request of one stage."""


def digest(*parts: object) -> int:
    """A 64-bit seed from ``parts`` (stable across runs and machines, unlike ``hash``)."""
    text = "\x1f".join(str(part) for part in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
