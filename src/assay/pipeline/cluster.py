"""Stage 4, cluster: group the findings of every rep (and the static analyzers) by defect.

Two findings are about the same defect when all of these hold:

1. **Same file and side.** Paths are compared normalized (``\\`` → ``/``, no ``./`` or leading
   ``/``); a finding on the old path of a renamed file counts as the new path only when the
   caller passes ``renames`` (old → new). LEFT (base) and RIGHT (head) line numbers are not
   comparable, so the side is part of the key.
2. **Near lines.** The ranges ``line..end_line`` overlap or are at most ``line_window`` lines
   apart.
3. **The same defect in words**, by the first rule that applies:

   - both are static findings of the same rule on overlapping lines;
   - one is a static finding whose rule fails on execution (``certain_failure``) and the other's
     title names the symbol the analyzer flagged (F821 on `summ`, and a model's "`summ` is not
     defined, NameError"), on overlapping lines: the analyzer is deterministic evidence for the
     model's finding;
   - text similarity: ``title`` ≥ ``min_title_similarity``, or, when both have evidence,
     ``text`` ≥ ``min_evidence_similarity``.

   ``title`` and ``text`` are rapidfuzz ``token_set_ratio`` scores (0–100) over comparable text:
   ``utils.default_process`` (lower case, punctuation to spaces), CJK runs split into single
   characters (Chinese has no spaces, so a character is its word), and common function words of
   both languages dropped. ``text`` compares title plus evidence, with ``path:line`` references
   and bare numbers removed first: nearby findings cite the same places, which says nothing
   about whether they describe the same defect. Evidence alone is a weak signal (nearby findings
   quote the same code); together with the title it is a strong one.

The thresholds (75 and 66) come from the labelled pairs in ``tests/pipeline/test_cluster.py``
(same-defect paraphrases across reps against different defects on nearby lines, English and
Chinese). They are set for precision: merging two defects inflates votes and can make a finding
block, while splitting one only lowers its support. ``docs/clustering.md`` has the measurements.

**Linkage.** Findings are taken in input order. A finding joins an existing cluster only if it is
near at least one of its members *and* its mean margin over *all* members is ≥ 0, where a pair's
margin is ``max(title − min_title_similarity, text − min_evidence_similarity)`` (a rule match
counts as a perfect title). This is average linkage: a member similar to just one end of a
cluster cannot drag in findings that resemble only itself (single-linkage drift). Among the
clusters it qualifies for, it joins the one with the highest mean margin (ties: the earliest);
otherwise it starts a cluster. Clusters are ordered by first appearance and members keep input
order, so the same input always gives the same clusters, and members are never rewritten.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, utils

from assay.model import ClaimKind, Finding, FindingSource, Severity

__all__ = [
    "DEFAULT_LINE_WINDOW",
    "DEFAULT_MIN_EVIDENCE_SIMILARITY",
    "DEFAULT_MIN_TITLE_SIMILARITY",
    "Cluster",
    "cluster_findings",
    "normalize_path",
]

DEFAULT_LINE_WINDOW = 3
DEFAULT_MIN_TITLE_SIMILARITY = 75.0
"""Title ``token_set_ratio`` at or above which two nearby findings are the same defect."""
DEFAULT_MIN_EVIDENCE_SIMILARITY = 66.0
"""Title-plus-evidence ``token_set_ratio`` at or above which two nearby findings are the same."""

_EVIDENCE_CHARS = 800
"""Evidence characters compared: the claim comes first; the tail adds cost, not signal."""

_RULE_MATCH_SIMILARITY = 100.0

# Words that carry no meaning about the defect; they make any two sentences look alike.
_FUNCTION_WORDS = frozenset(
    "a an the is are was were be been being of to in on at by for with from and or as it its "
    "this that these those when where which while so if then than into after before because "
    "can could may might will would should does do did has have had there their them they we "
    "you i".split()
)
_FUNCTION_CHARACTERS = frozenset("的了在是会被时中后将把与及和或对而就也都还该其之")
_CJK_RUN = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)")
_PLACE = re.compile(r"[A-Za-z0-9_./\\-]+:\d+(?:-\d+)?")
"""A ``path:line`` or ``path:start-end`` reference."""
_BACKTICKED_SYMBOL = re.compile(r"`([A-Za-z_][\w.]*)`")


@dataclass(frozen=True)
class Cluster:
    """Findings about one defect, from any number of reps and analyzers.

    Attributes:
        members: The findings, in input order (never rewritten).
    """

    members: tuple[Finding, ...]

    @property
    def votes(self) -> int:
        """Distinct discovery reps among the model members (a rep that repeats itself counts
        once; static members and members without a rep do not count)."""
        return len(
            {
                member.rep
                for member in self.members
                if member.source is FindingSource.LLM and member.rep is not None
            }
        )

    @property
    def static(self) -> bool:
        """A static analyzer reported it: deterministic evidence, whatever the votes."""
        return any(member.source is FindingSource.STATIC for member in self.members)

    @property
    def severities(self) -> tuple[Severity, ...]:
        """The distinct severities members argued, most severe first."""
        return tuple(sorted({member.severity for member in self.members}, key=_rank))

    @property
    def max_severity(self) -> Severity:
        """The most severe level any member argued."""
        return self.severities[0]

    @functools.cached_property
    def representative(self) -> Finding:
        """The best-supported member.

        A static member if there is one (the first of the most severe static members);
        otherwise the member whose text is most similar to the others (highest summed pair
        similarity, the clustering's own measure); ties go to the earliest member.
        """
        statics = [m for m in self.members if m.source is FindingSource.STATIC]
        if statics:
            most_severe = min(_rank(member.severity) for member in statics)
            return next(m for m in statics if _rank(m.severity) == most_severe)
        if len(self.members) <= 2:
            return self.members[0]
        prepared = [_prepare(member, path=member.path) for member in self.members]
        totals = [
            sum(_similarity(one, other) for other in prepared if other is not one)
            for one in prepared
        ]
        return self.members[totals.index(max(totals))]


def cluster_findings(
    findings: Sequence[Finding],
    *,
    line_window: int = DEFAULT_LINE_WINDOW,
    min_title_similarity: float = DEFAULT_MIN_TITLE_SIMILARITY,
    min_evidence_similarity: float = DEFAULT_MIN_EVIDENCE_SIMILARITY,
    renames: Mapping[str, str] | None = None,
) -> list[Cluster]:
    """Group findings about the same defect (see the module docstring for the rule).

    Args:
        findings: Every rep's findings and the static findings, in a stable order (it decides
            cluster order and ties).
        line_window: Largest gap, in lines, between two findings' ranges that still counts as
            near.
        min_title_similarity: Title similarity (0–100) that makes nearby findings the same.
        min_evidence_similarity: Title-plus-evidence similarity (0–100) that does, when both
            findings have evidence.
        renames: Old path → new path of renamed files; a finding on an old path is grouped
            with those on the new one. Without it, paths are compared as given.

    Returns:
        The clusters, ordered by their first member's position in ``findings``.

    Example::

        clusters = cluster_findings([*static_findings, *rep_findings])
        [(cluster.representative.title, cluster.votes) for cluster in clusters]
    """
    thresholds = _Thresholds(line_window, min_title_similarity, min_evidence_similarity)
    renamed = {normalize_path(old): normalize_path(new) for old, new in (renames or {}).items()}
    groups: list[list[_Prepared]] = []
    by_file: dict[tuple[str, str], list[int]] = {}
    for finding in findings:
        path = normalize_path(finding.path)
        item = _prepare(finding, path=renamed.get(path, path))
        candidates = by_file.setdefault(item.file_key, [])
        best = _best_cluster(item, candidates, groups, thresholds)
        if best is None:
            candidates.append(len(groups))
            groups.append([item])
        else:
            groups[best].append(item)
    return [Cluster(members=tuple(item.finding for item in group)) for group in groups]


def normalize_path(path: str) -> str:
    """A finding's path as clustering compares it: ``/`` separators, no ``./``, ``..`` folded,
    no leading ``/`` (``"./app//db.py"`` → ``"app/db.py"``)."""
    normalized = path.strip().replace("\\", "/")
    while normalized.startswith("./"):
        normalized = normalized[2:]
    normalized = normalized.lstrip("/")
    return posixpath.normpath(normalized) if normalized else normalized


@dataclass(frozen=True)
class _Thresholds:
    line_window: int
    title: float
    text: float


_DEFAULT_THRESHOLDS = _Thresholds(
    DEFAULT_LINE_WINDOW, DEFAULT_MIN_TITLE_SIMILARITY, DEFAULT_MIN_EVIDENCE_SIMILARITY
)


@dataclass(frozen=True)
class _Prepared:
    """A finding with everything the comparisons need, computed once."""

    finding: Finding
    file_key: tuple[str, str]
    start: int
    end: int
    title_text: str
    full_text: str | None
    """Title plus evidence, comparable form; ``None`` without evidence."""
    symbols: frozenset[str]
    """For a certain-failure static finding: the symbols its analyzer flagged."""


def _prepare(finding: Finding, *, path: str) -> _Prepared:
    end = max(finding.line, finding.end_line or finding.line)
    title_text = _comparable(finding.title)
    evidence = finding.evidence.strip()
    full_text = None
    if evidence:
        evidence_text = _comparable(_without_places(evidence[:_EVIDENCE_CHARS]))
        words = f"{title_text} {evidence_text}".split()
        full_text = " ".join(word for word in words if not word.isdigit())
    return _Prepared(
        finding=finding,
        file_key=(path, finding.side.value),
        start=finding.line,
        end=end,
        title_text=title_text,
        full_text=full_text,
        symbols=_flagged_symbols(finding),
    )


def _best_cluster(
    item: _Prepared,
    candidates: list[int],
    groups: list[list[_Prepared]],
    thresholds: _Thresholds,
) -> int | None:
    best: int | None = None
    best_margin = 0.0
    for index in candidates:
        group = groups[index]
        if not any(_gap(item, member) <= thresholds.line_window for member in group):
            continue
        margin = sum(_margin(item, member, thresholds) for member in group) / len(group)
        if margin >= 0 and (best is None or margin > best_margin):
            best, best_margin = index, margin
    return best


def _margin(one: _Prepared, other: _Prepared, thresholds: _Thresholds) -> float:
    """How far above the nearer threshold the pair is (≥ 0: the same defect)."""
    if _rule_match(one, other):
        return _RULE_MATCH_SIMILARITY - thresholds.title
    margin = fuzz.token_set_ratio(one.title_text, other.title_text) - thresholds.title
    if one.full_text is not None and other.full_text is not None:
        text = fuzz.token_set_ratio(one.full_text, other.full_text)
        margin = max(margin, text - thresholds.text)
    return margin


def _similarity(one: _Prepared, other: _Prepared) -> float:
    """The pair's similarity on the clustering's scale, for choosing a representative."""
    return _margin(one, other, _DEFAULT_THRESHOLDS)


def _rule_match(one: _Prepared, other: _Prepared) -> bool:
    if _gap(one, other) > 0:
        return False
    first, second = one.finding, other.finding
    if first.source is FindingSource.STATIC and second.source is FindingSource.STATIC:
        return first.rule is not None and first.rule == second.rule
    return _names_symbol(one, second) or _names_symbol(other, first)


def _names_symbol(static: _Prepared, finding: Finding) -> bool:
    """A model finding whose title names a symbol the certain-failure analyzer flagged."""
    if not static.symbols or finding.source is not FindingSource.LLM:
        return False
    return any(_mentions(finding.title, symbol) for symbol in static.symbols)


def _mentions(text: str, symbol: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(symbol)}(?![\w])", text) is not None


def _flagged_symbols(finding: Finding) -> frozenset[str]:
    if finding.source is not FindingSource.STATIC or not finding.certain_failure:
        return frozenset()
    symbols = set(_BACKTICKED_SYMBOL.findall(finding.title))
    symbols.update(
        claim.needle
        for claim in finding.claims
        if claim.kind in (ClaimKind.SYMBOL_UNDEFINED, ClaimKind.SYMBOL_DEFINED) and claim.needle
    )
    return frozenset(symbol for symbol in symbols if symbol.strip())


def _gap(one: _Prepared, other: _Prepared) -> int:
    """Lines between two ranges (0 when they overlap)."""
    return max(0, max(one.start, other.start) - min(one.end, other.end))


def _without_places(text: str) -> str:
    """The text without its ``path:line`` references (whole whitespace-separated words)."""
    # Word by word, and the regex only where a colon is: scanning whole evidence texts with
    # it costs more than all the similarity scores of a round.
    return " ".join(word for word in text.split() if ":" not in word or not _PLACE.search(word))


def _comparable(text: str) -> str:
    """Text as the similarity scores read it: processed, CJK split, function words dropped."""
    words: list[str] = []
    for word in utils.default_process(text).split():
        if word.isascii():
            if word not in _FUNCTION_WORDS:
                words.append(word)
            continue
        for part in _CJK_RUN.split(word):
            if not part:
                continue
            if _CJK_RUN.fullmatch(part):
                words.extend(char for char in part if char not in _FUNCTION_CHARACTERS)
            elif part not in _FUNCTION_WORDS:
                words.append(part)
    return " ".join(words)


def _rank(severity: Severity) -> int:
    return severity.rank
