"""Stage 4, cluster: group the reps' findings about the same defect; votes = distinct reps.

This first version groups findings that agree exactly on place and title (case and spacing
folded); the ensemble issue replaces it with similarity clustering.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.model import Finding
from assay.pipeline.gate import SupportedFinding

__all__ = ["cluster_exact"]


def cluster_exact(findings: Sequence[Finding]) -> list[SupportedFinding]:
    """One entry per distinct (path, line, side, title); the first member represents it."""
    groups: dict[tuple[str, int, str, str], list[Finding]] = {}
    for finding in findings:
        key = (
            finding.path,
            finding.line,
            finding.side.value,
            " ".join(finding.title.lower().split()),
        )
        groups.setdefault(key, []).append(finding)
    return [
        SupportedFinding(members[0], votes=len({m.rep for m in members if m.rep is not None}) or 1)
        for members in groups.values()
    ]
