"""Exact money: US dollars as integer nano-dollars in SQL, ``Decimal`` in Python.

Costs are stored as the floats clients report (``0.1``), and a binary sum of
them is not the decimal sum an operator adds up: 0.1 + 0.2 reaches
0.30000000000000004 and a spend gate of 0.3 would stop one attempt early.
Every sum a gate or a report uses is therefore taken in SQL over each value
rounded to whole nano-dollars (``CAST(ROUND(cost * 1e9) AS BIGINT)``), which
both SQLite and PostgreSQL add exactly, and read back as a ``Decimal``. A
billed figure finer than a nano-dollar does not exist on any price list.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import BigInteger, cast, func

NANO_PER_USD = 10**9


def nano_usd(column: Any) -> Any:
    """A USD float column as exact integer nano-dollars (NULL stays NULL)."""
    return cast(func.round(column * NANO_PER_USD), BigInteger)


def sum_usd(column: Any) -> Any:
    """The exact sum of a USD column in nano-dollars; NULL when no row has a value."""
    return func.sum(nano_usd(column))


def usd(nano: int | None) -> Decimal | None:
    """Nano-dollars from the database as an exact ``Decimal`` of dollars."""
    return None if nano is None else Decimal(int(nano)).scaleb(-9)


def to_decimal(value: float | int | str | Decimal | None) -> Decimal | None:
    """A dollar amount as written by its source: ``0.1`` -> ``Decimal('0.1')``, not the
    binary float's 55-digit expansion (``str`` of a float is its shortest repr)."""
    if value is None:
        return None
    if isinstance(value, Decimal):
        return value
    return Decimal(str(value))
