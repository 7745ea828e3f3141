"""The simulator's verifying stages: synthesize, confirm, fact-check, recheck, checklist, and the
eval's own judge.

Each answers about one finding (or one cluster) that the pipeline shows in an untrusted block:
the simulator reads its location back and asks whether a known defect is there, within the line
jitter its own reviewers apply. The answer is then wrong with ``check_error_rate``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from assay.eval._sim_context import StageContext
from assay.eval.cases import TruthDefect
from assay.eval.judge import JUDGE_BLOCK

__all__ = [
    "respond_checklist",
    "respond_confirm",
    "respond_fact_check",
    "respond_judge",
    "respond_recheck",
    "respond_synthesize",
]


def respond_judge(context: StageContext) -> dict[str, Any]:
    """Pairs a defect with each finding in its file within ``line_jitter + 1`` lines (the
    simulated reviewers' own precision), each decision wrong with ``check_error_rate``."""
    document = json.loads(_block(context, JUDGE_BLOCK))
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
