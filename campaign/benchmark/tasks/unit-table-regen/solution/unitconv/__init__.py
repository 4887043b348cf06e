"""Convert quantities between units of the same dimension.

The units are listed in ``data/units.csv``; ``unitconv/table.py`` is generated
from it by ``scripts/gen_table.py``.
"""

from __future__ import annotations

from .table import UNITS

__all__ = ["IncompatibleUnits", "UnknownUnit", "convert", "dimension", "UNITS"]


class UnknownUnit(KeyError):
    """A unit symbol that is not in the table."""


class IncompatibleUnits(ValueError):
    """The two units measure different things (e.g. metres and kilograms)."""


def _lookup(symbol: str) -> tuple[str, float, float]:
    try:
        return UNITS[symbol]
    except KeyError:
        raise UnknownUnit(symbol) from None


def dimension(symbol: str) -> str:
    return _lookup(symbol)[0]


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert ``value`` from ``from_unit`` to ``to_unit``.

    Each unit is defined relative to its dimension's base unit (metre, kilogram,
    kelvin) by ``base = value * factor + offset``.
    """
    from_dim, from_factor, from_offset = _lookup(from_unit)
    to_dim, to_factor, to_offset = _lookup(to_unit)
    if from_dim != to_dim:
        raise IncompatibleUnits(f"cannot convert {from_dim} ({from_unit}) to {to_dim} ({to_unit})")
    base = value * from_factor + from_offset
    return (base - to_offset) / to_factor
