"""A pilot read from a real store: its pairs as its report counts them, and its attempts' cost."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import text
from test_report_fixtures import T0, insert_campaign

from campaign.errors import UsageProblem
from campaign.power.pilot import read_pilot
from campaign.report import build_report
from campaign.report.integrity import UnverifiedStore
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import upgrade_engine


@pytest.fixture
def store(backend_url):
    engine = make_engine(resolve_url(backend_url))
    upgrade_engine(engine)
    yield engine
    engine.dispose()


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def attempt(passed: bool, cost: float | None = 0.1, seconds: float = 10.0, **extra) -> dict:
    return {"verified_pass": passed, "cost_usd": cost, "spend_complete": cost is not None, "started_at": T0, "ended_at": at(seconds), **extra}


FAULT = {"status": "faulted", "outcome": "provider_error", "failure_class": "rate_limited", "cost_usd": 0.05, "spend_complete": True, "ended_at": at(4.0)}
STOPPED = {"cost_usd": 0.5, "spend_complete": True, "ended_at": at(30.0)}


def pilot_trials(provider: str = "alpha") -> list[dict]:
    trials = []
    for task, outcomes in (("a", [(True, False), (True, True)]), ("b", [(False, False), (False, True)]), ("c", [(True, True), (True, True)])):
        for rep, (coding, baseline) in enumerate(outcomes, start=1):
            trials.append({"task": task, "repetition": rep, "variant": "baseline", "provider": provider, "attempt": attempt(baseline)})
            trials.append({"task": task, "repetition": rep, "variant": "coding", "provider": provider, "attempt": attempt(coding, seconds=20.0)})
    trials[0]["earlier"] = [FAULT]  # a provider fault before task a's first baseline verdict
    trials[3]["earlier"] = [STOPPED]  # an interruption before task a's second coding verdict
    return trials


def test_the_pilots_pairs_are_the_pairs_its_report_counts(store):
    cid = insert_campaign(store, pilot_trials(), kind="campaign")
    pilot = read_pilot(store, cid)
    per_task = {t.task: (t.pairs, t.candidate_only, t.baseline_only) for t in pilot.tasks}
    assert per_task == {"a": (2, 1, 0), "b": (2, 0, 1), "c": (2, 0, 0)}
    report = build_report(store, cid)["paired_differences"]
    assert {t["task"]: t["pairs"] for t in report["per_task"]} == {k: v[0] for k, v in per_task.items()}
    assert (pilot.providers, pilot.seed, pilot.pairs) == (("alpha",), 107, 6)


def test_faults_count_towards_a_trials_cost_and_interruptions_are_set_aside(store):
    cid = insert_campaign(store, pilot_trials(), kind="campaign")
    cells = {(c.task, c.variant): c for c in read_pilot(store, cid).cells}
    a_base, a_coding = cells[("a", "baseline")], cells[("a", "coding")]
    assert (a_base.trials, a_base.counted, a_base.spend_nano) == (2, 3, round(0.25e9))
    assert a_base.seconds == pytest.approx(24.0)
    assert (a_coding.trials, a_coding.counted, a_coding.set_aside, a_coding.set_aside_nano) == (2, 2, 1, round(0.5e9))
    assert a_coding.seconds == pytest.approx(40.0)
    assert cells[("c", "coding")].measured == 2 and cells[("c", "coding")].spend_unknown == 0


def test_an_attempt_without_spend_is_counted_unknown_never_zero(store):
    trials = pilot_trials()
    trials[1]["attempt"] = attempt(False, cost=None)
    cid = insert_campaign(store, trials, kind="campaign")
    cells = {(c.task, c.variant): c for c in read_pilot(store, cid).cells}
    assert cells[("a", "coding")].spend_unknown == 1 and cells[("a", "coding")].spend_nano == round(0.1e9)


def test_list_price_equivalent_stands_in_for_incomplete_measured_spend(store):
    trials = pilot_trials()
    trials[1]["attempt"] = attempt(False, cost=0.9, spend_complete=False, equivalent_spend_usd=0.3)
    cid = insert_campaign(store, trials, kind="campaign")
    cells = {(c.task, c.variant): c for c in read_pilot(store, cid).cells}
    assert cells[("a", "coding")].spend_nano == round(0.4e9) and cells[("a", "coding")].measured == 1


def test_one_provider_of_a_pilot(store):
    cid = insert_campaign(store, pilot_trials("alpha") + pilot_trials("beta"), kind="campaign")
    both, beta = read_pilot(store, cid), read_pilot(store, cid, "beta")
    assert both.providers == ("alpha", "beta") and both.pairs == 12
    assert beta.providers == ("beta",) and beta.pairs == 6 and {c.provider for c in beta.cells} == {"beta"}


@pytest.mark.parametrize(
    ("setup", "provider", "option", "needle"),
    [
        (None, None, "--campaign", "no campaign 99"),
        ({"kind": "nonpaired"}, None, "--campaign", "nonpaired run"),
        ({"kind": "campaign"}, "gamma", "--provider", "no provider 'gamma'"),
        ({"kind": "paired", "state": "planned", "bare": True}, None, "--campaign", "no attempts yet"),
    ],
)
def test_a_campaign_that_is_no_pilot_is_refused_naming_the_option(store, setup, provider, option, needle):
    if setup is None:
        cid = 99
    else:
        setup = dict(setup)  # the parameters are shared by both backends
        bare = setup.pop("bare", False)
        trials = [{k: v for k, v in t.items() if k not in ("attempt", "earlier")} | {"status": "scheduled"} for t in pilot_trials()] if bare else pilot_trials()
        cid = insert_campaign(store, trials, **setup)
    with pytest.raises(UsageProblem) as refused:
        read_pilot(store, cid, provider)
    assert refused.value.option == option and needle in str(refused.value)


def test_a_pilot_whose_rows_do_not_verify_is_refused(store):
    """Spend edited after the rows were sealed would be forecast as the pilot's: refused."""
    cid = insert_campaign(store, pilot_trials(), kind="campaign")
    with store.begin() as conn:
        conn.execute(text("UPDATE attempts SET cost_usd = cost_usd * 100 WHERE campaign_id = :c AND seq = 2"), {"c": cid})
    with pytest.raises(UnverifiedStore, match=rf"campaign {cid}: the attempt rows do not verify .* seq 2.* not planned from"):
        read_pilot(store, cid)


def test_a_pilot_of_its_own_variants_is_planned_from_its_first_candidates_pairs(store):
    # default vs lean: lean wins every second repetition; terse is never read for the spread.
    trials = [
        {"task": t, "repetition": r, "variant": v, "attempt": attempt(v == "lean" and r % 2 == 0 or v == "terse")}
        for t in ("t1", "t2", "t3") for r in (1, 2, 3, 4) for v in ("default", "lean", "terse")
    ]  # fmt: skip
    experiment = {"model": "replay:scripted", "seed": 107, "tasks": ["t1", "t2", "t3"], "variants": [{"name": n} for n in ("default", "lean", "terse")]}
    pilot = read_pilot(store, insert_campaign(store, trials, experiment=experiment, kind="campaign"))
    assert pilot.variants == ("default", "lean", "terse")
    assert [(t.task, t.pairs, t.candidate_only, t.baseline_only) for t in pilot.tasks] == [("t1", 4, 2, 0), ("t2", 4, 2, 0), ("t3", 4, 2, 0)]
    assert {c.variant for c in pilot.cells} == {"default", "lean", "terse"} and pilot.candidate == "lean"
    # terse verifies every time, default never: the operator may plan from that comparison.
    terse = read_pilot(store, 1, candidate="terse")
    assert terse.candidate == "terse" and [(t.candidate_only, t.baseline_only) for t in terse.tasks] == [(4, 0)] * 3
    with pytest.raises(UsageProblem, match="has no candidate 'default'; its candidates are lean, terse") as refused:
        read_pilot(store, 1, candidate="default")
    assert refused.value.option == "--candidate"
