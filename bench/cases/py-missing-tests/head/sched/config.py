"""Scheduler configuration."""

import re

_PART = re.compile(r"(\d+)([dhms])")
_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"not a boolean: {text!r}")


def parse_duration(text: str) -> int:
    """Seconds in a duration such as ``1h30m`` or ``45s``."""
    compact = text.replace(" ", "").lower()
    parts = _PART.findall(compact)
    if not parts or "".join(n + u for n, u in parts) != compact:
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(number) * _SECONDS[unit] for number, unit in parts)
