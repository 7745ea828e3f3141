"""Translation catalogs."""

import os
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


def load_all(locale_dir: str) -> dict[str, dict[str, str]]:
    """Every catalog in ``locale_dir``, by language code."""
    catalogs = {}
    for name in sorted(os.listdir(locale_dir)):
        if not name.endswith(".po"):
            continue
        handle = open(os.path.join(locale_dir, name), encoding="utf-8")
        catalogs[name[:-3]] = parse_catalog(handle.read())
    return catalogs
