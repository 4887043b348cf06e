"""An attempt's spend while its client runs: stop it once the wire has seen it pass its ceiling.

The lanes' gates decide before an attempt whether it may start (its ceiling must
fit the caps); without this watch nothing bounded what one attempt spent once it
ran, and a client looping on paid calls spent hundreds of times its ceiling
before the gate after it noticed. While the client runs, the attempt's
``FaultWatch`` reads the recording proxy's capture; given a ceiling, it also
prices what the capture shows so far as the attempt's row will price it
(``verdict.priced``'s list-price equivalent: the wire's usage at the providers
catalog's prices) and stops the client once that is past the ceiling. The
attempt is then ``interrupted`` with the failure class ``attempt_exceeded_ceiling``
(the operator's budget stopped it, not the agent: no verdict, no provider fault),
and ``ceiling_line`` tells the operator what it spent (``gap_line``: why an attempt's
spend is incomplete, when that stops later paid calls).

The ceiling is the whole limit here: an attempt is admitted only while its
spend so far plus a whole ceiling fits every cap (``budget_allows_next``,
``leases.admit``, which reserves it against racing workers), so the caps'
headroom is never below the ceiling while it runs.

When a counter is unknown (a provider that leaves out its cache-read count, a
Chat Completions endpoint without ``prompt_tokens_details``), the row's
equivalent is unknown too; the watch then prices what the wire did see
(``spent_at_least``: every known count at its price, an unknown one left out),
which can only be below the truth, and stops the client once even that is past
the ceiling. That figure is the watch's alone: the row's spend stays unknown.

What the watch cannot do: a request in flight when the ceiling is passed is
paid, and so is whatever the client sends before the next read (a supervisor
sweep, ``EVERY_S``). The operator's external hard cap remains mandatory.
Spend the wire did not see at all stops nothing and is never read as 0.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from campaign.agents.record import unknown_record
from campaign.lanes.attempt_plan import AttemptOutcome, AttemptPlan
from campaign.lanes.verdict import priced
from campaign.lanes.wire import FaultWatch, WireSession
from campaign.profiler import summary as wire_summary
from campaign.profiler.capture import Capture
from campaign.providers import Prices
from campaign.spend import ATTEMPT_EXCEEDED_CEILING, SPEND_GAPS, UNMATCHED, Overrun, overrun, stopped_line, stored_gap
from campaign.store import repository
from campaign.store.limits import SpendLimits
from campaign.store.money import to_decimal
from campaign.store.models import Attempt, Trial

# A capture line's usage counts, named as the catalog's prices are.
_PRICED = ("uncached_input", "cached_input", "cache_write", "output")
# How often the capture is read when a ceiling is watched: every supervisor sweep, since
# each second a looping client may pay for several requests.
EVERY_S = 0.25


def wire_spend(capture: Capture, plan: AttemptPlan) -> float | None:
    """What the wire has seen the attempt spend so far, priced as its row will be (the
    list-price equivalent of the wire's counters); None while that is unknown."""
    record = wire_summary.merge(unknown_record(None), wire_summary.summarize(capture))
    return priced(record, plan, capture.flush_complete)[2]


def spent_at_least(capture: Capture, prices: Prices) -> Decimal | None:
    """A lower bound on what the wire has seen the attempt spend: each request's known
    counts at their list prices, an unknown count left out (None: no count seen)."""
    total, seen = Decimal(0), False
    for record in capture.model_requests:
        usage = record.get("usage")
        for counter in _PRICED if isinstance(usage, dict) else ():
            tokens = usage.get(counter)
            if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
                total += tokens * to_decimal(getattr(prices, counter))
                seen = True
        one_hour = usage.get("cache_write_1h") if isinstance(usage, dict) else None
        if prices.cache_write_1h is not None and isinstance(one_hour, int) and not isinstance(one_hour, bool) and one_hour > 0:
            # Counted above at the 5-minute rate; with no 1-hour price that stays a lower bound.
            total += one_hour * (to_decimal(prices.cache_write_1h) - to_decimal(prices.cache_write))
    return total / 1_000_000 if seen else None


def overrun_of(capture: Capture, plan: AttemptPlan, ceiling_usd: Decimal) -> Overrun | None:
    """The attempt's spend so far past ``ceiling_usd``: priced as its row will be, or,
    while that is unknown, at least what its known counts cost."""
    exact = wire_spend(capture, plan)
    if exact is not None or plan.provider is None:
        return overrun(exact, ceiling_usd)
    return overrun(spent_at_least(capture, plan.provider.prices), ceiling_usd, at_least=True)


def watch(session: WireSession, plan: AttemptPlan, ceiling_usd: Decimal | None, timer: Callable[[], float]) -> FaultWatch:
    """The client's watch: provider faults always; the spend past ``ceiling_usd`` when the
    lane has spend limits and the attempt a provider with prices."""
    if ceiling_usd is None or plan.provider is None:
        return FaultWatch(session, timer)
    return FaultWatch(session, timer, EVERY_S, spend=lambda capture: overrun_of(capture, plan, ceiling_usd))


def ceiling_line(trial: Trial, result: AttemptOutcome, limits: SpendLimits | None) -> str | None:
    """For the operator, when its ceiling stopped the attempt: what it spent in the end, as
    the caps count it (``+?`` when its spend is incomplete: a request in flight at the stop
    was paid unseen), over which ceiling."""
    return _line(trial, result.failure_class, result.record.cost_usd, result.spend_complete, result.equivalent_spend_usd, limits)


def stored_ceiling_line(trial: Trial, attempt: Attempt, limits: SpendLimits | None) -> str | None:
    """``ceiling_line`` of an attempt row another process (a worker) wrote."""
    return _line(trial, attempt.failure_class, attempt.cost_usd, attempt.spend_complete, attempt.equivalent_spend_usd, limits)


def gap_line(trial: Trial, result: AttemptOutcome, limits: SpendLimits | None) -> str | None:
    """For the operator, when an attempt's incomplete spend stops later paid calls under the
    caps (``spend_incomplete``): why it is incomplete."""
    return _gap(trial, result.failure_class, result.spend_complete, result.spend_gap, limits)


def stored_gap_line(trial: Trial, attempt: Attempt, limits: SpendLimits | None) -> str | None:
    """``gap_line`` of an attempt row another process (a worker) wrote."""
    return _gap(trial, attempt.failure_class, attempt.spend_complete, stored_gap(attempt.cost_usd, attempt.flush_complete), limits)


def _gap(trial: Trial, failure_class: str | None, spend_complete: bool | None, gap: str | None, limits: SpendLimits | None) -> str | None:
    if limits is None or spend_complete is True or failure_class == ATTEMPT_EXCEEDED_CEILING:
        return None
    return f"{trial.provider} {trial.trial_id}: spend incomplete: {SPEND_GAPS.get(gap or UNMATCHED)}"


def _line(trial: Trial, failure_class: str | None, cost_usd: float | None, spend_complete: bool | None, equivalent_usd: float | None, limits: SpendLimits | None) -> str | None:
    if limits is None or failure_class != ATTEMPT_EXCEEDED_CEILING:
        return None
    spent = repository.counted_spend(cost_usd, spend_complete, equivalent_usd)
    return f"{trial.provider} {trial.trial_id}: {stopped_line(spent, limits.per_attempt_ceiling_usd, partial=spend_complete is not True)}"
