"""Customer records in SQLite."""

import sqlite3


class CustomerRepository:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def get(self, customer_id: int) -> tuple | None:
        cursor = self._connection.execute(
            "SELECT id, name, email FROM customers WHERE id = ?", (customer_id,)
        )
        return cursor.fetchone()

    def search(self, name_fragment: str, limit: int = 50) -> list[tuple]:
        """Customers whose name contains ``name_fragment`` (from the search box)."""
        query = (
            "SELECT id, name, email FROM customers "
            f"WHERE name LIKE '%{name_fragment}%' ORDER BY name LIMIT {int(limit)}"
        )
        return self._connection.execute(query).fetchall()
