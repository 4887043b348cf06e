"""Whose fault is a model request, and was it billed: read from one capture line.

The recording proxy writes what it saw (status, ``upstream_error``, an error
event inside a 200 stream, the usage seen, how the body ended); this module
turns that into the two facts the engine decides by (DESIGN.md §9):

* ``request_fault``: the provider's fault, one of ``vocabulary.PROVIDER_FAULTS``,
  or None. HTTP 429, 529, 5xx and 408 are the provider's; 401/403 are the
  operator's credential, 402 (or a refusal that names credit, quota or billing:
  Anthropic's "credit balance is too low" 400, OpenAI's ``insufficient_quota``
  429) the operator's account, and 404 the operator's catalog (the model or the
  route does not exist there): never the agent's. Any other 4xx (400 context
  too long, 413, an invalid tool schema) is caused by the request itself, so it
  is the agent's and no fault. A 200 whose body is an error and no answer
  (OpenRouter's ``{"error": {"code": 502, ...}}``, streamed or not) counts by
  what the error says, as if it were that status. A response the proxy stopped
  waiting for on its own (``aborted``: shutdown at the attempt's end) is no
  fault by itself; see the hang rule below.
* ``billing``: ``complete`` (terminal usage, clean end, an id), ``partial``
  (some usage seen, the rest not: a cut stream's ``message_start``), ``unseen``
  (the provider may have billed it, the wire saw no usage), or ``unbilled``
  (an HTTP error response without usage, or no connection at all). An unbilled
  response is neither spend nor unknown spend: it never makes spend incomplete.

The hang rule (``hung_at_end``). The proxy gives up on an upstream silent for
the provider's ``silence_s``, but an attempt's deadline can land first: the
client is killed while a request is still waiting, the proxy stops, and that
request is ``aborted``, which alone says nothing about whose fault the wait
was. With the defaults (``silence_s`` 300, ``--timeout`` 660) a client that
retries a hung request always has one in flight at the deadline. So the attempt
ended on ``upstream_silent`` when a request still in flight at its end shows a
hang:

1. the upstream had sent it nothing (or nothing more) for at least
   ``HUNG_SHARE`` of the silence bound (``idle_s`` against ``silence_s``, both
   on the capture line): half the time a healthy provider is allowed, spent
   waiting on nothing; or
2. it had received nothing at all (not even a status line) for at least
   ``HUNG_FLOOR_SHARE`` of the bound, and since the last response the provider
   completed without a fault the client had already met a fault (a silent, cut
   or refused request, an HTTP 429/5xx) or left another request waiting on
   nothing (it gave up on one by its own timeout and retried): the last
   requests all failed, and the last of them hung; or
3. it had received nothing at all for at least ``HUNG_FLOOR_SHARE`` of the
   bound, and no model request of the attempt ever got a byte from the
   upstream: the agent never heard from its model.

And the attempt ended on the provider's last fault (``never_answered``) when no
model request of it was ever answered without a fault and the client was
retrying after one when the deadline came, however young the retry (nothing
received yet): the provider burnt the whole deadline, and the agent never had a
turn to spend it on. The floor of rules 2 and 3 exists to keep a deadline that
lands on a retry after real work the agent's; with no answer at all there was no
work. (A deadline that lands in a client's back-off between two retries needs no
rule: the last request's own fault decides.)

What stays the agent's: a request that was being answered (a stream flowing, a
status line received) within the bound, and a slow answer awaited after healthy
turns for less than half the bound. A model that streams, or answers slowly
but within its bound, keeps its timeout verdict; only a wait on nothing, after
nothing or long enough to be a hang, is the provider's.

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
# The hang rule: a request in flight at the attempt's end that the upstream left without a
# byte for this share of its silence bound was waiting on a hang, not on a slow answer.
HUNG_SHARE = 0.5
# ... and rules 2 and 3 (a wait on nothing after faults, or with nothing ever heard) need
# at least this share of it (30 s of the default 300): a retry the deadline caught a few
# seconds in, or a first answer a short --timeout cut, stays the agent's time.
HUNG_FLOOR_SHARE = 0.1

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
    event = record.get("error_event")
    if status == 402 or (event == "billing" and (200 <= status < 300 or 400 <= status < 500 and status != 401)):
        return "http_billing"
    if status == 429:
        return "http_429"
    if status == 529:
        return "http_529"
    if status == 408 or 500 <= status <= 599:
        return "http_5xx"
    if status in (401, 403):
        return "http_auth"
    if status == 404:
        return "http_not_found"
    if 200 <= status < 300:
        return _EVENT_FAULTS.get(event)  # type: ignore[arg-type]
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
    """{fault: how many requests ended on it}, every fault word present (0 when none). A
    request the hang rule blames for the attempt's end counts once as ``upstream_silent``:
    the breaker's line and the report then name the hang the provider ended it with."""
    records = list(records)
    counts = dict.fromkeys(PROVIDER_FAULTS, 0)
    for record in records:
        fault = request_fault(record)
        if fault is not None:
            counts[fault] += 1
    ordered = _by_seq(records)
    if ordered and request_fault(ordered[-1]) is None and hung_at_end(ordered) is not None:
        counts["upstream_silent"] += 1
    return counts


def _by_seq(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    model = [r for r in records if r.get("kind") == "model"]
    return sorted(model, key=lambda r: r.get("seq") if isinstance(r.get("seq"), int) else 0)


def ending_fault(records: Iterable[Mapping[str, Any]]) -> str | None:
    """The fault of the attempt's last model request, or the hang it was waiting on at its
    end (``hung_at_end``): the provider ended the attempt.

    A fault the client recovered from (a later request succeeded) ends nothing.
    The rule looks at the wire only, never at the verdict, so passes and failures
    are voided alike and the success rate is not biased by it."""
    ordered = _by_seq(records)
    if not ordered:
        return None
    return request_fault(ordered[-1]) or hung_at_end(ordered) or never_answered(ordered)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _heard_nothing(record: Mapping[str, Any]) -> bool:
    """The upstream sent this request nothing at all: no status line, so no byte."""
    return _status(record) is None


def _waited_long(record: Mapping[str, Any]) -> bool:
    idle, bound = _number(record.get("idle_s")), _number(record.get("silence_s"))
    return idle is not None and bound is not None and bound > 0 and idle >= HUNG_SHARE * bound


def _waited_at_all(record: Mapping[str, Any]) -> bool:
    """It had waited ``HUNG_FLOOR_SHARE`` of the bound: a retry a few seconds old when the
    deadline came proves no hang (a capture without ``idle_s`` cannot tell: as before)."""
    idle, bound = _number(record.get("idle_s")), _number(record.get("silence_s"))
    return idle is None or bound is None or idle >= HUNG_FLOOR_SHARE * bound


def hung_at_end(records: Iterable[Mapping[str, Any]]) -> str | None:
    """``upstream_silent`` when a request still in flight at the attempt's end shows a hang
    (the hang rule of the module docstring), else None: the wait was the agent's time."""
    ordered = _by_seq(records)
    in_flight = [r for r in ordered if r.get("upstream_error") == "aborted"]
    if any(_waited_long(r) for r in in_flight):
        return "upstream_silent"
    # The requests after the last response the provider completed without a fault.
    healthy = [i for i, r in enumerate(ordered) if r.get("upstream_error") is None and request_fault(r) is None]
    trail = ordered[healthy[-1] + 1 :] if healthy else ordered
    hung = [r for r in trail if r.get("upstream_error") == "aborted" and _heard_nothing(r) and _waited_at_all(r)]
    if not hung:
        return None
    if not healthy and all(_heard_nothing(r) for r in ordered):
        return "upstream_silent"  # the agent never heard from its model
    failed_before = any(request_fault(r) is not None for r in trail)
    return "upstream_silent" if failed_before or len(hung) > 1 else None


def _answered(record: Mapping[str, Any]) -> bool:
    return record.get("upstream_error") is None and request_fault(record) is None


def never_answered(records: Iterable[Mapping[str, Any]]) -> str | None:
    """The last fault the attempt met when no model request was ever answered without one
    and the request in flight at its end had received nothing yet (the module docstring):
    the provider held the agent for its whole deadline. None otherwise."""
    ordered = _by_seq(records)
    if not ordered or any(_answered(r) for r in ordered):
        return None
    last = ordered[-1]
    if last.get("upstream_error") != "aborted" or not _heard_nothing(last):
        return None
    met = [fault for fault in map(request_fault, ordered) if fault is not None]
    return met[-1] if met else None


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
