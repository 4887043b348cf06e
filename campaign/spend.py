"""Spend: per-trial completeness and the gates that stop paid calls.

Local accounting cannot stop an in-flight request from overshooting; the
operator's external hard cap remains mandatory. The gates decide whether the
*next* attempt may start; ``overrun`` decides whether a running attempt must be
stopped because the spend its wire has seen is past its ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from campaign.agents.record import AgentRecord, nothing_billed, turn_usage_matched
from campaign.store.limits import SpendLimits
from campaign.store.money import to_decimal
from campaign.store.repository.spend import counted_spend

__all__ = ["ATTEMPT_EXCEEDED_CEILING", "CACHE_WRITES_UNSEEN", "NO_COST", "NO_FLUSH", "SPEND_GAPS", "UNMATCHED", "Overrun", "budget_allows_next", "exceeded_ceiling", "overrun", "spend_complete", "spend_gap", "spend_stop", "stored_gap", "stopped_line", "wire_cost"]

# The stop reason of a lane whose attempt spent past its ceiling, and the failure class
# of an attempt stopped for it while running (both in campaign.vocabulary).
ATTEMPT_EXCEEDED_CEILING = "attempt_exceeded_ceiling"


# Why an attempt's spend is not complete, the words its stop line and the README use.
NO_COST = "no_cost"  # the client reported none and the wire proved none
NO_FLUSH = "no_flush"  # no completed profiler flush: nothing proves the wire capture whole
UNMATCHED = "usage_unmatched"  # a completed turn without its own matched terminal usage
CACHE_WRITES_UNSEEN = "cache_writes_unseen"  # a route that bills cache writes apart, none counted
SPEND_GAPS = {
    NO_COST: "no cost: the client reported none and the wire did not prove one",
    NO_FLUSH: "no completed profiler flush (a client that does not talk through the recording proxy never has one)",
    UNMATCHED: "a completed turn without one-to-one matched request and terminal-usage identities",
    CACHE_WRITES_UNSEEN: "the route bills cache writes apart and its responses did not say how many were written",
}


def spend_gap(record: AgentRecord, *, flush_complete: bool | None, wire_costed: bool = False) -> str | None:
    """Why the spec's per-trial spend_complete fails for this attempt, or None when it holds.

    Complete spend needs a cost reported by the client (or, for a client that reports
    none, the engine's ``wire_cost``), a completed profiler flush, and one-to-one matched
    request/terminal-usage identities for every completed parent turn with numeric
    counters, or the wire's proof that no request was billed (a lone 429 the client gave
    up on). The flush is required of every client: one that does not talk through the
    recording proxy has none, so its spend is never complete, whatever it reports.
    """
    if record.cost_usd is None or not (record.cost_reported or wire_costed):
        return NO_COST
    if flush_complete is not True:
        return NO_FLUSH
    return None if turn_usage_matched(record) or nothing_billed(record) else UNMATCHED


def stored_gap(cost_usd: float | None, flush_complete: bool | None) -> str:
    """``spend_gap`` of an incomplete attempt's row, from the columns that say it (the turn
    identities are not in the row: what else leaves it incomplete reads as unmatched)."""
    return NO_COST if cost_usd is None else NO_FLUSH if flush_complete is not True else UNMATCHED


def spend_complete(record: AgentRecord, *, flush_complete: bool | None, wire_costed: bool = False) -> bool:
    """The spec's per-trial spend_complete (``spend_gap`` says why not). Anything less is
    incomplete and keeps whatever partial numeric cost was seen."""
    return spend_gap(record, flush_complete=flush_complete, wire_costed=wire_costed) is None


def wire_cost(record: AgentRecord, *, flush_complete: bool | None, equivalent_usd: float | None) -> float | None:
    """The cost of a client that reports none, from what the wire proved: one terminal
    usage per completed parent turn (flushed and matched) priced at the providers
    catalog's prices. An estimate like the runtime catalog cost the spec names, never
    called billed; None when the wire did not prove every turn or a price is missing."""
    if record.cost_usd is not None or flush_complete is not True or equivalent_usd is None:
        return None
    return equivalent_usd if turn_usage_matched(record) or nothing_billed(record) else None


def budget_allows_next(measured_spend_usd: Decimal, limits: SpendLimits) -> bool:
    """Measured spend plus the next attempt's ceiling must stay within the run's maximum
    (a paired run's limits always have one: its approved plan must set it)."""
    cap = limits.max_spend_usd
    return cap is None or to_decimal(measured_spend_usd) + limits.per_attempt_ceiling_usd <= cap


def exceeded_ceiling(cost_usd: float | Decimal | None, limits: SpendLimits) -> bool:
    return cost_usd is not None and to_decimal(cost_usd) > limits.per_attempt_ceiling_usd


def spend_stop(failure_class: str | None, cost_usd: float | None, spend_complete: bool | None, equivalent_usd: float | None, limits: SpendLimits) -> str | None:
    """What a finished attempt's spend means for every later paid call, in the paired lane
    and in a campaign's workers alike: ``attempt_exceeded_ceiling`` when it was stopped at
    its ceiling or its spend as the caps count it (``counted_spend``: the measured cost
    when complete, else the list-price equivalent) is past the ceiling; ``spend_incomplete``
    when its spend is not known whole (the spec stops later live calls rather than count
    a lower bound as the spend); else None."""
    spent = counted_spend(cost_usd, spend_complete, equivalent_usd)
    # Stopped at its ceiling while running: exceeded, even when its last request's spend is unknown.
    if failure_class == ATTEMPT_EXCEEDED_CEILING or exceeded_ceiling(spent, limits):
        return ATTEMPT_EXCEEDED_CEILING
    if spent is None or spend_complete is not True:
        return "spend_incomplete"
    return None


@dataclass(frozen=True)
class Overrun:
    """A running attempt's spend, as its wire has seen it so far, past its ceiling."""

    spent_usd: Decimal
    ceiling_usd: Decimal
    # The spend is a lower bound: some counts the wire carried were unknown.
    at_least: bool = False

    def line(self) -> str:
        return stopped_line(self.spent_usd, self.ceiling_usd, partial=self.at_least)


def stopped_line(spent_usd: Decimal | None, ceiling_usd: Decimal, *, partial: bool = False) -> str:
    """The operator's line for an attempt stopped at its ceiling (its spend unknown: ``?``;
    ``partial``: what is known of it, ``$12.00+?``)."""
    spent = "?" if spent_usd is None else dollars(spent_usd) + ("+?" if partial else "")
    return f"the attempt was stopped at ${spent} spent, over its ${format(ceiling_usd.normalize(), 'f')} ceiling"


def dollars(amount: Decimal) -> str:
    """An exact amount for the operator: to the micro-dollar, no trailing zeros."""
    return format(round(amount, 6).normalize(), "f")


def overrun(spent_usd: float | Decimal | None, ceiling_usd: Decimal | None, *, at_least: bool = False) -> Overrun | None:
    """Whether a running attempt must be stopped: the spend seen so far (or, ``at_least``,
    a lower bound on it) is past its ceiling (as ``exceeded_ceiling`` judges a finished
    one: equal is within). Unknown spend (None) stops nothing here, and is never read as
    0: the gates after the attempt count it unknown. No ceiling (a lane without spend
    limits): nothing to stop for."""
    if spent_usd is None or ceiling_usd is None:
        return None
    spent = to_decimal(spent_usd)
    return Overrun(spent, ceiling_usd, at_least) if spent > ceiling_usd else None
