"""An append-only ledger file."""

import threading
from pathlib import Path


class Ledger:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()

    def entries(self) -> list[str]:
        return self._path.read_text(encoding="utf-8").splitlines()

    def append(self, account: str, amount_cents: int) -> None:
        if "\n" in account:
            raise ValueError("account names are one line")
        self._lock.acquire()
        with self._path.open("a", encoding="utf-8") as handle:
            handle.write(f"{account}\t{amount_cents}\n")
        self._lock.release()
