"""Matching a review's findings to a case's known defects: deterministic and documented.

A finding *may match* a defect when all of these hold:

1. **Same file and side**: the paths are equal after normalization (``./`` and leading ``/``
   dropped, ``\\`` → ``/``), and both refer to the same version (head lines by default).
2. **Near lines**: the finding's range ``[line, end_line]`` and the defect's range
   ``[line_start, line_end]`` are at most ``window`` lines apart (0 = they overlap). Scores are
   reported at windows 0, 3 and 10; 3 is the headline figure (a reviewer who points at the
   call rather than at the argument two lines up still found the bug).
3. **Compatible category**: after mapping synonyms onto Assay's category list (the one the
   discovery prompt offers), the categories are equal or listed as compatible below. The
   relation is deliberately small: a category that names a different failure (a ``security``
   finding on a ``performance`` defect) does not match.

Then the assignment is **one-to-one**: a maximum matching (as many defects found as possible),
and among maximum matchings the one with the smallest total cost, cost = 2 × line distance
+ 1 if the categories are compatible but not equal. Ties go to the earlier finding (in the
review's order) and the earlier defect (in ``truth.json`` order), so the same inputs always give
the same pairs. A second finding about an already matched defect is a duplicate: it counts as
a false positive, which is how the ensemble's deduplication shows up in precision.

Compatible pairs (symmetric), besides equality:

- ``correctness`` with ``error-handling``, ``resource-leak``, ``concurrency``, ``api-contract``,
  ``compatibility``, ``build`` (``correctness`` is the umbrella reviewers reach for first);
- ``error-handling`` with ``resource-leak`` (a missing ``finally`` is both) and with
  ``observability`` (a swallowed error);
- ``api-contract`` with ``compatibility``; ``performance`` with ``resource-leak``;
- ``maintainability``, ``style`` and ``docs`` with each other.

``security`` and ``tests`` match only themselves. A category outside the list matches only an
identical one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from assay.eval.cases import TruthDefect
from assay.model import FindingSource, ReportedFinding, Severity, Side

__all__ = [
    "CATEGORIES",
    "DEFAULT_WINDOWS",
    "PRIMARY_WINDOW",
    "MatchPolicy",
    "MatchResult",
    "MatchedPair",
    "Predicted",
    "canonical_category",
    "categories_compatible",
    "line_distance",
    "match_findings",
    "match_pairs",
    "predicted_from_reported",
]

DEFAULT_WINDOWS: tuple[int, ...] = (0, 3, 10)
PRIMARY_WINDOW = 3

CATEGORIES: tuple[str, ...] = (
    "correctness",
    "security",
    "concurrency",
    "performance",
    "error-handling",
    "resource-leak",
    "api-contract",
    "compatibility",
    "build",
    "tests",
    "observability",
    "maintainability",
    "style",
    "docs",
)
"""Assay's categories: the list the discovery prompt gives the model."""

_ALIASES: dict[str, str] = {
    # AACR-Bench's four categories.
    "code-defect": "correctness",
    "maintainability-and-readability": "maintainability",
    "security-vulnerability": "security",
    # Common synonyms reviewers (and other benchmarks) use.
    "bug": "correctness",
    "logic": "correctness",
    "logic-error": "correctness",
    "functional": "correctness",
    "undefined-name": "correctness",
    "null-safety": "correctness",
    "injection": "security",
    "vulnerability": "security",
    "path-traversal": "security",
    "race-condition": "concurrency",
    "thread-safety": "concurrency",
    "race": "concurrency",
    "perf": "performance",
    "efficiency": "performance",
    "exception-handling": "error-handling",
    "errors": "error-handling",
    "error": "error-handling",
    "leak": "resource-leak",
    "resource-management": "resource-leak",
    "resources": "resource-leak",
    "api": "api-contract",
    "contract": "api-contract",
    "breaking-change": "api-contract",
    "backward-compatibility": "compatibility",
    "test": "tests",
    "testing": "tests",
    "missing-tests": "tests",
    "test-coverage": "tests",
    "logging": "observability",
    "readability": "maintainability",
    "documentation": "docs",
    "formatting": "style",
}

_COMPATIBLE: frozenset[frozenset[str]] = frozenset(
    frozenset(pair)
    for pair in [
        *(
            ("correctness", other)
            for other in (
                "error-handling",
                "resource-leak",
                "concurrency",
                "api-contract",
                "compatibility",
                "build",
            )
        ),
        ("error-handling", "resource-leak"),
        ("error-handling", "observability"),
        ("api-contract", "compatibility"),
        ("performance", "resource-leak"),
        *combinations(("maintainability", "style", "docs"), 2),
    ]
)


def canonical_category(category: str | None) -> str:
    """Map a category onto Assay's list: lower-case, kebab-case, synonyms resolved.

    Args:
        category: As a reviewer or a benchmark wrote it (``"Code Defect"``, ``"race condition"``).

    Returns:
        One of :data:`CATEGORIES`, or the normalized text when it is none of them (``"other"``
        for an empty one).
    """
    if not category:
        return "other"
    normalized = "-".join(category.strip().lower().replace("_", " ").replace("/", " ").split())
    return _ALIASES.get(normalized, normalized) or "other"


def categories_compatible(first: str | None, second: str | None) -> bool:
    """Whether two categories may describe the same defect (see the module docstring)."""
    a, b = canonical_category(first), canonical_category(second)
    return a == b or frozenset((a, b)) in _COMPATIBLE


@dataclass(frozen=True)
class Predicted:
    """A finding as the matcher sees it."""

    id: str
    path: str
    line: int
    end_line: int | None = None
    side: Side = Side.RIGHT
    category: str = "correctness"
    severity: Severity = Severity.P2
    blocking: bool = False
    title: str = ""
    votes: int = 1
    """Distinct discovery reps behind it."""
    static: bool = False
    """An analyzer (or a deterministic checklist check) reported it: needs no votes."""

    @property
    def last_line(self) -> int:
        return self.end_line if self.end_line is not None else self.line


def predicted_from_reported(reported: ReportedFinding) -> Predicted:
    """The matcher's view of a round's finding (effective severity, blocking flag)."""
    finding = reported.finding
    return Predicted(
        id=reported.id,
        path=finding.path,
        line=finding.line,
        end_line=finding.end_line,
        side=finding.side,
        category=finding.category,
        severity=reported.severity,
        blocking=reported.blocking,
        title=finding.title,
        votes=reported.votes,
        static=finding.source is FindingSource.STATIC,
    )


@dataclass(frozen=True)
class MatchPolicy:
    """How strict matching is."""

    window: int = PRIMARY_WINDOW
    """Largest gap, in lines, between the finding's and the defect's ranges."""
    check_category: bool = True
    """Require compatible categories (off: location only)."""


@dataclass(frozen=True)
class MatchedPair:
    finding: int
    """Index into the findings given to the matcher."""
    truth: int
    """Index into the defects given to the matcher."""
    distance: int | None
    """Lines between the two ranges (0: they overlap); ``None`` when matched without location
    (the LLM judge on a defect that has none)."""


@dataclass(frozen=True)
class MatchResult:
    pairs: tuple[MatchedPair, ...]
    findings: int
    truths: int

    @property
    def true_positives(self) -> int:
        return len(self.pairs)

    @property
    def false_positives(self) -> int:
        return self.findings - len(self.pairs)

    @property
    def false_negatives(self) -> int:
        return self.truths - len(self.pairs)

    def matched_truths(self) -> frozenset[int]:
        return frozenset(pair.truth for pair in self.pairs)


def line_distance(finding: Predicted, truth: TruthDefect) -> int | None:
    """Lines between the finding's and the defect's ranges (0 when they overlap).

    Returns:
        ``None`` when they cannot be compared: different files or sides, or a defect without
        a location.
    """
    if truth.path is None or truth.first_line is None or truth.last_line is None:
        return None
    if _normalize_path(finding.path) != _normalize_path(truth.path) or finding.side != truth.side:
        return None
    if finding.last_line < truth.first_line:
        return truth.first_line - finding.last_line
    if truth.last_line < finding.line:
        return finding.line - truth.last_line
    return 0


def match_findings(
    findings: Sequence[Predicted], truths: Sequence[TruthDefect], policy: MatchPolicy
) -> MatchResult:
    """Assign findings to defects one-to-one by the rules in the module docstring.

    Args:
        findings: The review's findings, in the review's order.
        truths: The case's defects, in ``truth.json`` order.
        policy: The window and whether categories must be compatible.

    Returns:
        The pairs, sorted by defect.
    """
    candidates: list[tuple[int, int, int, int]] = []
    for finding_index, finding in enumerate(findings):
        for truth_index, truth in enumerate(truths):
            distance = line_distance(finding, truth)
            if distance is None or distance > policy.window:
                continue
            category_penalty = 0
            if policy.check_category:
                if not categories_compatible(finding.category, truth.category):
                    continue
                same = canonical_category(finding.category) == canonical_category(truth.category)
                category_penalty = 0 if same else 1
            candidates.append(
                (finding_index, truth_index, 2 * distance + category_penalty, distance)
            )
    chosen = match_pairs(len(findings), len(truths), [(f, t, cost) for f, t, cost, _ in candidates])
    distances = {(f, t): d for f, t, _, d in candidates}
    pairs = tuple(
        MatchedPair(finding=f, truth=t, distance=distances[(f, t)])
        for f, t in sorted(chosen, key=lambda pair: pair[1])
    )
    return MatchResult(pairs=pairs, findings=len(findings), truths=len(truths))


def match_pairs(
    left: int, right: int, edges: Sequence[tuple[int, int, int]]
) -> list[tuple[int, int]]:
    """A maximum one-to-one matching of least total cost (successive shortest paths).

    Args:
        left: Number of left nodes (findings).
        right: Number of right nodes (defects).
        edges: ``(left index, right index, cost)`` of the allowed pairs, cost ≥ 0.

    Returns:
        The chosen ``(left, right)`` pairs. Deterministic: edges are explored in the order
        given (callers give them by finding, then defect), and a path replaces the current best
        only when strictly cheaper.
    """
    source, sink = left + right, left + right + 1
    graph: list[list[list[int]]] = [[] for _ in range(left + right + 2)]
    # Each arc is [to, capacity, cost, index of the reverse arc in graph[to]].

    def add_arc(frm: int, to: int, cost: int) -> None:
        graph[frm].append([to, 1, cost, len(graph[to])])
        graph[to].append([frm, 0, -cost, len(graph[frm]) - 1])

    used_left = sorted({edge[0] for edge in edges})
    used_right = sorted({edge[1] for edge in edges})
    for node in used_left:
        add_arc(source, node, 0)
    for finding, truth, cost in edges:
        add_arc(finding, left + truth, cost)
    for node in used_right:
        add_arc(left + node, sink, 0)

    while True:
        distance: list[float] = [float("inf")] * len(graph)
        previous: list[tuple[int, int] | None] = [None] * len(graph)
        distance[source] = 0
        queue = deque([source])
        queued = [False] * len(graph)
        queued[source] = True
        while queue:
            node = queue.popleft()
            queued[node] = False
            for arc_index, (to, capacity, cost, _) in enumerate(graph[node]):
                if capacity > 0 and distance[node] + cost < distance[to]:
                    distance[to] = distance[node] + cost
                    previous[to] = (node, arc_index)
                    if not queued[to]:
                        queued[to] = True
                        queue.append(to)
        if previous[sink] is None:
            break
        node = sink
        while node != source:
            step = previous[node]
            assert step is not None  # every node on the path has a predecessor
            frm, arc_index = step
            arc = graph[frm][arc_index]
            arc[1] -= 1
            graph[node][arc[3]][1] += 1
            node = frm

    return [
        (node, to - left)
        for node in used_left
        for to, capacity, _, _ in graph[node]
        if left <= to < left + right and capacity == 0
    ]


def _normalize_path(path: str) -> str:
    normalized = path.strip().replace("\\", "/")
    while normalized.startswith("./"):
        normalized = normalized[2:]
    return normalized.lstrip("/")
