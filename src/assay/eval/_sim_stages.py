"""The simulator's responders: one small function per stage, answering from the case's truth.

Each responder takes a :class:`StageContext` (the request, the case's defects, the
configuration, a seeded generator) and returns the stage's reply as a dict that validates
against the stage's reply model. Draws happen in a fixed order, so an answer is a pure function
of the seed and the request.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.eval._sim_context import Responder, StageContext
from assay.eval._sim_diff import VisibleDiff, read_visible_diff
from assay.eval._sim_wording import (
    evidence_for,
    false_positive_remark,
    identifier_on,
    title_for,
)
from assay.eval.cases import TruthDefect
from assay.eval.judge import JUDGE_BLOCK
from assay.eval.matcher import CATEGORIES, canonical_category, categories_compatible
from assay.model import Severity

__all__ = [
    "RESPONDERS",
    "respond_checklist",
    "respond_confirm",
    "respond_discover",
    "respond_fact_check",
    "respond_judge",
    "respond_recheck",
    "respond_synthesize",
]

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


# -- discover ----------------------------------------------------------------------------------


def respond_discover(context: StageContext) -> dict[str, Any]:
    """One rep's review: each defect with probability ``recall``, plus false positives."""
    config, rng = context.config, context.rng
    diff = read_visible_diff(context.user_text)
    findings: list[dict[str, Any]] = []
    for defect in context.case.defects:
        if defect.path is None or defect.line_start is None:
            continue
        if rng.random() >= config.recall:
            continue
        findings.append(_true_finding(defect, context, diff))
    for remark in _false_positives(context, diff):
        findings.append(_remark_finding(remark, rng))
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


def _remark_finding(remark: _Remark, rng: random.Random) -> dict[str, Any]:
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


# -- judge (the eval's own stage) --------------------------------------------------------------

_BLOCK = re.compile(
    rf"<<<UNTRUSTED {re.escape(JUDGE_BLOCK)} (?P<nonce>[0-9a-f]+)\n(?P<body>.*)\n"
    rf"UNTRUSTED {re.escape(JUDGE_BLOCK)} (?P=nonce)>>>",
    re.DOTALL,
)


def respond_judge(context: StageContext) -> dict[str, Any]:
    """Pairs a defect with each finding in its file within ``line_jitter + 1`` lines (the
    simulated reviewers' own precision), each decision wrong with ``check_error_rate``."""
    match = _BLOCK.search(context.user_text)
    if match is None:
        raise LookupError("judge request without its data block")
    document = json.loads(match.group("body"))
    reach = context.config.line_jitter + 1
    pairs = []
    for defect in document.get("defects", []):
        lines = defect.get("lines")
        for finding in document.get("findings", []):
            if lines is None or finding.get("path") != defect.get("path"):
                continue  # the simulated judge never pairs across files
            near = lines[0] - reach <= finding.get("line", 0) <= lines[1] + reach
            if near != (context.rng.random() < context.config.check_error_rate):
                pairs.append({"defect": defect["id"], "finding": finding["id"], "reason": ""})
    return {"pairs": pairs}


# -- the verifying stages: synthesize, confirm, fact-check, recheck, checklist -----------------
#
# They answer about one finding (or one cluster) the pipeline shows in an untrusted block; the
# simulator reads its location back and asks whether a known defect is there (within the line
# jitter its own reviewers apply). The answer is then wrong with ``check_error_rate``.

_LOCATION = re.compile(
    r"^Location(?: at the previous head)?: (?P<where>.+?)"
    r"(?: \((?:base line numbers|RIGHT|LEFT).*)?$",
    re.MULTILINE,
)
_NUMBERED = re.compile(r"^(?P<number>\d+)\. ", re.MULTILINE)
_IDS = re.compile(r"one result for each of these \d+ item ids: (?P<ids>.*)\.\s*$", re.MULTILINE)
_FAILED_SECTION = "These items already failed a deterministic check"


def respond_synthesize(context: StageContext) -> dict[str, Any]:
    """The report nearest a known defect (or the first one) becomes the canonical finding."""
    reports = json.loads(_block(context, "reports"))
    if not isinstance(reports, list) or not reports:
        raise LookupError("synthesize request without reports")
    scored = []
    for report in reports:
        distance = _defect_distance(
            context, report["path"], report["line"], report.get("end_line"), report.get("side")
        )
        scored.append((distance if distance is not None else 1 << 30, report["report"], report))
    chosen = min(scored, key=lambda item: (item[0], item[1]))[2]
    if context.rng.random() < context.config.check_error_rate:
        chosen = context.rng.choice(reports)
    return {
        "severity": chosen["severity"],
        "category": chosen["category"],
        "title": chosen["title"],
        "path": chosen["path"],
        "line": chosen["line"],
        "end_line": chosen.get("end_line"),
        "side": chosen.get("side") or "RIGHT",
        "evidence": chosen["evidence"],
        "suggestion": chosen["suggestion"],
        "claim_ids": [claim["id"] for claim in chosen.get("claims", [])],
    }


def respond_confirm(context: StageContext) -> dict[str, Any]:
    """``confirmed`` when a known defect is at the finding's location, else ``refuted``."""
    where, real = _finding_is_real(context)
    confirmed = real != _wrong(context)
    reason = (
        f"{where}: the code shows the defect as described."
        if confirmed
        else f"{where}: the code does not behave as the finding says."
    )
    return {"verdict": "confirmed" if confirmed else "refuted", "reason": reason}


def respond_fact_check(context: StageContext) -> dict[str, Any]:
    """Every listed claim verified when the finding is real, refuted when not."""
    where, real = _finding_is_real(context)
    numbers = [
        int(match.group("number")) for match in _NUMBERED.finditer(_block(context, "claims"))
    ]
    claims = []
    for number in numbers:
        holds = real != _wrong(context)
        claims.append(
            {
                "claim": number,
                "status": "verified" if holds else "refuted",
                "reason": f"{where}: {'as stated' if holds else 'not what the code does'}.",
            }
        )
    return {"claims": claims}


def respond_recheck(context: StageContext) -> dict[str, Any]:
    """``still_open`` for a known defect (the case's head is the current head), else
    ``cannot_substantiate``; a wrong answer says ``fixed`` or ``still_open``."""
    where, real = _finding_is_real(context)
    line = _location(context)[1]
    if real != _wrong(context):
        status = "still_open" if real else "fixed"
        return {"status": status, "proof": f"{where} at the current head.", "lines": [line]}
    if real:
        return {"status": "fixed", "proof": f"{where} was changed.", "lines": [line]}
    return {"status": "cannot_substantiate", "proof": f"{where} does not show it.", "lines": []}


def respond_checklist(context: StageContext) -> dict[str, Any]:
    """Every item passes except those a deterministic check already failed."""
    text = context.user_text
    match = _IDS.search(text)
    if match is None:
        raise LookupError("checklist request without its list of item ids")
    ids = [item.strip() for item in match.group("ids").split(", ") if item.strip()]
    failed: set[str] = set()
    if _FAILED_SECTION in text:
        section = text.split(_FAILED_SECTION, 1)[1]
        failed = {item for item in ids if f"- {item} — " in section}
    return {
        "results": [
            {
                "item_id": item,
                "status": "fail" if item in failed else "pass",
                "finding_id": None,
                "new_finding": None,
                "reason": "a deterministic check failed" if item in failed else "",
            }
            for item in ids
        ]
    }


def _finding_is_real(context: StageContext) -> tuple[str, bool]:
    path, line, end_line, side = _location(context)
    distance = _defect_distance(context, path, line, end_line, side)
    return f"{path}:{line}", distance is not None and distance <= context.config.line_jitter


def _location(context: StageContext) -> tuple[str, int, int | None, str]:
    block = _block(context, "finding")
    match = _LOCATION.search(block)
    if match is None or ":" not in match.group("where"):
        raise LookupError("no `Location:` line in the finding block")
    path, _, lines = match.group("where").rpartition(":")
    first, _, last = lines.partition("-")
    side = "LEFT" if "base line numbers" in block or "(LEFT)" in block else "RIGHT"
    return path, int(first), int(last) if last else None, side


def _defect_distance(
    context: StageContext, path: str, line: int, end_line: int | None, side: str | None
) -> int | None:
    """Lines to the nearest known defect in ``path`` (``None``: none there)."""
    last = end_line if end_line is not None and end_line >= line else line
    distances = [
        _range_gap(line, last, defect)
        for defect in context.case.defects
        if defect.path == path
        and defect.first_line is not None
        and defect.side.value == (side or "RIGHT")
    ]
    return min(distances) if distances else None


def _range_gap(first: int, last: int, defect: TruthDefect) -> int:
    assert defect.first_line is not None and defect.last_line is not None  # filtered by caller
    if last < defect.first_line:
        return defect.first_line - last
    if defect.last_line < first:
        return first - defect.last_line
    return 0


def _wrong(context: StageContext) -> bool:
    return context.rng.random() < context.config.check_error_rate


def _block(context: StageContext, label: str) -> str:
    match = re.search(
        rf"<<<UNTRUSTED {re.escape(label)} (?P<nonce>[0-9a-f]+)\n(?P<body>.*?)\n"
        rf"UNTRUSTED {re.escape(label)} (?P=nonce)>>>",
        context.user_text,
        re.DOTALL,
    )
    if match is None:
        raise LookupError(f"{context.request.stage} request without its {label!r} block")
    return match.group("body")


RESPONDERS: Mapping[str, Responder] = {
    "checklist": respond_checklist,
    "confirm": respond_confirm,
    "discover": respond_discover,
    "fact_check": respond_fact_check,
    "judge": respond_judge,
    "recheck": respond_recheck,
    "synthesize": respond_synthesize,
}
