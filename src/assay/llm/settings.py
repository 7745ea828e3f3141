"""The model endpoint and request policy, as one value object built once and passed down."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["LLMSettings", "ResponseFormat"]

ResponseFormat = Literal["json_schema", "json_object_schema", "json_object", "none"]


class LLMSettings(BaseModel):
    """How to reach the model and how hard to try.

    Example::

        LLMSettings(base_url="http://127.0.0.1:8080/v1", api_key="none", model="qwen3")
    """

    model_config = ConfigDict(frozen=True)

    base_url: str
    """An OpenAI-compatible endpoint, e.g. ``https://api.openai.com/v1``."""
    api_key: str = "none"
    model: str
    max_tokens: int = Field(default=4096, ge=16)
    """Always sent; a reply cut by it is retried, never used partially."""
    timeout_s: float = Field(default=120.0, gt=0)
    transport_retries: int = Field(default=4, ge=0)
    """Retries on timeouts, connection errors, 429 and 5xx (backoff; honours Retry-After)."""
    backoff_base_s: float = Field(default=1.0, ge=0)
    reasks: int = Field(default=2, ge=0)
    """Re-asks after an invalid or truncated reply, quoting the validation errors."""
    temperature: float = Field(default=0.2, ge=0, le=2)
    concurrency: int = Field(default=8, ge=1)
    """At most this many requests in flight at once, across all stages."""
    response_format: ResponseFormat = "json_schema"
    """How replies are asked to be JSON (the prompt states the schema in every case):

    - ``json_schema``: OpenAI's strict structured output (OpenAI, vLLM, SGLang, Ollama, …);
    - ``json_object_schema``: ``{"type": "json_object", "schema": …}``, the form llama.cpp's
      servers constrain by grammar;
    - ``json_object``: JSON mode without a schema;
    - ``none``: no ``response_format`` at all (servers that reject the field)."""
