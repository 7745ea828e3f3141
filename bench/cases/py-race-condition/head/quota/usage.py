"""Per-key usage counters, shared by the request worker threads."""

import threading

from quota.limits import limit_for


class UsageCounter:
    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()

    def allow(self, api_key: str, plan: str) -> bool:
        """Count one call; False once the key is over its plan's limit."""
        used = self._counts.get(api_key, 0)
        if used >= limit_for(plan):
            return False
        self._counts[api_key] = used + 1
        return True
