"""Reply functions built from data: route on the stage header, consume lists in order."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from assay.testing._reply import ReplyFunction, ReplyValue
from assay.testing._request import ChatRequest

__all__ = ["ScriptEntry", "script_by_stage"]

ScriptEntry: TypeAlias = ReplyValue | list[Any] | Callable[[ChatRequest], ReplyValue]
"""One stage's script: a reply value answered every time, a list of reply values answered
one per request in order, or a reply function."""


class _StageScript:
    """One entry of a script; lists are consumed under a lock (requests arrive concurrently)."""

    def __init__(self, label: str, entry: ScriptEntry) -> None:
        self._label = label
        self._entry = entry
        self._queue: deque[ReplyValue] | None = deque(entry) if isinstance(entry, list) else None
        self._answered = 0
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> ReplyValue:
        if self._queue is not None:
            with self._lock:
                if not self._queue:
                    raise LookupError(
                        f"the script for {self._label} is exhausted after {self._answered} replies"
                    )
                self._answered += 1
                return self._queue.popleft()
        if callable(self._entry):
            return self._entry(request)
        return self._entry


def script_by_stage(
    routes: Mapping[str, ScriptEntry], *, default: ScriptEntry | None = None
) -> ReplyFunction:
    """Return a reply function that answers by the request's ``X-Assay-Stage`` header.

    Each entry is a reply value (a Reply, Fault, ``str``, dict or pydantic model) answered
    every time, a ``list`` of reply values answered one per request in order, or a reply
    function. A JSON array as content therefore needs :func:`json_reply`.

    Args:
        routes: Stage name → entry.
        default: The entry for requests whose stage is missing or not in ``routes``.

    Returns:
        The reply function. A request it cannot answer (unknown stage without ``default``,
        exhausted list) raises ``LookupError``, which the server turns into an HTTP 500 and
        records in ``server.errors``.

    Example::

        reply = script_by_stage({
            "discover": [json_reply(first), Fault.status(503), json_reply(second)],
            "synthesize": lambda request: json_reply(synthesize(request)),
        })
    """
    scripts = {stage: _StageScript(f"stage {stage!r}", entry) for stage, entry in routes.items()}
    fallback = _StageScript("the default", default) if default is not None else None

    def reply(request: ChatRequest) -> ReplyValue:
        script = scripts.get(request.stage or "", fallback)
        if script is None:
            raise LookupError(
                f"no script for stage {request.stage!r}; scripted stages: {sorted(scripts)}"
            )
        return script(request)

    return reply
