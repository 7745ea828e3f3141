"""Where uploaded files live."""

from pathlib import Path

UPLOAD_ROOT = Path("/var/lib/app/uploads")


def store(name: str, content: bytes) -> Path:
    safe_name = Path(name).name
    target = UPLOAD_ROOT / safe_name
    target.write_bytes(content)
    return target
