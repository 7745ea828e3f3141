"""The audit log."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    actor: str
    action: str


def page(entries: list[Entry], number: int, page_size: int = 20) -> list[Entry]:
    """Page ``number`` (1-based) of the log."""
    if number < 1 or page_size < 1:
        raise ValueError("page numbers and sizes start at 1")
    start = (number - 1) * page_size
    return entries[start : start + page_size - 1]


def page_count(entries: list[Entry], page_size: int = 20) -> int:
    return (len(entries) + page_size - 1) // page_size
