"""Inventory service client."""


class InventoryError(Exception):
    pass


def reserve(session, sku: str, quantity: int) -> str:
    response = session.post("/reservations", json={"sku": sku, "quantity": quantity})
    if response.status_code != 201:
        raise InventoryError(response.text)
    return response.json()["reservation_id"]
