"""When a monthly subscription is billed."""

from __future__ import annotations

from datetime import date

from .dates import add_months


def billing_dates(start: date, count: int) -> list[date]:
    """The first ``count`` billing dates of a subscription started on ``start``.

    The first bill is issued on ``start`` itself, then one every month. Each date
    is computed from ``start`` (not from the previous date), so a subscription
    started on the 31st returns to the 31st after a shorter month.
    """
    if count < 0:
        raise ValueError("count must not be negative")
    return [add_months(start, n) for n in range(count)]


def next_billing_date(start: date, after: date) -> date:
    """The first billing date strictly after ``after``."""
    if after < start:
        return start
    months = (after.year - start.year) * 12 + (after.month - start.month)
    candidate = add_months(start, months)
    while candidate <= after:
        months += 1
        candidate = add_months(start, months)
    return candidate
