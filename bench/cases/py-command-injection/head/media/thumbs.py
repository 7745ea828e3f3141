"""Thumbnails of uploaded images."""

import subprocess
from pathlib import Path

THUMB_DIR = Path("/var/cache/thumbs")


def thumb_path(upload_name: str) -> Path:
    return THUMB_DIR / f"{Path(upload_name).stem}.png"


def make_thumbnail(upload_path: str, upload_name: str) -> Path:
    """Write the thumbnail of an upload; ``upload_name`` is the client's file name."""
    target = thumb_path(upload_name)
    subprocess.run(
        f"convert '{upload_path}' -resize 200x200 '{target}'", shell=True, check=True
    )
    return target
