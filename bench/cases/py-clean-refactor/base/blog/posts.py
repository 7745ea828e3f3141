"""Blog posts."""

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Post:
    title: str
    body: str

    @property
    def slug(self) -> str:
        words = re.findall(r"[a-z0-9]+", self.title.lower())
        return "-".join(words)[:80] or "post"
