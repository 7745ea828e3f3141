"""A scripted OpenAI-compatible server on loopback, for tests, simulations and benchmarks.

Example::

    from assay.testing import ScriptedLLMServer, json_reply

    with ScriptedLLMServer(lambda request: json_reply({"findings": []})) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        ...

See ``docs/testing.md``.
"""

from __future__ import annotations

from assay.testing._reply import (
    Fault,
    FaultKind,
    LatencyModel,
    Reply,
    ReplyFunction,
    ReplyValue,
    ToolCall,
    json_reply,
    tool_call_reply,
)
from assay.testing._request import ChatRequest
from assay.testing._script import ScriptEntry, script_by_stage
from assay.testing._server import ScriptedLLMServer

__all__ = [
    "ChatRequest",
    "Fault",
    "FaultKind",
    "LatencyModel",
    "Reply",
    "ReplyFunction",
    "ReplyValue",
    "ScriptEntry",
    "ScriptedLLMServer",
    "ToolCall",
    "json_reply",
    "script_by_stage",
    "tool_call_reply",
]

# Reprs and tracebacks name the public module, not the private one (as httpx does).
for _public in (
    ChatRequest,
    Fault,
    FaultKind,
    LatencyModel,
    Reply,
    ScriptedLLMServer,
    ToolCall,
    json_reply,
    script_by_stage,
    tool_call_reply,
):
    _public.__module__ = __name__
del _public
