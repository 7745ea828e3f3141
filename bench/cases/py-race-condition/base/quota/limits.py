"""Quota limits per plan."""

LIMITS = {"free": 100, "pro": 10_000}


def limit_for(plan: str) -> int:
    return LIMITS.get(plan, LIMITS["free"])
