"""How the simulated reviewer words its findings: varied like real reviewers, never random noise.

Real reps describe the same defect in different words; clustering has to see through that. The
simulator therefore picks one of several phrasings per rep for a true defect, and words its false
positives from a small set of plausible, generic review remarks.
"""

from __future__ import annotations

import random
import re

__all__ = [
    "FALSE_POSITIVE_REMARKS",
    "evidence_for",
    "false_positive_remark",
    "identifier_on",
    "title_for",
]

_CATEGORY_PHRASES = {
    "correctness": "Bug",
    "security": "Security issue",
    "concurrency": "Race condition",
    "performance": "Performance problem",
    "error-handling": "Error handling",
    "resource-leak": "Resource leak",
    "api-contract": "API contract break",
    "compatibility": "Compatibility break",
    "build": "Build break",
    "tests": "Missing tests",
    "observability": "Observability gap",
    "maintainability": "Maintainability",
    "style": "Style",
    "docs": "Documentation",
}

_SYNONYMS = (
    ("never", "does not ever"),
    ("is not", "isn't"),
    ("does not", "doesn't"),
    ("missing", "absent"),
    ("without", "with no"),
    ("returns", "gives back"),
    ("raises", "throws"),
    ("user", "caller"),
    ("input", "data"),
)

FALSE_POSITIVE_REMARKS: tuple[tuple[str, str, str], ...] = (
    ("correctness", "Possible None dereference of `{token}`", "`{token}` may be None here."),
    ("correctness", "Off-by-one in the bound on `{token}`", "The bound looks one too large."),
    ("correctness", "Return value of `{token}` is ignored", "The result is silently dropped."),
    ("error-handling", "Exception from `{token}` is not handled", "A failure here propagates."),
    ("error-handling", "Error path of `{token}` reports success", "Failures look like success."),
    ("performance", "Repeated work in the loop over `{token}`", "This is recomputed each time."),
    ("performance", "Quadratic lookup on `{token}`", "A set or dict would be linear."),
    ("security", "Input `{token}` is not validated", "Untrusted values reach this line."),
    ("concurrency", "Shared `{token}` accessed without a lock", "Two callers may interleave."),
    ("maintainability", "Magic value in `{token}` should be a constant", "Name the value."),
    ("maintainability", "`{token}` does too much", "Split the function."),
    ("tests", "No test covers `{token}`", "The new behaviour is untested."),
)
"""(category, title template, evidence template) of plausible but wrong review remarks."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_KEYWORDS = frozenset(
    "def class return import from self none true false and not for while with this that "
    "async await const function func public private static void int let var new".split()
)


def title_for(description: str, category: str, variant: int) -> str:
    """One of several phrasings of a defect's title.

    Args:
        description: The truth's description (its first sentence is used).
        category: The finding's category.
        variant: Which phrasing (any integer; wraps around).

    Returns:
        A one-line title, at most 200 characters.
    """
    sentence = _first_sentence(description) or "Defect in the changed code"
    phrase = _CATEGORY_PHRASES.get(category, category.replace("-", " ").capitalize())
    variants = (
        sentence,
        f"{phrase}: {_lower_first(sentence)}",
        _with_synonyms(sentence),
        f"{_with_synonyms(sentence)} ({phrase.lower()})",
    )
    return variants[variant % len(variants)][:200]


def evidence_for(description: str, path: str, line: int, variant: int) -> str:
    """Evidence text citing ``path:line``, worded by ``variant``."""
    text = description.strip() or "The changed code is wrong here."
    openings = (
        f"{path}:{line}: {text}",
        f"At {path}:{line}, {_lower_first(text)}",
        f"{_with_synonyms(text)} See {path}:{line}.",
    )
    return openings[variant % len(openings)]


def false_positive_remark(rng: random.Random, token: str) -> tuple[str, str, str]:
    """A plausible but wrong remark about ``token``: (category, title, evidence)."""
    category, title, evidence = rng.choice(FALSE_POSITIVE_REMARKS)
    return category, title.format(token=token), evidence.format(token=token)


def identifier_on(text: str) -> str | None:
    """The longest identifier on a line (not a keyword), or ``None``."""
    names: list[str] = [n for n in _IDENTIFIER.findall(text) if n.lower() not in _KEYWORDS]
    if not names:
        return None
    return max(names, key=len)


def _first_sentence(text: str) -> str:
    stripped = " ".join(text.split())
    for end in (". ", "; "):
        if end in stripped:
            return stripped.split(end, 1)[0].rstrip(".")
    return stripped.rstrip(".")


def _with_synonyms(text: str) -> str:
    result = text
    for word, synonym in _SYNONYMS:
        result = re.sub(rf"\b{re.escape(word)}\b", synonym, result)
    return result


def _lower_first(text: str) -> str:
    # An acronym or an identifier at the start keeps its case ("SQL built from…").
    if text[:2].isupper() or text.startswith("`"):
        return text
    return text[:1].lower() + text[1:]
