"""The audit log."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    actor: str
    action: str
