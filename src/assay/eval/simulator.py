"""A noisy simulated reviewer: an OpenAI-compatible server on loopback that knows the truth.

The simulator answers every stage of a review from the case's known defects, with the noise of
a real model, so the ensemble's value can be measured without one: each discovery rep finds each
defect with probability ``recall``, adds ``fp_rate`` false findings on average (a share of them
"plausible" decoys that every rep tends to repeat, the rest scattered), words its findings
differently from rep to rep, cites a wrong line (off by up to ``line_jitter``) with probability
``line_jitter_rate``, and misjudges severity with probability ``severity_noise``. The check
stages (confirm, fact-check, recheck, the eval judge) answer consistently with the truth, wrong
with probability ``check_error_rate``.

Reproducible: every random draw comes from a generator seeded by the simulator's ``seed``, the
stage and the whole request body, so the same seed and request give the same answer (and a
different rep, whose request differs, draws independently).

The simulator reviews one case at a time: :meth:`SimulatedEndpoint.review` points it at the case
under review (cases are reviewed one after the other). A stage it has no responder for is
answered with HTTP 500 and recorded in :attr:`SimulatedEndpoint.errors`, so a new stage shows up
as a failure instead of a silent default. A responder is one small function
``(StageContext) -> reply`` (in ``_sim_discover`` or ``_sim_checks``); add it to
:data:`RESPONDERS`.

Example::

    config = SimulatorConfig(recall=0.6, fp_rate=1.0, seed=7)
    with SimulatedEndpoint(config) as endpoint:
        endpoint.review(SimulatedCase.of(case))
        ...  # point the review at endpoint.base_url with model endpoint.model
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Mapping
from types import TracebackType

from assay.eval._sim_checks import (
    respond_checklist,
    respond_confirm,
    respond_fact_check,
    respond_judge,
    respond_recheck,
    respond_synthesize,
)
from assay.eval._sim_context import (
    Responder,
    SimulatedCase,
    SimulatorConfig,
    StageContext,
    digest,
)
from assay.eval._sim_discover import respond_discover
from assay.testing import ChatRequest, LatencyModel, ReplyValue, ScriptedLLMServer

__all__ = [
    "RESPONDERS",
    "NoisyReviewer",
    "Responder",
    "SimulatedCase",
    "SimulatedEndpoint",
    "SimulatorConfig",
    "StageContext",
]


RESPONDERS: Mapping[str, Responder] = {
    "checklist": respond_checklist,
    "confirm": respond_confirm,
    "discover": respond_discover,
    "fact_check": respond_fact_check,
    "judge": respond_judge,
    "recheck": respond_recheck,
    "synthesize": respond_synthesize,
}
"""Stage name → responder, for every stage the simulator answers."""


class NoisyReviewer:
    """The simulator's reply function: routes each request to its stage's responder."""

    def __init__(
        self, config: SimulatorConfig, responders: Mapping[str, Responder] | None = None
    ) -> None:
        self.config = config
        self._responders = dict(responders if responders is not None else RESPONDERS)
        self._case: SimulatedCase | None = None
        self._unanswered: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def stages(self) -> tuple[str, ...]:
        """The stages this reviewer answers, sorted."""
        return tuple(sorted(self._responders))

    @property
    def case(self) -> SimulatedCase | None:
        with self._lock:
            return self._case

    @case.setter
    def case(self, case: SimulatedCase | None) -> None:
        with self._lock:
            self._case = case

    @property
    def unanswered(self) -> dict[str, int]:
        """Requests refused because no responder knows their stage, by stage."""
        with self._lock:
            return dict(self._unanswered)

    def __call__(self, request: ChatRequest) -> ReplyValue:
        case = self.case
        if case is None:
            raise LookupError("the simulator is not reviewing any case; call review(case) first")
        stage = request.stage or ""
        responder = self._responders.get(stage)
        if responder is None:
            with self._lock:
                self._unanswered[stage] = self._unanswered.get(stage, 0) + 1
            raise LookupError(
                f"the simulator has no responder for stage {stage!r}; it answers {self.stages}"
            )
        body = json.dumps(request.body, sort_keys=True, ensure_ascii=False, default=str)
        rng = random.Random(digest(self.config.seed, stage, body))
        return responder(StageContext(request=request, case=case, config=self.config, rng=rng))


class SimulatedEndpoint:
    """The simulator as a running OpenAI-compatible endpoint on 127.0.0.1."""

    def __init__(
        self, config: SimulatorConfig, responders: Mapping[str, Responder] | None = None
    ) -> None:
        self.config = config
        self.reviewer = NoisyReviewer(config, responders)
        latency = (
            LatencyModel(ttft_s=config.ttft_s, tokens_per_s=config.tokens_per_s)
            if config.ttft_s or config.tokens_per_s
            else None
        )
        self._server = ScriptedLLMServer(
            self.reviewer, models=(config.model_name,), latency=latency
        )

    def start(self) -> SimulatedEndpoint:
        self._server.start()
        return self

    def close(self) -> None:
        self._server.close()

    def __enter__(self) -> SimulatedEndpoint:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        exc_traceback: TracebackType | None,
    ) -> None:
        self.close()

    def review(self, case: SimulatedCase | None) -> None:
        """Answer the following requests as a reviewer of ``case``."""
        self.reviewer.case = case

    @property
    def base_url(self) -> str:
        return self._server.base_url

    @property
    def model(self) -> str:
        return self.config.model_name

    @property
    def request_count(self) -> int:
        return self._server.request_count

    @property
    def server(self) -> ScriptedLLMServer:
        """The underlying scripted server (requests, faults)."""
        return self._server

    @property
    def unanswered(self) -> dict[str, int]:
        """Requests refused because no responder knows their stage, by stage."""
        return self.reviewer.unanswered

    @property
    def errors(self) -> list[BaseException]:
        """Requests the simulator could not answer (unknown stage, responder bug)."""
        return self._server.errors
