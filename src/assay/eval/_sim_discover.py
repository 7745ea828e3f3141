"""The simulator's discovery rep: each known defect with probability ``recall``, plus false
positives placed on changed lines away from every defect.

Draws happen in a fixed order, so a rep's answer is a pure function of the seed and the request.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.eval._sim_context import StageContext
from assay.eval._sim_diff import VisibleDiff, read_visible_diff
from assay.eval._sim_wording import (
    evidence_for,
    false_positive_remark,
    identifier_on,
    title_for,
)
from assay.eval.cases import TruthDefect
from assay.eval.matcher import CATEGORIES, canonical_category, categories_compatible
from assay.model import Severity

__all__ = ["respond_discover"]

_FAR = 10
"""False positives are placed more than this many lines from any defect when the diff allows."""
_NEAR = 3
_FP_SEVERITIES = (Severity.P1, Severity.P2, Severity.P3)
_FP_WEIGHTS = (0.2, 0.5, 0.3)
_DECOY_WEIGHTS = (0.5, 0.4, 0.1)
"""Decoys are the remarks every rep repeats: they are argued harder, so more of them are P1."""


@dataclass(frozen=True)
class _Location:
    path: str
    line: int
    text: str


@dataclass(frozen=True)
class _Remark:
    """A false finding: where, what, how bad, and whether its claim is false."""

    location: _Location
    category: str
    title: str
    evidence: str
    severity: Severity
    false_claim: bool


def respond_discover(context: StageContext) -> dict[str, Any]:
    """One rep's review: each defect with probability ``recall``, plus false positives."""
    config, rng = context.config, context.rng
    diff = read_visible_diff(context.user_text)
    findings: list[dict[str, Any]] = []
    for defect in context.case.defects:
        if defect.path is None or defect.line_start is None:
            continue
        if diff.paths and defect.path not in diff.head_lines:
            continue  # a shard without the defect's file: this request cannot see it
        if rng.random() >= config.recall:
            continue
        findings.append(_true_finding(defect, context, diff))
    for remark in _false_positives(context, diff):
        findings.append(_remark_finding(remark))
    rng.shuffle(findings)
    return {
        "findings": findings,
        "strengths": [{"text": "The change is small and focused.", "path": None, "line": None}],
    }


def _true_finding(defect: TruthDefect, context: StageContext, diff: VisibleDiff) -> dict[str, Any]:
    config, rng = context.config, context.rng
    assert defect.path is not None and defect.line_start is not None  # checked by the caller
    jitter = 0
    if config.line_jitter and rng.random() < config.line_jitter_rate:
        jitter = rng.choice(
            [step for step in range(-config.line_jitter, config.line_jitter + 1) if step]
        )
    # A reviewer cites lines of the file it was shown, never past its end.
    shown = diff.head_lines.get(defect.path)
    highest = max(shown) if shown else None
    line = _clamp(defect.line_start + jitter, highest)
    last = defect.last_line or defect.line_start
    end_line = max(line, _clamp(last + jitter, highest)) if last != defect.line_start else None
    severity = defect.severity or Severity.P2
    if rng.random() < config.severity_noise:
        severity = _shift(severity, rng.choice((-1, 1)))
    category = canonical_category(defect.category)
    if rng.random() < config.category_noise:
        category = _neighbour_category(category, rng)
    variant = rng.randrange(config.wording_variants)
    claims = _true_claims(defect.path, defect.line_start, diff)
    claims.append({**_claim("free"), "text": _short(defect.description)})
    return {
        "severity": severity.value,
        "category": category,
        "title": title_for(defect.description, category, variant),
        "path": defect.path,
        "line": line,
        "end_line": end_line,
        "side": defect.side.value,
        "evidence": evidence_for(defect.description, defect.path, line, variant),
        "suggestion": "Fix the code at this line so the defect described cannot occur.",
        "claims": claims,
    }


def _false_positives(context: StageContext, diff: VisibleDiff) -> list[_Remark]:
    config, rng = context.config, context.rng
    count = int(config.fp_rate) + (1 if rng.random() < config.fp_rate % 1 else 0)
    candidates = _free_lines(diff, context.case.defects)
    if not candidates:
        return []
    decoys = _decoys(context, candidates)
    remarks: list[_Remark] = []
    used: set[tuple[str, int]] = set()
    for _ in range(count):
        if decoys and rng.random() < config.fp_shared:
            remark = rng.choice(decoys)
        else:
            location = rng.choice(candidates)
            category, title, evidence = false_positive_remark(rng, _token(location))
            remark = _Remark(
                location=location,
                category=category,
                title=title,
                evidence=f"{location.path}:{location.line}: {evidence}",
                severity=rng.choices(_FP_SEVERITIES, _FP_WEIGHTS)[0],
                false_claim=rng.random() < config.fp_false_claim,
            )
        key = (remark.location.path, remark.location.line)
        if key not in used:
            used.add(key)
            remarks.append(remark)
    return remarks


def _decoys(context: StageContext, candidates: Sequence[_Location]) -> list[_Remark]:
    """The case's plausible wrong remarks: the same for every rep (seeded by case, not rep)."""
    rng = context.case_rng("decoys")
    chosen = rng.sample(list(candidates), k=min(context.config.decoys, len(candidates)))
    decoys = []
    for location in chosen:
        category, title, evidence = false_positive_remark(rng, _token(location))
        decoys.append(
            _Remark(
                location=location,
                category=category,
                title=title,
                evidence=f"{location.path}:{location.line}: {evidence}",
                severity=rng.choices(_FP_SEVERITIES, _DECOY_WEIGHTS)[0],
                false_claim=rng.random() < context.config.fp_false_claim,
            )
        )
    return decoys


def _remark_finding(remark: _Remark) -> dict[str, Any]:
    location = remark.location
    token = _token(location)
    if remark.false_claim:
        # A claim about text the line does not hold: a deterministic check refutes it.
        claims = [
            {
                **_claim("line_contains"),
                "text": f"line {location.line} of {location.path} calls `{token}_unchecked`",
                "path": location.path,
                "line": location.line,
                "needle": f"{token}_unchecked",
            }
        ]
    else:
        claims = [
            {
                **_claim("line_contains"),
                "text": f"line {location.line} of {location.path} contains `{token}`",
                "path": location.path,
                "line": location.line,
                "needle": token,
            }
        ]
    claims.append({**_claim("free"), "text": remark.evidence.split(": ", 1)[-1]})
    return {
        "severity": remark.severity.value,
        "category": remark.category,
        "title": remark.title,
        "path": location.path,
        "line": location.line,
        "end_line": None,
        "side": "RIGHT",
        "evidence": remark.evidence,
        "suggestion": "Handle this case explicitly.",
        "claims": claims,
    }


def _true_claims(path: str, line: int, diff: VisibleDiff) -> list[dict[str, Any]]:
    text = diff.line_text(path, line)
    if text is None or not text.strip():
        # The line is outside the diff: claim only what certainly holds.
        return [{**_claim("file_exists"), "text": f"{path} exists", "path": path}]
    needle = identifier_on(text) or text.strip()[:40]
    return [
        {
            **_claim("line_contains"),
            "text": f"line {line} of {path} contains `{needle}`",
            "path": path,
            "line": line,
            "needle": needle,
        }
    ]


def _free_lines(diff: VisibleDiff, defects: Sequence[TruthDefect]) -> list[_Location]:
    """Added lines away from every defect (far if possible, else not too near)."""
    for minimum in (_FAR, _NEAR):
        lines = [
            _Location(path, line, diff.head_lines[path][line])
            for path, added in diff.added.items()
            for line in added
            if diff.head_lines[path][line].strip()
            and all(_gap(path, line, defect) > minimum for defect in defects)
        ]
        if lines:
            return lines
    return []


def _gap(path: str, line: int, defect: TruthDefect) -> int:
    if defect.path != path or defect.first_line is None or defect.last_line is None:
        return 1 << 30
    if line < defect.first_line:
        return defect.first_line - line
    return max(0, line - defect.last_line)


def _token(location: _Location) -> str:
    return identifier_on(location.text) or "value"


def _neighbour_category(category: str, rng: random.Random) -> str:
    neighbours = [
        other
        for other in CATEGORIES
        if other != category and categories_compatible(other, category)
    ]
    return rng.choice(neighbours) if neighbours else category


def _clamp(line: int, highest: int | None) -> int:
    return max(1, min(line, highest) if highest is not None else line)


def _shift(severity: Severity, step: int) -> Severity:
    levels = list(Severity)
    return levels[min(len(levels) - 1, max(0, levels.index(severity) + step))]


def _claim(kind: str) -> dict[str, Any]:
    return {"kind": kind, "text": "", "path": None, "line": None, "needle": None, "count": None}


def _short(text: str) -> str:
    return " ".join(text.split())[:300] or "The changed code is wrong here."
