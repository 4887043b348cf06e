"""Whose fault is a model request, and was it billed: read from one capture line.

The recording proxy writes what it saw (status, ``upstream_error``, an error
event inside a 200 stream, the usage seen, how the body ended); this module
turns that into the two facts the engine decides by (DESIGN.md §9):

* ``request_fault``: the provider's fault, one of ``vocabulary.PROVIDER_FAULTS``,
  or None. HTTP 429, 529, 5xx and 408 are the provider's; 401/403 are the
  operator's credential, never the agent's; any other 4xx (400 context too
  long, 413, an invalid tool schema) is caused by the request itself, so it is
  the agent's and no fault. A response the proxy stopped waiting for on its own
  (``aborted``: shutdown at the attempt's end) is no fault either.
* ``billing``: ``complete`` (terminal usage, clean end, an id), ``partial``
  (some usage seen, the rest not: a cut stream's ``message_start``), ``unseen``
  (the provider may have billed it, the wire saw no usage), or ``unbilled``
  (an HTTP error response without usage, or no connection at all). An unbilled
  response is neither spend nor unknown spend: it never makes spend incomplete.

Pure functions over plain dicts: the engine reads them after an attempt, and
the attempt's watch reads them while the client runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from campaign.vocabulary import PROVIDER_FAULT_WORDS, PROVIDER_FAULTS

Billing = Literal["complete", "partial", "unseen", "unbilled"]
# The in-attempt circuit: this many model requests in a row ending on a provider fault
# means the client is only retrying into a failing provider; the attempt is stopped.
FAULTS_IN_A_ROW = 3

_EVENT_FAULTS = {"overloaded": "http_529", "rate_limited": "http_429", "server_error": "http_5xx"}
_UPSTREAM_FAULTS = {"unreachable": "unreachable", "reset": "connection_reset", "silent": "upstream_silent", "cut": "stream_cut"}


def _status(record: Mapping[str, Any]) -> int | None:
    status = record.get("status")
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def request_fault(record: Mapping[str, Any]) -> str | None:
    """The provider fault this request ended on, or None (see the module docstring)."""
    failed = record.get("upstream_error")
    if failed in _UPSTREAM_FAULTS:
        return _UPSTREAM_FAULTS[failed]
    status = _status(record)
    if status is None:
        return None
    if status == 429:
        return "http_429"
    if status == 529:
        return "http_529"
    if status == 408 or 500 <= status <= 599:
        return "http_5xx"
    if status in (401, 403):
        return "http_auth"
    if 200 <= status < 300:
        return _EVENT_FAULTS.get(record.get("error_event"))  # type: ignore[arg-type]
    return None


def billing(record: Mapping[str, Any]) -> Billing:
    status = _status(record)
    ok = status is not None and 200 <= status < 300
    if ok and record.get("usage_complete") is True and record.get("response_id") is not None:
        return "complete"
    if isinstance(record.get("usage"), dict):
        return "partial"
    if record.get("upstream_error") == "unreachable" or (status is not None and status >= 400):
        return "unbilled"
    return "unseen"


def fault_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """{fault: how many requests ended on it}, every fault word present (0 when none)."""
    counts = dict.fromkeys(PROVIDER_FAULTS, 0)
    for record in records:
        fault = request_fault(record)
        if fault is not None:
            counts[fault] += 1
    return counts


def _by_seq(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    model = [r for r in records if r.get("kind") == "model"]
    return sorted(model, key=lambda r: r.get("seq") if isinstance(r.get("seq"), int) else 0)


def ending_fault(records: Iterable[Mapping[str, Any]]) -> str | None:
    """The fault of the attempt's last model request: the provider ended the attempt.

    A fault the client recovered from (a later request succeeded) ends nothing.
    The rule looks at the wire only, never at the verdict, so passes and failures
    are voided alike and the success rate is not biased by it."""
    ordered = _by_seq(records)
    return request_fault(ordered[-1]) if ordered else None


def gave_out(records: Sequence[Mapping[str, Any]], in_a_row: int = FAULTS_IN_A_ROW) -> str | None:
    """The fault when the last ``in_a_row`` model requests all ended on one: the client is
    retrying into a failing provider, and waiting out its deadline would prove nothing."""
    ordered = _by_seq(records)
    if len(ordered) < in_a_row:
        return None
    faults = [request_fault(r) for r in ordered[-in_a_row:]]
    return faults[-1] if None not in faults else None


def describe(counts: Mapping[str, int]) -> str:
    """``HTTP 529 x7, cut stream x1``: what the wire saw, for a line to the operator."""
    parts = [f"{PROVIDER_FAULT_WORDS[fault]} x{counts[fault]}" for fault in PROVIDER_FAULTS if counts.get(fault)]
    return ", ".join(parts) or "no fault on the wire"
