"""Spend and wall-time forecasts from a pilot's attempts."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from campaign.power import forecast as fc
from campaign.power.forecast import CellCost
from campaign.store.limits import SpendLimits

NANO = 10**9


def cell(provider="p", task="a", variant="baseline", *, trials=1, counted=None, usd=0.1, unknown=0, measured=None, seconds=10.0, **extra) -> CellCost:
    counted = trials if counted is None else counted
    return CellCost(provider, task, variant, trials, counted, round(usd * NANO), unknown, counted - unknown if measured is None else measured, seconds, 0, **extra)


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def test_a_campaign_of_the_pilots_tasks_costs_repetitions_times_what_each_task_cost():
    cells = [cell(task=t, variant=v, usd=u) for t, u in (("a", 0.1), ("b", 0.3)) for v in ("baseline", "coding")]
    out = fc.forecast(fc.cost_model(cells), 3, 2, rng(), sims=200)
    assert out.usd == pytest.approx(3 * 2 * (0.1 + 0.3))
    assert out.low_usd <= out.usd <= out.high_usd
    assert out.seconds_one_runner == pytest.approx(3 * 4 * 10.0)
    assert out.complete is True and out.providers[0].basis == "measured"


def test_what_faults_cost_is_part_of_a_trial_and_interruptions_are_set_aside():
    # One trial with a verdict; a provider fault before it cost 0.05 and 4 s: the trial cost 0.15.
    faulted = cell(counted=2, usd=0.15, seconds=14.0, set_aside=3, set_aside_nano=round(0.9 * NANO))
    model = fc.cost_model([faulted])
    out = fc.forecast(model, 2, 1, rng(), sims=50)
    assert out.usd == pytest.approx(0.3) and out.seconds_one_runner == pytest.approx(28.0)
    assert model.attempts_per_trial == 2.0
    assert fc.set_aside([faulted]) == (3, Decimal("0.9"))


def test_unknown_spend_makes_the_forecast_a_lower_bound_that_says_so():
    cells = [cell(counted=2, usd=0.1, unknown=1), cell(task="b", usd=0.2)]
    out = fc.forecast(fc.cost_model(cells), 1, 2, rng(), sims=50)
    (provider,) = out.providers
    assert provider.complete is False and provider.unknown_attempts == 1 and out.complete is False
    assert "unknown for 1 attempt(s)" in provider.basis
    nothing_known = fc.forecast(fc.cost_model([cell(usd=0.0, unknown=1)]), 1, 1, rng(), sims=50)
    assert nothing_known.usd is None and nothing_known.providers[0].usd is None


def test_the_basis_names_measured_and_list_price_equivalent_attempts():
    out = fc.forecast(fc.cost_model([cell(counted=3, trials=3, measured=1)]), 1, 1, rng(), sims=10)
    assert out.providers[0].basis == "measured + list-price equivalent"


def test_a_task_a_provider_never_finished_counts_at_its_mean_task():
    cells = [cell(task="a", usd=0.1), cell(task="b", usd=0.3), cell(provider="q", task="a", usd=1.0)]
    out = fc.forecast(fc.cost_model(cells), 1, 2, rng(), sims=50)
    by = {p.provider: p for p in out.providers}
    assert by["p"].usd == pytest.approx(0.4) and by["q"].usd == pytest.approx(2.0)


def test_caps_warn_when_the_forecast_plus_one_ceiling_passes_them():
    cells = [cell(task=t, usd=1.0) for t in "abcd"]
    caps = SpendLimits(Decimal("10"), Decimal("0.5"), provider_max_spend_usd=Decimal("4.2"))
    out = fc.forecast(fc.cost_model(cells), 1, 4, rng(), sims=100, caps=caps)
    assert out.providers[0].over_cap is True  # 4 + 0.5 > 4.2
    assert out.over_cap is False
    roomy = fc.forecast(fc.cost_model(cells), 1, 4, rng(), sims=100, caps=SpendLimits(None, Decimal("0.1"), provider_max_spend_usd=Decimal("100")))
    assert roomy.providers[0].over_cap is False and roomy.providers[0].may_pass_cap is False


def test_parallel_workers_take_as_long_as_the_busiest():
    assert fc.makespan([30.0, 20.0, 10.0], 1) == 60.0
    assert fc.makespan([30.0, 20.0, 10.0], 2) == 30.0
    assert fc.makespan([30.0, 20.0, 10.0], 8) == 30.0
    cells = [cell(provider=p, seconds=s) for p, s in (("p", 30.0), ("q", 10.0))]
    out = fc.forecast(fc.cost_model(cells), 1, 1, rng(), sims=10)
    assert (out.seconds_one_runner, out.seconds_parallel, out.workers) == (40.0, 30.0, 2)


def test_no_trial_with_a_verdict_is_no_cost_model():
    assert fc.cost_model([cell(trials=0, counted=2)]) is None
