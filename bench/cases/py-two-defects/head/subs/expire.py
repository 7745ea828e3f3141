"""The nightly trial-expiry job."""

from datetime import datetime

from subs.models import Subscription


def expired_trials(subscriptions: list[Subscription]) -> list[Subscription]:
    """Trials that ended before now (``trial_ends_at`` is stored in UTC, aware)."""
    now = datetime.now()
    return [s for s in subscriptions if s.plan == "trial" and s.trial_ends_at < now]


def downgrade(subscriptions: list[Subscription]) -> int:
    count = 0
    for subscription in expired_trials(subscriptions):
        subscription.plan = "free"
        count += 1
    return count
