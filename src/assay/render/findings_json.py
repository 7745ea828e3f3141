"""Machine-readable findings, shaped like ``ruff --output-format json``.

A JSON array, one object per finding in body order, 2-space indent, keys sorted, every key always
present: ``null`` for an absent or empty scalar, ``[]`` for an empty list. Keys:

=================== ==========================================================================
``anchor``          where the inline comment goes: ``{line, mode, path, side, start_line,
                    start_side}``; ``mode`` is ``line``/``nearest_hunk``/``file``/``body``
``blocking``        ``true`` when the finding blocks the merge
``category``        the reviewer's category (``build``, ``concurrency`` …)
``certain_failure`` a static finding that fails on execution
``checklist_items`` ids of the failing checklist items it represents
``claims``          the checkable statements it rests on (``{count, kind, line, needle, path,
                    revision, text}``)
``code``            the analyzer's rule code (``F821``) for static findings; ``null`` for model
                    findings (no code catalog yet)
``end_line``        last line (inclusive, 1-based) or ``null``
``evidence``        the reasoning, in full
``first_seen_round`` the round it was first reported in
``gate_reason``     why it blocks or was downgraded
``id``              stable id across rounds
``line``            1-based line of ``path`` on ``side``
``name``            kebab-case ``category`` (ruff's rule name slot)
``original_severity`` what reviewers argued (``p0``…) when the gate downgraded it, else ``null``
``path``            path from the repository root
``severity``        effective severity, ``p0``…``p3``
``side``            ``RIGHT`` (head) or ``LEFT`` (base), as in GitHub's review API
``source``          ``llm`` or ``static``
``suggestion``      the proposed fix
``title``           one-line statement of the defect
``votes``           distinct discovery reps that reported it
=================== ==========================================================================
"""

from __future__ import annotations

import json
import re
from typing import TypeAlias

from assay.model import FindingSource, ReportedFinding, RoundResult

__all__ = ["finding_record", "findings_json"]

_NON_WORD = re.compile(r"[\W_]+")

JsonValue: TypeAlias = str | int | bool | list["JsonValue"] | dict[str, "JsonValue"] | None


def findings_json(result: RoundResult) -> str:
    """Render the round's findings as a JSON array (see the module docstring for the keys).

    Args:
        result: The round.

    Returns:
        The JSON text, ending with a newline.
    """
    records = [finding_record(finding) for finding in result.findings]
    return json.dumps(records, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def finding_record(reported: ReportedFinding) -> dict[str, JsonValue]:
    """One finding as a JSON-ready dict with every key present."""
    finding = reported.finding
    anchor = reported.anchor
    return {
        "anchor": {
            "line": anchor.line,
            "mode": anchor.mode.value,
            "path": anchor.path,
            "side": anchor.side.value if anchor.side is not None else None,
            "start_line": anchor.start_line,
            "start_side": anchor.start_side.value if anchor.start_side is not None else None,
        },
        "blocking": reported.blocking,
        "category": finding.category or None,
        "certain_failure": finding.certain_failure,
        "checklist_items": list(reported.checklist_items),
        "claims": [
            {
                "count": claim.count,
                "kind": claim.kind.value,
                "line": claim.line,
                "needle": claim.needle,
                "path": claim.path,
                "revision": claim.revision,
                "text": claim.text,
            }
            for claim in finding.claims
        ],
        "code": finding.rule if finding.source is FindingSource.STATIC else None,
        "end_line": finding.end_line,
        "evidence": finding.evidence or None,
        "first_seen_round": reported.first_seen_round,
        "gate_reason": reported.gate_reason or None,
        "id": reported.id,
        "line": finding.line,
        "name": _kebab(finding.category),
        "original_severity": (
            reported.original_severity.value.lower()
            if reported.original_severity is not None
            else None
        ),
        "path": finding.path,
        "severity": reported.severity.value.lower(),
        "side": finding.side.value,
        "source": finding.source.value,
        "suggestion": finding.suggestion or None,
        "title": finding.title,
        "votes": reported.votes,
    }


def _kebab(text: str) -> str | None:
    name = _NON_WORD.sub("-", text.lower()).strip("-")
    return name or None
