"""Translation catalogs."""

from pathlib import Path


def parse_catalog(text: str) -> dict[str, str]:
    entries: dict[str, str] = {}
    key = None
    for line in text.splitlines():
        if line.startswith("msgid "):
            key = line[6:].strip('"')
        elif line.startswith("msgstr ") and key is not None:
            entries[key] = line[7:].strip('"')
            key = None
    return entries


def load_catalog(path: Path) -> dict[str, str]:
    with path.open(encoding="utf-8") as handle:
        return parse_catalog(handle.read())
