"""Blog posts."""

from dataclasses import dataclass

from blog.slugs import slugify


@dataclass(frozen=True)
class Post:
    title: str
    body: str

    @property
    def slug(self) -> str:
        return slugify(self.title, fallback="post")
