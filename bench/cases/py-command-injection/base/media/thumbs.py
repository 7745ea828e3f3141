"""Thumbnails of uploaded images."""

from pathlib import Path

THUMB_DIR = Path("/var/cache/thumbs")


def thumb_path(upload_name: str) -> Path:
    return THUMB_DIR / f"{Path(upload_name).stem}.png"
