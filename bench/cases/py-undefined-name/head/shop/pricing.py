"""Prices of items in the shop."""

from decimal import Decimal

TAX_RATE = Decimal("0.20")


def line_price(unit_price: Decimal, quantity: int) -> Decimal:
    """Price of one order line before tax."""
    if quantity < 0:
        raise ValueError("quantity must not be negative")
    return unit_price * quantity


def order_total(lines: list[tuple[Decimal, int]]) -> Decimal:
    """Total of an order, tax included, rounded to cents."""
    subtotal = sum((line_price(price, quantity) for price, quantity in lines), Decimal(0))
    total = subtotal * (1 + TAX_RATE)
    return round_to_cents(total)
