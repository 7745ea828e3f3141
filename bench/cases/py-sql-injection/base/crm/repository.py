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
