"""Settings from the environment."""

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    database_url: str
    http_timeout_s: float = 10.0

    @classmethod
    def from_env(cls) -> "Settings":
        timeout = os.environ.get("HTTP_TIMEOUT_S")
        try:
            http_timeout_s = float(timeout) if timeout else 10.0
        except ValueError:
            raise ValueError(f"HTTP_TIMEOUT_S must be a number, not {timeout!r}") from None
        if http_timeout_s <= 0:
            raise ValueError("HTTP_TIMEOUT_S must be positive")
        return cls(
            database_url=os.environ.get("DATABASE_URL", "sqlite:///app.db"),
            http_timeout_s=http_timeout_s,
        )
