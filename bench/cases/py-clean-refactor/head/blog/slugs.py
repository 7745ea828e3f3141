"""URL slugs."""

import re

_WORD = re.compile(r"[a-z0-9]+")


def slugify(text: str, *, fallback: str, limit: int = 80) -> str:
    """Lower-case words of ``text`` joined by dashes, at most ``limit`` characters."""
    return "-".join(_WORD.findall(text.lower()))[:limit] or fallback
