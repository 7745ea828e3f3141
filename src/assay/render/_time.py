"""The review timestamp: ``YYYY-MM-DD HH:MM <label>`` in a chosen time zone (seed: ``UTC+8``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["format_timestamp", "parse_timezone"]

_FIXED_OFFSET = re.compile(
    r"^(?:UTC|GMT)?(?P<sign>[+-])(?P<hours>\d{1,2})(?::?(?P<minutes>\d{2}))?$"
)


def parse_timezone(name: str) -> tzinfo:
    """Resolve ``UTC``, a fixed offset (``UTC+8``, ``UTC-03:30``, ``+0530``) or an IANA name.

    Args:
        name: The zone as a user writes it.

    Returns:
        The time zone.

    Raises:
        ValueError: ``name`` is neither a valid offset nor a known IANA zone.
    """
    stripped = name.strip()
    if stripped.upper() in {"UTC", "GMT", "Z"}:
        return UTC
    fixed = _FIXED_OFFSET.match(stripped.upper())
    if fixed is not None:
        hours, minutes = int(fixed["hours"]), int(fixed["minutes"] or 0)
        if hours > 23 or minutes > 59:
            raise ValueError(f"time zone offset out of range: {name!r}")
        offset = timedelta(hours=hours, minutes=minutes)
        return timezone(-offset if fixed["sign"] == "-" else offset)
    try:
        return ZoneInfo(stripped)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown time zone {name!r}; use UTC, an offset like UTC+8, or an IANA name"
        ) from None


def format_timestamp(moment: datetime, tz: str) -> str:
    """Format ``moment`` as ``2026-08-28 15:52 UTC+8`` in zone ``tz``.

    A naive ``moment`` is taken to be UTC. The label is ``UTC`` for a zero offset, otherwise
    ``UTC±H`` or ``UTC±H:MM`` for the offset in effect at that moment (so an IANA zone with
    daylight saving shows the offset of that date).

    Args:
        moment: When the round reviewed the head.
        tz: See ``parse_timezone``.

    Returns:
        The formatted timestamp.

    Raises:
        ValueError: ``tz`` is not a valid time zone.
    """
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    local = aware.astimezone(parse_timezone(tz))
    return f"{local:%Y-%m-%d %H:%M} {_offset_label(local.utcoffset() or timedelta(0))}"


def _offset_label(offset: timedelta) -> str:
    total_minutes = int(offset.total_seconds()) // 60
    if total_minutes == 0:
        return "UTC"
    sign = "+" if total_minutes > 0 else "-"
    hours, minutes = divmod(abs(total_minutes), 60)
    return f"UTC{sign}{hours}" if minutes == 0 else f"UTC{sign}{hours}:{minutes:02d}"
