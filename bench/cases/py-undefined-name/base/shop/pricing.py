"""Prices of items in the shop."""

from decimal import Decimal

TAX_RATE = Decimal("0.20")


def line_price(unit_price: Decimal, quantity: int) -> Decimal:
    """Price of one order line before tax."""
    if quantity < 0:
        raise ValueError("quantity must not be negative")
    return unit_price * quantity
