"""Spend gates and sums in exact decimals, on both backends (issue 14 items 4 and 7)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from types import SimpleNamespace

import pytest

from campaign.agents.record import TurnUsage, unknown_record
from campaign.approval import Approval
from campaign.lanes.paired_live import after_attempt, gate
from campaign.schedule import build_schedule
from campaign.spend import SPEND_GAPS, budget_allows_next, exceeded_ceiling, spend_complete, spend_gap, spend_stop
from campaign.store.limits import SpendLimits
from campaign.store import leases, repository
from campaign.store.migrate import open_store


@pytest.fixture
def store(backend_url):
    engine = open_store(backend_url)
    yield engine
    engine.dispose()


def campaign_with(engine, costs, *, provider="offline", extra: int = 0) -> int:
    """A campaign whose attempts reported these (cost_usd, spend_complete, equivalent_usd),
    with ``extra`` more trials still scheduled."""
    schedule = build_schedule([f"task-{i}" for i in range(len(costs) + extra)], 1, seed=1)[: len(costs) + extra]
    campaign_id = repository.create_campaign(
        engine,
        repository.NewCampaign(kind="campaign", state="running", live=True, agent="offline", seed=1, experiment={}),
        schedule,
        model="offline:sim",
        default_provider=provider,
    )
    for trial, (cost, complete, equivalent) in zip(repository.trials_in_order(engine, campaign_id), costs):
        assert repository.admit_trial(engine, trial.id)
        attempt_id = repository.start_attempt(engine, trial)
        repository.finish_attempt(engine, attempt_id, trial.id, outcome="passed", cost_usd=cost, spend_complete=complete, equivalent_spend_usd=equivalent, cleanup_complete=True)
    return campaign_id


def test_binary_floats_would_stop_early_but_the_gate_does_not():
    assert 0.1 + 0.1 + 0.1 > 0.3  # why the gate must not add floats
    limits = SpendLimits(0.3, 0.1)
    assert limits.max_spend_usd == Decimal("0.3") and limits.per_attempt_ceiling_usd == Decimal("0.1")
    assert budget_allows_next(Decimal("0.2"), limits)
    assert not budget_allows_next(Decimal("0.200000001"), limits)
    assert not exceeded_ceiling(0.1, limits) and exceeded_ceiling(0.1000000001, limits)


def test_two_attempts_of_a_dime_leave_room_for_a_third_under_a_thirty_cent_cap(store):
    campaign_id = campaign_with(store, [(0.1, True, None), (0.1, True, None)])
    measured = repository.measured_spend(store, campaign_id)
    assert measured == Decimal("0.2")
    approval = Approval(plan_digest="0" * 64, max_attempts=10, limits=SpendLimits(0.3, 0.1), credential_env=())
    assert gate(stop_reason=None, now=0.0, deadline=1.0, attempted=2, approval=approval, measured=measured) is None
    campaign_id = campaign_with(store, [(0.1, True, None)] * 3)
    assert repository.measured_spend(store, campaign_id) == Decimal("0.3")
    assert gate(stop_reason=None, now=0.0, deadline=1.0, attempted=3, approval=approval, measured=repository.measured_spend(store, campaign_id)) == "spend_limit"


def test_sums_are_exact_over_many_small_costs(store):
    campaign_id = campaign_with(store, [(0.01, True, None)] * 30)
    assert repository.measured_spend(store, campaign_id) == Decimal("0.3")


def test_provider_spend_counts_measured_cost_else_list_price_and_says_which(store):
    campaign_id = campaign_with(store, [(0.1, True, 0.9), (0.05, False, 0.2), (None, None, 0.3), (None, None, None)])
    spent = repository.provider_spend(store, campaign_id, "offline")
    # Complete measured cost where reported; the list-price equivalent otherwise; else unknown.
    assert spent.usd == Decimal("0.6") and (spent.measured, spent.equivalent, spent.unknown) == (1, 2, 1)
    assert spent.basis == "measured + list-price equivalent + unknown for 1 attempt(s)"
    assert repository.provider_spend(store, campaign_id, "elsewhere").usd == Decimal(0)


def test_admission_reserves_against_the_exact_spend_so_far(store):
    campaign_id = campaign_with(store, [(0.1, True, 0.9), (0.05, False, 0.2), (None, None, 0.3)], extra=2)
    waiting = [t for t in repository.trials_in_order(store, campaign_id) if t.status == "scheduled"]
    # 0.6 counted + 0.1 ceiling fits 0.7 exactly, and not 0.69.
    assert leases.admit(store, waiting[0], me=None, caps=SpendLimits(None, Decimal("0.1"), provider_max_spend_usd=Decimal("0.69")), lineage=[campaign_id]) == "spend_limit"
    assert leases.admit(store, waiting[0], me=None, caps=SpendLimits(None, Decimal("0.1"), provider_max_spend_usd=Decimal("0.7")), lineage=[campaign_id]) is None
    # ... and the reserved 0.1 now counts for the next one.
    assert leases.admit(store, waiting[1], me=None, caps=SpendLimits(Decimal("0.75"), Decimal("0.1")), lineage=[campaign_id]) == "spend_limit"


def test_a_continuation_gates_on_its_whole_lineage(store):
    first = campaign_with(store, [(0.2, True, None)])
    carried = repository.carryable_trials(store, first)
    second = repository.create_continuation(store, first, carried)
    assert repository.lineage(store, second) == [second, first]
    assert repository.measured_spend(store, second) == Decimal("0.2")
    assert repository.provider_spend(store, second, "offline").usd == Decimal("0.2")


CEILING = SpendLimits(1.0, 0.1)


@pytest.mark.parametrize(
    ("failure_class", "cost", "complete", "equivalent", "stop"),
    [
        (None, 0.05, True, None, None),
        (None, 0.05, True, 0.5, None),  # measured and complete: the list-price equivalent is not the spend
        (None, 0.2, True, None, "attempt_exceeded_ceiling"),
        (None, None, False, 0.5, "attempt_exceeded_ceiling"),  # even a lower bound is past it
        (None, None, False, 0.05, "spend_incomplete"),
        (None, None, None, None, "spend_incomplete"),
        ("attempt_exceeded_ceiling", None, False, None, "attempt_exceeded_ceiling"),  # stopped at it while running
    ],
)
def test_the_paired_lane_and_the_workers_read_an_attempts_spend_one_way(failure_class, cost, complete, equivalent, stop):
    # The paired lane's stop after an attempt, for the same attempt a worker would judge.
    attempt = SimpleNamespace(stop_reason=None, failure_class=failure_class, record=SimpleNamespace(cost_usd=cost), spend_complete=complete, equivalent_spend_usd=equivalent)
    approval = Approval(plan_digest="0" * 64, max_attempts=10, limits=CEILING, credential_env=())
    assert spend_stop(failure_class, cost, complete, equivalent, CEILING) == stop
    assert after_attempt(attempt, approval) == stop


def _record(**kw):
    turn = TurnUsage("req-1", "usage-1", 10, 5, 0)
    fields = {"cost_usd": 0.01, "cost_reported": True, "completed_turns": 1, "turn_usage": (turn,), "nested_sessions_observed": False}
    return replace(unknown_record(None), **{**fields, **kw})


@pytest.mark.parametrize(
    ("record", "flush", "gap"),
    [
        (_record(), True, None),
        # Issue 42 item 2: the spec's spend_complete needs a completed flush from every client,
        # not only from one the engine profiles; a client off the wire has none.
        (_record(), None, "no_flush"),
        (_record(), False, "no_flush"),
        (_record(cost_usd=None), True, "no_cost"),
        (_record(cost_reported=False), True, "no_cost"),
        (_record(completed_turns=2), True, "usage_unmatched"),
    ],
)
def test_spend_is_complete_only_with_cost_a_completed_flush_and_matched_usage(record, flush, gap):
    assert spend_gap(record, flush_complete=flush) == gap
    assert spend_complete(record, flush_complete=flush) is (gap is None)
    assert gap is None or SPEND_GAPS[gap]
