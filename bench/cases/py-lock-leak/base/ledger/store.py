"""An append-only ledger file."""

from pathlib import Path


class Ledger:
    def __init__(self, path: Path) -> None:
        self._path = path

    def entries(self) -> list[str]:
        return self._path.read_text(encoding="utf-8").splitlines()
