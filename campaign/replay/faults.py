"""Injected faults, so tests can drive a client through a provider's bad day.

``KIND:N`` hits the N-th model request (1-based) this server process receives;
``KIND:*`` hits every one. Only the three generation endpoints count, not
probes like ``HEAD /``. The kinds are what real providers do:

* ``http-429`` rate limited, ``http-529`` overloaded (Anthropic's code),
  ``http-500`` a server error: an error body in the request's wire format;
* ``cut-stream``: the response starts, then the connection drops;
* ``hang``: the request is read and never answered;
* the operator's to fix: ``http-402`` payment required, ``credit-400``
  Anthropic's "credit balance is too low" 400, ``model-404`` the model is not
  found;
* ``error-200``: a 200 whose body is an error and no answer (OpenRouter's
  ``{"error": {"code": 502, ...}}``, or that one event in a stream);
* ``slow``: the right answer, after ``SLOW_S`` seconds (a provider under load,
  or a model thinking), so what watches a running client has time to act.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from campaign.errors import UsageProblem

FaultKind = Literal["http-429", "http-500", "http-529", "cut-stream", "hang", "http-402", "credit-400", "model-404", "error-200", "slow"]
KINDS: tuple[FaultKind, ...] = ("http-429", "http-500", "http-529", "cut-stream", "hang", "http-402", "credit-400", "model-404", "error-200", "slow")
# Well inside every silence bound (so a slow answer is never a hang), and several
# supervisor sweeps long.
SLOW_S = 1.0
EVERY = "*"
_OPTION = "--fault"


@dataclass(frozen=True)
class FaultPlan:
    """Which request gets which fault: by number, and for every request."""

    numbered: dict[int, FaultKind]
    every: FaultKind | None = None

    def get(self, number: int) -> FaultKind | None:
        return self.numbered.get(number, self.every)


def parse_faults(specs: Iterable[str]) -> FaultPlan:
    """``["http-500:1", "cut-stream:3"]`` -> faults on requests 1 and 3; ``["hang:*"]`` -> every request hangs."""
    numbered: dict[int, FaultKind] = {}
    every: FaultKind | None = None
    for spec in specs:
        kind, _, number = spec.partition(":")
        if kind not in KINDS or not (number == EVERY or (number.isdigit() and int(number) >= 1)):
            raise UsageProblem(f"{spec!r} is not KIND:N or KIND:* with KIND one of {', '.join(KINDS)} and N >= 1", option=_OPTION)
        if number == EVERY:
            if every is not None:
                raise UsageProblem("only one fault may apply to every request", option=_OPTION)
            every = kind  # type: ignore[assignment]
            continue
        if int(number) in numbered:
            raise UsageProblem(f"request {number} is given two faults", option=_OPTION)
        numbered[int(number)] = kind  # type: ignore[assignment]
    return FaultPlan(numbered, every)
