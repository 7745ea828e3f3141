"""Stage reply schemas: the strict JSON schema form, its stability, limits, and conversion."""

from __future__ import annotations

import json
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no stubs; dev-only dependency
import pytest
from pydantic import ValidationError

from assay.errors import ConfigError
from assay.llm import (
    STAGE_SCHEMAS,
    DiscoveredFinding,
    DiscoveryReply,
    stage_json_schema,
    stage_names,
    to_finding,
)
from assay.model import ClaimKind, FindingSource, Severity, Side

_FORBIDDEN_IN_STRICT = {"$ref", "$defs", "title", "default", "maxLength", "maxItems", "minimum"}


def _objects(node: Any) -> list[dict[str, Any]]:
    """Every schema node of type object, at any depth."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node)
        values = node["properties"].values() if "properties" in node else []
        for value in [*values, *(v for k, v in node.items() if k != "properties")]:
            found.extend(_objects(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_objects(item))
    return found


def _keywords(node: Any) -> set[str]:
    """Every schema keyword used (property names excluded)."""
    used: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties":
                for property_schema in value.values():
                    used |= _keywords(property_schema)
            else:
                used.add(key)
                used |= _keywords(value)
    elif isinstance(node, list):
        for item in node:
            used |= _keywords(item)
    return used


def _finding(**overrides: Any) -> dict[str, Any]:
    finding: dict[str, Any] = {
        "severity": "P1",
        "category": "correctness",
        "title": "Connection is never closed",
        "path": "app/db.py",
        "line": 12,
        "end_line": None,
        "side": "RIGHT",
        "evidence": "app/db.py:12 opens a connection that no path closes.",
        "suggestion": "Use a context manager.",
        "claims": [
            {
                "kind": "line_contains",
                "text": "line 12 opens the connection",
                "path": "app/db.py",
                "line": 12,
                "needle": "connect(",
                "count": None,
            }
        ],
    }
    finding.update(overrides)
    return finding


def test_discover_schema_is_in_strict_form() -> None:
    schema = stage_json_schema("discover")

    objects = _objects(schema)
    assert len(objects) == 4  # reply, finding, claim, strength
    for node in objects:
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
    assert not _keywords(schema) & _FORBIDDEN_IN_STRICT
    jsonschema.Draft202012Validator.check_schema(schema)


def test_optional_values_are_nullable_and_limits_move_to_descriptions() -> None:
    finding = stage_json_schema("discover")["properties"]["findings"]["items"]

    assert finding["properties"]["end_line"]["type"] == ["integer", "null"]
    assert finding["properties"]["title"]["type"] == "string"
    assert "At most 300 characters." in finding["properties"]["title"]["description"]
    assert finding["properties"]["severity"]["enum"] == ["P0", "P1", "P2", "P3"]
    claim_kinds = finding["properties"]["claims"]["items"]["properties"]["kind"]["enum"]
    assert claim_kinds == [kind.value for kind in ClaimKind]


def test_schema_is_stable_and_callers_cannot_corrupt_it() -> None:
    first = stage_json_schema("discover")
    text = json.dumps(first, sort_keys=True)
    first["properties"].clear()

    assert json.dumps(stage_json_schema("discover"), sort_keys=True) == text


def test_a_reply_valid_for_the_strict_schema_is_valid_for_pydantic() -> None:
    reply = {
        "findings": [_finding()],
        "strengths": [{"text": "Good tests.", "path": None, "line": None}],
    }

    jsonschema.validate(reply, stage_json_schema("discover"))
    parsed = DiscoveryReply.model_validate(reply)

    assert parsed.findings[0].claims[0].kind is ClaimKind.LINE_CONTAINS


def test_registry_and_unknown_stage() -> None:
    assert STAGE_SCHEMAS["discover"] is DiscoveryReply
    assert "discover" in stage_names()
    with pytest.raises(ConfigError, match=r"known stages: .*discover"):
        stage_json_schema("no-such-stage")


@pytest.mark.parametrize(
    ("override", "location"),
    [
        ({"title": "x" * 301}, "title"),
        ({"evidence": "x" * 4001}, "evidence"),
        ({"severity": "P4"}, "severity"),
        ({"line": 0}, "line"),
        ({"side": "MIDDLE"}, "side"),
    ],
)
def test_hostile_values_are_rejected(override: dict[str, Any], location: str) -> None:
    with pytest.raises(ValidationError) as raised:
        DiscoveryReply.model_validate({"findings": [_finding(**override)], "strengths": []})

    assert raised.value.errors()[0]["loc"] == ("findings", 0, location)


def test_the_number_of_findings_is_bounded() -> None:
    with pytest.raises(ValidationError, match="at most 50 items"):
        DiscoveryReply.model_validate({"findings": [_finding()] * 51, "strengths": []})


def test_lenient_on_missing_optionals_and_unknown_keys() -> None:
    minimal = {
        "severity": "P2",
        "category": "tests",
        "title": "No test",
        "path": "a.py",
        "line": 3,
        "evidence": "e",
        "suggestion": "s",
        "confidence": 0.9,
    }
    reply = DiscoveryReply.model_validate({"findings": [minimal]})

    assert reply.findings[0].side == "RIGHT"
    assert reply.findings[0].claims == []
    assert reply.strengths == []


def test_to_finding_converts_and_normalizes() -> None:
    discovered = DiscoveredFinding.model_validate(
        _finding(
            path="./src\\app.py",
            category="Error Handling",
            title="  Swallowed   error ",
            line=20,
            end_line=18,
            side="LEFT",
            severity="P0",
        )
    )

    finding = to_finding(discovered, rep=3)

    assert finding.path == "src/app.py"
    assert finding.category == "error-handling"
    assert finding.title == "Swallowed error"
    assert finding.end_line is None  # an end before the start is dropped, not guessed
    assert finding.side is Side.LEFT
    assert finding.severity is Severity.P0
    assert finding.source is FindingSource.LLM
    assert finding.rep == 3
    assert finding.claims[0].kind is ClaimKind.LINE_CONTAINS
    assert finding.claims[0].needle == "connect("
