"""zh round summary against the seed page's own text (golden/seed002_summary.zh.txt)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from assay.model import Kpi
from assay.render import SUMMARY_MARKER, render_summary

from ._factory import full_sha, reported, round_result
from ._seed import golden_text, parse_summary_items
from ._visible import visible_text


def _seed_kpi(text: str) -> Kpi:
    lines = text.split("\n")
    start = lines.index("{")
    end = lines.index("}", start)
    return Kpi.model_validate(json.loads("\n".join(lines[start : end + 1])))


def test_round_summary_reads_exactly_like_seed_002_round_12() -> None:
    text = golden_text("seed002_summary.zh.txt")
    blocking, non_blocking = parse_summary_items(text)
    kpi = _seed_kpi(text)
    findings = [
        reported(
            f"b{index}",
            item.severity,
            item.title,
            item.path,
            item.line,
            category=item.category,
            votes=item.votes,
            first_seen_round=item.first_seen_round,
            evidence=item.evidence,
            suggestion=item.suggestion,
        )
        for index, item in enumerate(blocking)
    ]
    findings += [
        reported(f"n{index}", item.severity, item.title, item.path, item.line, votes=item.votes)
        for index, item in enumerate(non_blocking)
    ]
    result = round_result(
        findings,
        number=1353,
        title="feat: add RDMA transport for ViT output",
        author="ydshi0",
        head_sha=full_sha("2702a57fb971"),
        base_sha=full_sha("f1a54a5f1171"),
        reviewed_at=datetime(2026, 9, 1, 14, 46, tzinfo=UTC),
        round_index=12,
        kpi=kpi,
    )
    assert (len(blocking), len(non_blocking)) == (1, 3)

    markdown = render_summary(result, lang="zh", platform="rtp-llm-agent-platform")

    assert visible_text(markdown) == text
    assert markdown.rstrip("\n").endswith(SUMMARY_MARKER)
