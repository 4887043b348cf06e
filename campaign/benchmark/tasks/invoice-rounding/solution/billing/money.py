"""Currency amounts: parsing user input, rounding to cents, formatting.

Amounts are ``Decimal`` throughout: binary floats cannot represent most cent
values, so rounding them "half away from zero" silently rounds some halves down.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")


def parse_amount(text: str) -> Decimal:
    """Parse an amount as entered by a user: "1,234.50", "-3", "0.05"."""
    cleaned = text.strip().replace(",", "")
    if not cleaned:
        raise ValueError("empty amount")
    try:
        amount = Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    if not amount.is_finite():
        raise ValueError(f"not an amount: {text!r}")
    return amount


def round_cents(amount: Decimal | int) -> Decimal:
    """Round to whole cents, halves away from zero (the accounting rule)."""
    return Decimal(amount).quantize(CENT, rounding=ROUND_HALF_UP)


def format_amount(amount: Decimal | int) -> str:
    """Two decimals with thousands separators: 1234.5 -> "1,234.50"."""
    return f"{round_cents(amount):,.2f}"
