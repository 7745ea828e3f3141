"""Subscriptions."""

from dataclasses import dataclass
from datetime import datetime


@dataclass
class Subscription:
    id: int
    plan: str
    trial_ends_at: datetime | None
