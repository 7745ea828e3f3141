"""Talking to the model: one client, stage schemas, replay cache, batch files, token estimates.

Example::

    from assay.llm import LLMClient, MemoryReplayCache, LLMSettings

    async with LLMClient(LLMSettings(base_url=url, model="qwen3"), MemoryReplayCache()) as client:
        call = await client.call_stage("discover", messages, DiscoveryReply)
"""

from __future__ import annotations

from assay.llm._prompting import (
    content_nonce,
    format_diff_for_model,
    render_prompt,
    untrusted_block,
)
from assay.llm.batch import (
    BATCH_URL,
    BatchFailure,
    BatchFileError,
    BatchImport,
    import_batch_responses,
    read_batch_responses,
    write_batch_requests,
)
from assay.llm.cache import (
    REQUEST_KEY_VERSION,
    CachedExchange,
    MemoryReplayCache,
    ReplayCache,
    canonical_request_json,
    request_key,
)
from assay.llm.client import (
    STAGE_HEADER,
    CallRecord,
    ClientMode,
    Completion,
    LLMClient,
    Message,
    StageCall,
    calls_of,
)
from assay.llm.schemas import (
    STAGE_SCHEMAS,
    DiscoveredClaim,
    DiscoveredFinding,
    DiscoveredStrength,
    DiscoveryReply,
    model_json_schema_strict,
    stage_json_schema,
    stage_names,
    to_finding,
    to_strength,
)
from assay.llm.settings import LLMSettings
from assay.llm.tokens import estimate_messages_tokens, estimate_tokens

__all__ = [
    "BATCH_URL",
    "REQUEST_KEY_VERSION",
    "STAGE_HEADER",
    "STAGE_SCHEMAS",
    "BatchFailure",
    "BatchFileError",
    "BatchImport",
    "CachedExchange",
    "CallRecord",
    "ClientMode",
    "Completion",
    "DiscoveredClaim",
    "DiscoveredFinding",
    "DiscoveredStrength",
    "DiscoveryReply",
    "LLMClient",
    "LLMSettings",
    "MemoryReplayCache",
    "Message",
    "ReplayCache",
    "StageCall",
    "calls_of",
    "canonical_request_json",
    "content_nonce",
    "estimate_messages_tokens",
    "estimate_tokens",
    "format_diff_for_model",
    "import_batch_responses",
    "model_json_schema_strict",
    "read_batch_responses",
    "render_prompt",
    "request_key",
    "stage_json_schema",
    "stage_names",
    "to_finding",
    "to_strength",
    "untrusted_block",
    "write_batch_requests",
]
