"""Injected faults, so tests can exercise a client's retry path against the replay.

``KIND:N`` hits the N-th model request (1-based) this server process receives;
only the three generation endpoints count, not probes like ``HEAD /``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from campaign.errors import UsageProblem

FaultKind = Literal["http-500", "cut-stream"]
KINDS: tuple[FaultKind, ...] = ("http-500", "cut-stream")
_OPTION = "--fault"


def parse_faults(specs: Iterable[str]) -> dict[int, FaultKind]:
    """``["http-500:1", "cut-stream:3"]`` -> ``{1: "http-500", 3: "cut-stream"}``."""
    faults: dict[int, FaultKind] = {}
    for spec in specs:
        kind, _, number = spec.partition(":")
        if kind not in KINDS or not number.isdigit() or int(number) < 1:
            raise UsageProblem(f"{spec!r} is not KIND:N with KIND one of {', '.join(KINDS)} and N >= 1", option=_OPTION)
        if int(number) in faults:
            raise UsageProblem(f"request {number} is given two faults", option=_OPTION)
        faults[int(number)] = kind  # type: ignore[assignment]
    return faults
