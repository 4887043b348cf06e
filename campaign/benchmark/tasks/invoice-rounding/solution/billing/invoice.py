"""Invoices: lines of quantity x unit price, each with its own tax rate."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from .money import format_amount, parse_amount, round_cents

_HUNDRED = Decimal(100)


@dataclass
class Line:
    description: str
    quantity: int
    unit_price: str  # as entered, e.g. "19.99"
    tax_rate: str = "0"  # percent, e.g. "7.5"

    def net(self) -> Decimal:
        return round_cents(self.quantity * parse_amount(self.unit_price))

    def tax(self) -> Decimal:
        """Tax is charged per line on the rounded net amount, then rounded itself."""
        return round_cents(self.net() * parse_amount(self.tax_rate) / _HUNDRED)


@dataclass
class Invoice:
    number: str
    lines: list[Line] = field(default_factory=list)

    def add(self, description: str, quantity: int, unit_price: str, tax_rate: str = "0") -> Line:
        line = Line(description, quantity, unit_price, tax_rate)
        self.lines.append(line)
        return line

    def subtotal(self) -> Decimal:
        return sum((line.net() for line in self.lines), Decimal(0))

    def tax(self) -> Decimal:
        return sum((line.tax() for line in self.lines), Decimal(0))

    def total(self) -> Decimal:
        return self.subtotal() + self.tax()

    def summary(self) -> dict[str, str]:
        """The amounts printed at the bottom of the invoice."""
        return {
            "subtotal": format_amount(self.subtotal()),
            "tax": format_amount(self.tax()),
            "total": format_amount(self.total()),
        }
