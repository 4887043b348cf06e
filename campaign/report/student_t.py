"""Student's t quantiles for whole degrees of freedom, in closed form. No scipy.

The paired interval needs one number, the two-sided t quantile with k-1 degrees of
freedom; k (task clusters) is a whole number, and for whole degrees of freedom the
probability P(|T| <= t) is a finite sum (Abramowitz and Stegun 26.7.3 and 26.7.4),
inverted here by bisection to within 1e-12.
"""

from __future__ import annotations

import functools
import math


def two_sided_probability(t: float, df: int) -> float:
    """P(|T| <= t) for T with ``df`` (>= 1) degrees of freedom and ``t`` >= 0."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2 == 1:
        # (2/pi) * (theta + sin cos * (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ... up to cos^(df-3)))
        term, total = 1.0, 1.0 if df > 1 else 0.0
        for k in range(1, (df - 1) // 2):
            term *= (2 * k) / (2 * k + 1) * c2
            total += term
        return (2 / math.pi) * (theta + math.sin(theta) * math.cos(theta) * total)
    # sin * (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ... up to cos^(df-2))
    term, total = 1.0, 1.0
    for k in range(1, df // 2):
        term *= (2 * k - 1) / (2 * k) * c2
        total += term
    return math.sin(theta) * total


@functools.lru_cache(maxsize=256)
def quantile(confidence: float, df: int) -> float:
    """The t with P(|T| <= t) = ``confidence``: the half-width multiplier of a two-sided
    interval (``quantile(0.95, 11)`` is 2.2010)."""
    if not 0.0 < confidence < 1.0 or df < 1:
        raise ValueError("confidence must be in (0, 1) and df at least 1")
    low, high = 0.0, 1.0
    while two_sided_probability(high, df) < confidence:
        high *= 2.0
    while high - low > 1e-12 * max(1.0, high):
        mid = (low + high) / 2.0
        if two_sided_probability(mid, df) < confidence:
            low = mid
        else:
            high = mid
    return (low + high) / 2.0
