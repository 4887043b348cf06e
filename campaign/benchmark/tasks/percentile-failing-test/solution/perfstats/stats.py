"""Descriptive statistics over plain sequences of numbers."""

from __future__ import annotations

from collections.abc import Sequence


def mean(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("mean of empty data")
    return sum(values) / len(values)


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0 <= p <= 100) of ``values``.

    Linear interpolation between the two nearest ranks, as spreadsheet
    PERCENTILE.INC does. ``values`` need not be sorted and is not modified.
    """
    if not values:
        raise ValueError("percentile of empty data")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be between 0 and 100, got {p}")
    ordered = sorted(values)
    # Zero-based position between the smallest (index 0) and largest (n - 1).
    position = p / 100 * (len(ordered) - 1)
    lower = int(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)
