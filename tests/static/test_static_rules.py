"""The rule table: lookups, coverage of the selection, wording in both languages."""

from __future__ import annotations

import re

import pytest

from assay.model import Severity
from assay.static.rules import (
    DEFAULT_RULE,
    RUFF_SELECT,
    RULES,
    SUGGESTIONS,
    TITLES,
    code_span,
    rule_for,
)


@pytest.mark.parametrize(
    ("code", "severity", "certain"),
    [
        ("F821", Severity.P0, True),
        (None, Severity.P0, True),
        ("invalid-syntax", Severity.P0, True),
        ("F707", Severity.P0, True),
        ("F822", Severity.P1, False),
        ("E722", Severity.P2, False),
        ("ASYNC251", Severity.P2, False),
        ("ASYNC109", Severity.P3, False),
        ("PLE2502", Severity.P2, False),
        ("F405", Severity.P3, False),
        ("UP006", Severity.P3, False),
    ],
)
def test_lookup_is_exact_then_longest_prefix(
    code: str | None, severity: Severity, certain: bool
) -> None:
    spec = rule_for(code)

    assert (spec.severity, spec.certain_failure) == (severity, certain)


def test_blocking_call_rules_use_their_own_wording() -> None:
    assert rule_for("ASYNC230").wording == "blocking-call"
    assert rule_for("ASYNC110").wording is None
    assert rule_for("UP006") is DEFAULT_RULE


def test_every_selected_rule_has_a_deliberate_mapping() -> None:
    for selector in RUFF_SELECT:
        assert rule_for(selector) is RULES[selector], selector


def test_only_correctness_rules_are_certain_failures() -> None:
    for code, spec in RULES.items():
        if spec.certain_failure:
            assert (spec.severity, spec.category) == (Severity.P0, "correctness"), code


def test_wordings_exist_in_both_languages_with_the_same_fields() -> None:
    wordings = {spec.wording for spec in RULES.values() if spec.wording}
    assert wordings == set(TITLES["en"]) == set(TITLES["zh"])
    assert set(SUGGESTIONS["en"]) == set(SUGGESTIONS["zh"]) <= wordings
    for table in (TITLES, SUGGESTIONS):
        for key, english in table["en"].items():
            fields = set(re.findall(r"\{(\w+)\}", english))
            assert fields == set(re.findall(r"\{(\w+)\}", table["zh"][key])), key
            assert fields <= {"name", "module", "target", "message"}, key


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("return x", "`return x`"),
        ("s = `x`", "`` s = `x` ``"),
        ("a ``b`` c", "```a ``b`` c```"),
        ("", "` `"),
    ],
)
def test_code_span_cannot_be_closed_by_its_content(text: str, span: str) -> None:
    assert code_span(text) == span


def test_code_span_cuts_long_lines() -> None:
    assert code_span("x" * 500) == "`" + "x" * 200 + "…`"
