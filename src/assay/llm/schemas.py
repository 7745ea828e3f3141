"""The model's reply to each stage: one pydantic model per stage, its JSON schema generated once.

The pydantic model is the contract. It validates every reply (types, enums, length limits, so a
hostile or runaway reply stays bounded) and generates the JSON schema that requests send as
``response_format`` and that prompts quote. The schema sent to the model is the *strict* form
OpenAI's structured outputs accept, which is also the subset other OpenAI-compatible servers
(vLLM, SGLang, llama.cpp) compile into grammars:

- every object has ``additionalProperties: false`` and lists every property in ``required``;
- an optional value is a nullable type (``"type": ["integer", "null"]``), never a missing key;
- no ``$ref``/``$defs`` (inlined), no ``default``, no ``title``;
- no numeric or length constraints (``maxLength``, ``maxItems``, ``minimum``): strict mode rejects
  some of them, so each is stated in the property's ``description`` instead and enforced here by
  pydantic.

``assay schema discover`` prints :func:`stage_json_schema` ``("discover")``.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.errors import ConfigError
from assay.model import Claim, ClaimKind, Finding, FindingSource, Severity, Side, Strength

__all__ = [
    "STAGE_SCHEMAS",
    "DiscoveredClaim",
    "DiscoveredFinding",
    "DiscoveredStrength",
    "DiscoveryReply",
    "model_json_schema_strict",
    "stage_json_schema",
    "stage_names",
    "to_finding",
    "to_strength",
]

MAX_FINDINGS = 50
MAX_STRENGTHS = 20
MAX_CLAIMS = 10


class _Reply(BaseModel):
    # Unknown keys are ignored rather than rejected: a lenient server may add some, and they
    # never reach Assay. Strings are not stripped here; conversion does that.
    model_config = ConfigDict(frozen=True, extra="ignore")


class DiscoveredClaim(_Reply):
    """One checkable statement a finding rests on, as the model states it."""

    kind: ClaimKind = Field(
        default=ClaimKind.FREE,
        description=(
            "free: any statement (checked by a model). line_contains: line `line` of `path` "
            "contains `needle`. pattern_count: `needle` occurs `count` times in `path` (in the "
            "whole repository when `path` is null). symbol_defined / symbol_undefined: the "
            "symbol `needle` is (not) defined in `path` (anywhere when null). file_exists / "
            "file_absent: `path` exists / does not exist at head."
        ),
    )
    text: str = Field(max_length=1000, description="The statement, in one sentence.")
    path: str | None = Field(default=None, max_length=1024)
    line: int | None = Field(default=None, ge=1)
    needle: str | None = Field(
        default=None, max_length=500, description="The text, pattern or symbol the claim is about."
    )
    count: int | None = Field(default=None, ge=0)


class DiscoveredFinding(_Reply):
    """One defect in the change, as the model reports it."""

    severity: Literal["P0", "P1", "P2", "P3"] = Field(
        description="P0 certain breakage, P1 likely regression or serious risk, P2 conditional "
        "or latent defect, P3 hygiene (as defined in the instructions)."
    )
    category: str = Field(
        max_length=64, description="One word or kebab-case phrase, e.g. correctness, security."
    )
    title: str = Field(max_length=300, description="One line naming the defect.")
    path: str = Field(max_length=1024, description="File path from the repository root.")
    line: int = Field(ge=1, description="The line the defect is at, as numbered in the diff.")
    end_line: int | None = Field(
        default=None, ge=1, description="Last line of a range (inclusive), or null."
    )
    side: Literal["RIGHT", "LEFT"] = Field(
        default="RIGHT",
        description="RIGHT: `line` is a head line number; LEFT: a base line number (removed code).",
    )
    evidence: str = Field(
        max_length=4000, description="Why it is a defect, citing path:line of the head."
    )
    suggestion: str = Field(max_length=4000, description="The concrete fix.")
    claims: list[DiscoveredClaim] = Field(
        default_factory=list,
        max_length=MAX_CLAIMS,
        description="The checkable facts the finding rests on.",
    )


class DiscoveredStrength(_Reply):
    """Something the change does well."""

    text: str = Field(max_length=1000)
    path: str | None = Field(default=None, max_length=1024)
    line: int | None = Field(default=None, ge=1)


class DiscoveryReply(_Reply):
    """A discovery rep's whole review of the change."""

    findings: list[DiscoveredFinding] = Field(max_length=MAX_FINDINGS)
    strengths: list[DiscoveredStrength] = Field(default_factory=list, max_length=MAX_STRENGTHS)


STAGE_SCHEMAS: dict[str, type[BaseModel]] = {
    "discover": DiscoveryReply,
}
"""Stage name (also its ``X-Assay-Stage`` header value) → the model of its reply."""


def stage_names() -> tuple[str, ...]:
    """Return the names of the stages that have a reply schema, sorted."""
    return tuple(sorted(STAGE_SCHEMAS))


def stage_json_schema(stage: str) -> dict[str, Any]:
    """Return the strict JSON schema of a stage's reply (a fresh copy each call).

    Args:
        stage: A stage name, e.g. ``"discover"``.

    Returns:
        The schema, in the strict form described in this module's docstring.

    Raises:
        ConfigError: The stage has no reply schema.
    """
    reply_model = STAGE_SCHEMAS.get(stage)
    if reply_model is None:
        known = ", ".join(stage_names())
        raise ConfigError(f"no reply schema for stage {stage!r}; known stages: {known}")
    return copy.deepcopy(_strict_schema_of(reply_model))


def model_json_schema_strict(reply_model: type[BaseModel]) -> dict[str, Any]:
    """Return the strict JSON schema of any reply model (a fresh copy each call).

    Args:
        reply_model: A pydantic model, e.g. a stage's reply model.

    Returns:
        The schema, in the strict form described in this module's docstring.
    """
    return copy.deepcopy(shared_strict_schema(reply_model))


def shared_strict_schema(reply_model: type[BaseModel]) -> dict[str, Any]:
    """Like :func:`model_json_schema_strict`, without the copy: the one cached schema object,
    for request bodies that only serialize it. Do not mutate it.

    A subclass that adds validators but no fields (and no docstring of its own) has its base's
    schema, and shares its base's cached one.
    """
    return _strict_schema_of(_schema_source(reply_model))


def _schema_source(reply_model: type[BaseModel]) -> type[BaseModel]:
    for base in reply_model.__mro__[1:]:
        if (
            issubclass(base, BaseModel)
            and base is not BaseModel
            and reply_model.__doc__ is None
            and base.model_fields.keys() == reply_model.model_fields.keys()
        ):
            return _schema_source(base)
    return reply_model


@functools.cache
def _strict_schema_of(reply_model: type[BaseModel]) -> dict[str, Any]:
    # Cached: generated once per model; callers get deep copies so nobody mutates the original.
    schema = reply_model.model_json_schema()
    definitions: dict[str, Any] = schema.pop("$defs", {})
    strict: dict[str, Any] = _make_strict(schema, definitions)
    return strict


# Constraint keywords moved into the description, with how to say them.
_CONSTRAINT_WORDS: dict[str, str] = {
    "maxLength": "At most {} characters.",
    "minLength": "At least {} characters.",
    "maxItems": "At most {} items.",
    "minItems": "At least {} items.",
    "maximum": "At most {}.",
    "minimum": "At least {}.",
}
_DROPPED_KEYS = frozenset({"title", "default", *_CONSTRAINT_WORDS})


def _make_strict(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_make_strict(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        merged = {**definitions[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _make_strict(merged, definitions)

    notes = [
        words.format(node[keyword])
        for keyword, words in _CONSTRAINT_WORDS.items()
        if keyword in node and not isinstance(node[keyword], dict)
    ]
    strict: dict[str, Any] = {
        key: _make_strict(value, definitions)
        for key, value in node.items()
        if key not in _DROPPED_KEYS and key != "properties"
    }
    if isinstance(node.get("properties"), dict):
        # Property names are data, not keywords: a property called "title" stays.
        strict["properties"] = {
            name: _make_strict(value, definitions) for name, value in node["properties"].items()
        }
    if notes:
        strict["description"] = " ".join([strict.get("description", ""), *notes]).strip()
    strict = _collapse_nullable(strict)
    if strict.get("type") == "object" and "properties" in strict:
        strict["required"] = list(strict["properties"])
        strict["additionalProperties"] = False
    return strict


def _collapse_nullable(node: dict[str, Any]) -> dict[str, Any]:
    """Turn ``anyOf: [X, {"type": "null"}]`` into X with a nullable type."""
    variants = node.get("anyOf")
    if not isinstance(variants, list) or len(variants) != 2 or {"type": "null"} not in variants:
        return node
    (other,) = [variant for variant in variants if variant != {"type": "null"}]
    if not isinstance(other.get("type"), str):
        return node
    collapsed = {key: value for key, value in node.items() if key != "anyOf"}
    collapsed.update({key: value for key, value in other.items() if key != "description"})
    collapsed["type"] = [other["type"], "null"]
    if "enum" in other:
        collapsed["enum"] = [*other["enum"], None]
    descriptions = [text for text in (node.get("description"), other.get("description")) if text]
    if descriptions:
        collapsed["description"] = " ".join(descriptions)
    return collapsed


def to_finding(discovered: DiscoveredFinding, rep: int) -> Finding:
    """Convert a discovered finding to the pipeline's ``Finding`` (whitespace trimmed).

    An ``end_line`` before ``line`` is dropped rather than guessed at; claim lines below 1
    cannot occur (the schema forbids them).

    Args:
        discovered: A finding from a validated reply.
        rep: Index of the discovery rep that reported it.

    Returns:
        The finding, with ``source=llm`` and ``rep`` set.
    """
    end_line = discovered.end_line
    if end_line is not None and end_line < discovered.line:
        end_line = None
    return Finding(
        severity=Severity(discovered.severity),
        category=_normalize_category(discovered.category),
        title=" ".join(discovered.title.split()),
        path=_normalize_path(discovered.path),
        line=discovered.line,
        end_line=end_line,
        side=Side(discovered.side),
        evidence=discovered.evidence.strip(),
        suggestion=discovered.suggestion.strip(),
        claims=tuple(_to_claim(claim) for claim in discovered.claims),
        source=FindingSource.LLM,
        rep=rep,
    )


def to_strength(discovered: DiscoveredStrength) -> Strength:
    """Convert a discovered strength to the pipeline's ``Strength``.

    Args:
        discovered: A strength from a validated reply.

    Returns:
        The strength, its path normalized like a finding's.
    """
    path = _normalize_path(discovered.path) if discovered.path else None
    return Strength(text=discovered.text.strip(), path=path or None, line=discovered.line)


def _to_claim(discovered: DiscoveredClaim) -> Claim:
    path = _normalize_path(discovered.path) if discovered.path else None
    return Claim(
        kind=discovered.kind,
        text=discovered.text.strip(),
        path=path or None,
        line=discovered.line,
        needle=discovered.needle,
        count=discovered.count,
    )


def _normalize_category(category: str) -> str:
    return "-".join(category.strip().lower().split()) or "other"


def _normalize_path(path: str) -> str:
    """Repository-relative with ``/``: what the diff shows, without ``./`` or a leading ``/``."""
    normalized = path.strip().replace("\\", "/")
    while normalized.startswith("./"):
        normalized = normalized[2:]
    return normalized.lstrip("/")
