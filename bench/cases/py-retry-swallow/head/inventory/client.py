"""Inventory service client."""

from inventory.retry import with_retries


class InventoryError(Exception):
    pass


def _reserve_once(session, sku: str, quantity: int) -> str:
    response = session.post("/reservations", json={"sku": sku, "quantity": quantity})
    if response.status_code != 201:
        raise InventoryError(response.text)
    return response.json()["reservation_id"]


def reserve(session, sku: str, quantity: int) -> str | None:
    return with_retries(lambda: _reserve_once(session, sku, quantity))
