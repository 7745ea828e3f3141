"""Machine output: every key present, keys sorted, nulls for empty values."""

from __future__ import annotations

import json

from assay.render import findings_json

from ._factory import english_round, round_result

_KEYS = [
    "anchor",
    "blocking",
    "category",
    "certain_failure",
    "checklist_items",
    "claims",
    "code",
    "end_line",
    "evidence",
    "first_seen_round",
    "gate_reason",
    "id",
    "line",
    "name",
    "original_severity",
    "path",
    "severity",
    "side",
    "source",
    "suggestion",
    "title",
    "votes",
]


def test_every_record_has_every_key_in_sorted_order() -> None:
    records = json.loads(findings_json(english_round()))

    assert len(records) == 6
    for record in records:
        assert list(record) == _KEYS
        assert list(record["anchor"]) == [
            "line",
            "mode",
            "path",
            "side",
            "start_line",
            "start_side",
        ]


def test_values_are_normalised_for_machines() -> None:
    by_id = {r["id"]: r for r in json.loads(findings_json(english_round()))}

    downgraded = by_id["c2d3e4f5a6b7"]
    assert (downgraded["severity"], downgraded["original_severity"]) == ("p2", "p1")
    assert downgraded["evidence"] is None and downgraded["code"] is None
    static = by_id["d3e4f5a6b7c8"]
    assert (static["code"], static["name"], static["source"]) == (
        "F841",
        "unused-variable",
        "static",
    )
    body_only = by_id["e4f5a6b7c8d9"]["anchor"]
    assert body_only == {
        "line": None,
        "mode": "body",
        "path": "docs/pool.md",
        "side": None,
        "start_line": None,
        "start_side": None,
    }


def test_an_empty_round_is_an_empty_array() -> None:
    assert findings_json(round_result()) == "[]\n"
