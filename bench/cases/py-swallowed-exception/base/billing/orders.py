"""Order state changes."""

from billing.gateway import Gateway


def mark_paid(order, capture_id: str) -> None:
    order.status = "paid"
    order.capture_id = capture_id


def settle(order, gateway: Gateway) -> None:
    capture_id = gateway.capture(order.payment_id, order.total_cents)
    mark_paid(order, capture_id)
