"""Calendar arithmetic on ``datetime.date``."""

from __future__ import annotations

import calendar
from datetime import date


def days_in_month(year: int, month: int) -> int:
    return calendar.monthrange(year, month)[1]


def add_months(day: date, months: int) -> date:
    """The same day of the month, ``months`` months later (earlier when negative).

    When the target month is shorter, the result is its last day:
    2024-01-31 + 1 month is 2024-02-29.
    """
    index = day.year * 12 + (day.month - 1) + months
    year, month_index = divmod(index, 12)
    month = month_index + 1
    return date(year, month, min(day.day, days_in_month(year, month)))
