"""Retrying transient failures."""

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def with_retries(call: Callable[[], T], attempts: int = 3, delay: float = 0.5) -> T | None:
    """Call ``call`` until it succeeds, at most ``attempts`` times."""
    for attempt in range(attempts):
        try:
            return call()
        except Exception:
            time.sleep(delay * 2**attempt)
    return None
