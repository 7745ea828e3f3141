"""Strengths: the discovery reps' concrete positives, near-duplicates merged.

Several reps often praise the same change in different words. ``dedupe_strengths`` clusters
near-duplicate texts (rapidfuzz similarity; a lower bar when two strengths cite the same
``path:line``), keeps the first wording of each cluster, and orders clusters by how many reps
mentioned them, so the best-supported positives come first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz import fuzz

from assay.model import Strength

__all__ = ["dedupe_strengths"]

_SAME_TEXT = 88.0
"""Similarity (0-100) above which two strengths are the same remark."""
_SAME_PLACE = 70.0
"""The lower bar for two strengths that cite the same path and line."""
_PUNCTUATION = re.compile(r"[\s\W_]+", re.UNICODE)


def dedupe_strengths(
    strengths: Sequence[Strength],
    *,
    limit: int | None = 12,
    threshold: float = _SAME_TEXT,
    same_place_threshold: float = _SAME_PLACE,
) -> tuple[Strength, ...]:
    """Merge near-duplicate strengths and order them by support.

    Args:
        strengths: Strengths from every rep, in rep order (blank texts are dropped).
        limit: Keep at most this many (``None``: all). The seed reviews show 4 to 12.
        threshold: Similarity (0-100, rapidfuzz) from which two texts count as one remark.
        same_place_threshold: The bar when both cite the same ``path`` and ``line``.

    Returns:
        One strength per cluster (its first wording; the first cited location found in the
        cluster when the first wording has none), most-mentioned first, ties in first-seen order.
    """
    clusters: list[list[Strength]] = []
    keys: list[str] = []
    for strength in strengths:
        key = _normalize(strength.text)
        if not key:
            continue
        for index, cluster in enumerate(clusters):
            if _same(strength, key, cluster[0], keys[index], threshold, same_place_threshold):
                cluster.append(strength)
                break
        else:
            clusters.append([strength])
            keys.append(key)
    ranked = sorted(enumerate(clusters), key=lambda pair: (-len(pair[1]), pair[0]))
    chosen = tuple(_representative(cluster) for _, cluster in ranked)
    return chosen if limit is None else chosen[:limit]


def _normalize(text: str) -> str:
    return _PUNCTUATION.sub(" ", text.casefold()).strip()


def _same(
    strength: Strength,
    key: str,
    other: Strength,
    other_key: str,
    threshold: float,
    same_place_threshold: float,
) -> bool:
    score = max(fuzz.ratio(key, other_key), fuzz.token_set_ratio(key, other_key))
    same_place = (
        strength.path is not None
        and strength.path == other.path
        and strength.line is not None
        and strength.line == other.line
    )
    return score >= (same_place_threshold if same_place else threshold)


def _representative(cluster: Sequence[Strength]) -> Strength:
    first = cluster[0]
    text = " ".join(first.text.split())
    if first.path is not None:
        return first.model_copy(update={"text": text})
    cited = next((s for s in cluster if s.path is not None), None)
    if cited is None:
        return first.model_copy(update={"text": text})
    return Strength(text=text, path=cited.path, line=cited.line)
