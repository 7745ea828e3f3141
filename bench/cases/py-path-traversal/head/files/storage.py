"""Where uploaded files live."""

from pathlib import Path

UPLOAD_ROOT = Path("/var/lib/app/uploads")


def store(name: str, content: bytes) -> Path:
    safe_name = Path(name).name
    target = UPLOAD_ROOT / safe_name
    target.write_bytes(content)
    return target


def read_attachment(requested: str) -> bytes:
    """Content of the attachment named in the request's ``file`` parameter."""
    target = UPLOAD_ROOT / requested
    if not target.is_file():
        raise FileNotFoundError(requested)
    return target.read_bytes()
