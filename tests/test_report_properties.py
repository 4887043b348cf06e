"""The report's point estimates equal a straightforward computation, on random stores.

Each example writes a random campaign (missing wall times, zero successes,
incomplete or missing spend, interrupted attempts before a trial's result or
instead of one, not-attempted trials) into a real migrated store, builds the
report, and compares it with a plain-Python computation written without SQL,
numpy or any report code.
"""

from __future__ import annotations

import math
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from test_report_fixtures import insert_campaign

from campaign.report import build_report
from campaign.report.markdown import render_markdown
from campaign.store.chain import seal_attempt
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import upgrade_engine

VARIANTS = ("baseline", "coding")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    eng = make_engine(resolve_url(str(tmp_path_factory.mktemp("props") / "campaign.db")))
    upgrade_engine(eng)
    yield eng
    eng.dispose()


money = st.floats(min_value=0, max_value=50, allow_nan=False, allow_infinity=False)
attempts = st.fixed_dictionaries(
    {
        "verified_pass": st.sampled_from([True, False, None]),
        "wall_seconds": st.one_of(st.none(), st.floats(min_value=0.5, max_value=900, allow_nan=False)),
        "cost_usd": st.one_of(st.none(), money),
        "spend_complete": st.sampled_from([True, True, False, None]),
        "equivalent_spend_usd": st.one_of(st.none(), money),
        "tool_errors": st.one_of(st.none(), st.integers(0, 3)),
        "diagnostic_events_version": st.sampled_from([None, 1]),
        "incorrect_tool_calls": st.one_of(st.none(), st.integers(0, 2)),
        "discovery_failures": st.one_of(st.none(), st.integers(0, 2)),
    }
)
reasons = st.sampled_from(["spend_limit", "run_deadline", "cleanup_unverified"])
# An interrupted attempt: its spend and teardown outcome, no verdict.
interrupted = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["interrupted", "interrupted", "running"]),
        "cost_usd": st.one_of(st.none(), money),
        "spend_complete": st.sampled_from([True, False, None]),
        "equivalent_spend_usd": st.one_of(st.none(), money),
        "wall_seconds": st.one_of(st.none(), st.floats(min_value=0.5, max_value=900, allow_nan=False)),
        "teardown_outcome": st.just("clean"),
    }
)


@st.composite
def campaigns(draw):
    n_tasks = draw(st.integers(1, 6))
    reps = draw(st.integers(1, 3))
    no_success = draw(st.booleans())
    trials = []
    for rep in range(1, reps + 1):
        for i in range(n_tasks):
            for variant in VARIANTS:
                attempt = draw(st.one_of(st.none(), attempts, attempts, attempts))
                if attempt is not None and no_success:
                    attempt = {**attempt, "verified_pass": draw(st.sampled_from([False, None]))}
                # Interrupted attempts before the result (or instead of one); a running
                # one (a killed runner's orphan) can only be a trial's last.
                earlier = draw(st.lists(interrupted, max_size=2))
                earlier = [e for k, e in enumerate(earlier) if e["status"] == "interrupted" or (k == len(earlier) - 1 and attempt is None)]
                trial = {"task": f"task-{i}", "repetition": rep, "variant": variant, "attempt": attempt, "earlier": earlier}
                if attempt is None and earlier and earlier[-1]["status"] == "running":
                    trial["status"], trial["reason"] = "admitted", None  # its attempt holds it
                elif attempt is None:
                    trial["status"] = draw(st.sampled_from(["not_attempted", "not_attempted", "scheduled"]))
                    trial["reason"] = draw(reasons) if trial["status"] == "not_attempted" else None
                trials.append(trial)
    return trials, draw(st.integers(0, 2**31))


def _running_last(trials) -> bool:
    """The engine's chain allows a running row only at its end; elsewhere the store is left unsealed."""
    rows = [a for t in trials for a in [*t["earlier"], *([t["attempt"]] if t["attempt"] else [])]]
    return all(a.get("status") != "running" for a in rows[:-1])


def _mean(values):
    return sum(values) / len(values)


def expected_variants(trials):
    """Outcomes from each trial's finished attempt; spend from every attempt, interrupted ones too."""
    out = {}
    for variant in VARIANTS:
        rows = [t["attempt"] for t in trials if t["variant"] == variant and t["attempt"] is not None]
        paid = rows + [e for t in trials if t["variant"] == variant for e in t["earlier"]]
        n = len(rows)
        successes = sum(1 for a in rows if a["verified_pass"] is True)
        costs = [a["cost_usd"] for a in paid if a["cost_usd"] is not None]
        complete = len(paid) > 0 and all(a["spend_complete"] is True and a["cost_usd"] is not None for a in paid)
        if successes == 0:
            per_success, reason = None, "undefined_zero_successes"
        elif not complete:
            per_success, reason = None, "incomplete_missing_spend"
        else:
            per_success, reason = sum(costs) / successes, None
        out[variant] = {
            "attempts": n,
            "interrupted_attempts": len(paid) - n,
            "spend_attempts": len(paid),
            "successes": successes,
            "success_rate": successes / n if n else None,
            "measured_spend_usd": sum(costs) if costs else None,
            "spend_complete": complete if paid else None,
            "cost_per_verified_success_usd": per_success,
            "cost_per_verified_success_reason": reason,
        }
    return out


def expected_differences(trials):
    pairs = defaultdict(dict)
    for t in trials:
        pairs[(t["task"], t["repetition"])][t["variant"]] = t["attempt"]
    success_by_task, wall_by_task = defaultdict(list), defaultdict(list)
    for (task, _rep), both in pairs.items():
        b, c = both.get("baseline"), both.get("coding")
        if b is None or c is None:
            continue
        success_by_task[task].append(int(c["verified_pass"] is True) - int(b["verified_pass"] is True))
        if b["wall_seconds"] is not None and c["wall_seconds"] is not None:
            wall_by_task[task].append(c["wall_seconds"] - b["wall_seconds"])
    success_means = [_mean(v) for v in success_by_task.values()]
    wall_means = [_mean(v) for v in wall_by_task.values()]
    return {
        "success": _mean(success_means) if success_means else None,
        "success_tasks": len(success_means),
        "success_pairs": sum(len(v) for v in success_by_task.values()),
        "wall": _mean(wall_means) if wall_means else None,
        "wall_tasks": len(wall_means),
        "wall_pairs": sum(len(v) for v in wall_by_task.values()),
        "per_task": {task: _mean(v) for task, v in success_by_task.items()},
    }


def _close(a, b):
    if a is None or b is None:
        return a is b
    # Dollar sums are exact sums of nano-dollar amounts, so allow nano-dollar rounding.
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-7)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(campaigns())
def test_point_estimates_match_a_plain_computation(store, drawn):
    trials, seed = drawn
    sealed = _running_last(trials)
    # A running row is a campaign still running (or its runner killed): a completed one has none.
    running = any(a.get("status") == "running" for t in trials for a in [*t["earlier"], *([t["attempt"]] if t["attempt"] else [])])
    cid = insert_campaign(store, trials, seed=seed, seal=sealed, state="running" if running else "completed")
    report = build_report(store, cid)
    assert report["integrity"]["chain_verified"] is sealed

    want = expected_variants(trials)
    got = {v["variant"]: v for v in report["variants"]}
    for variant in VARIANTS:
        for key, value in want[variant].items():
            assert _close(got[variant][key], value) if isinstance(value, float) else got[variant][key] == value, (variant, key)
        if want[variant]["measured_spend_usd"] is None:
            assert got[variant]["measured_spend_status"] in ("none_measured", "no_attempts")

    diff = expected_differences(trials)
    pd = report["paired_differences"]
    assert _close(pd["verified_success"]["estimate"], diff["success"])
    assert pd["verified_success"]["tasks"] == diff["success_tasks"]
    assert pd["verified_success"]["pairs"] == diff["success_pairs"]
    assert _close(pd["wall_seconds"]["estimate"], diff["wall"])
    assert pd["wall_seconds"]["tasks"] == diff["wall_tasks"]
    assert pd["wall_seconds"]["pairs"] == diff["wall_pairs"]
    assert {t["task"]: t["success_difference"] for t in pd["per_task"]} == pytest.approx(diff["per_task"])
    task_means = {
        "verified_success": [t["success_difference"] for t in pd["per_task"] if t["pairs"]],
        "wall_seconds": [t["wall_seconds_difference"] for t in pd["per_task"] if t["wall_pairs"]],
    }
    for metric, n in (("verified_success", diff["success_tasks"]), ("wall_seconds", diff["wall_tasks"])):
        d = pd[metric]
        boot = d["bootstrap_percentile_95"]
        if n >= 2 and max(task_means[metric]) - min(task_means[metric]) <= 1e-12:
            # The bootstrap has nothing to resample; the headline never claims zero width:
            # it floors the spread by the pairs' own, or bounds what pairs could hide.
            assert (boot["ci_low"], boot["ci_high"], boot["interval_reason"]) == (None, None, "no_spread_between_tasks")
            if d["ci_low"] is None:
                assert metric == "wall_seconds" and d["interval_reason"] == "no_spread_between_tasks"
            else:
                assert d["interval_reason"] in ("between_task_spread_floored", "no_spread_bounded")
                assert d["ci_low"] < d["ci_high"]
        elif n >= 2:
            assert d["ci_low"] is not None and d["ci_low"] <= d["estimate"] <= d["ci_high"]
            assert boot["ci_low"] is not None and boot["ci_low"] <= boot["ci_high"]
        else:
            assert d["ci_low"] is None and d["ci_high"] is None
            assert d["interval_reason"] == ("single_task_cluster" if n == 1 else d["estimate_reason"])

    attempted = [t for t in trials if t["attempt"] is not None]
    without = [t for t in trials if t["attempt"] is None]
    assert report["completion"]["attempted"] == len(attempted)
    # Never attempted, apart from attempted (an interrupted, paid attempt) without a result.
    assert report["completion"]["not_attempted"] == sum(not t["earlier"] for t in without)
    assert report["completion"]["attempted_without_result"] == sum(bool(t["earlier"]) for t in without)
    assert report["completion"]["interrupted_attempts"] == sum(len(t["earlier"]) for t in trials)
    assert len(report["trials"]) == len(attempted)
    assert len(report["not_attempted_trials"]) == len(without)
    assert len(report["spend_only_attempts"]) == sum(len(t["earlier"]) for t in trials)
    assert all(set(a).isdisjoint({"verified_pass", "outcome", "failure_class"}) for a in report["spend_only_attempts"])
    for row, t in zip(report["not_attempted_trials"], without):
        assert row["interrupted_attempts"] == len(t["earlier"])
        if t["earlier"] and t["status"] != "not_attempted":
            assert row["reason"] == "interrupted"
    for row, t in zip(report["trials"], attempted):
        assert row["interrupted_attempts"] == len(t["earlier"]) and row["attempt_status"] == "finished"
        a = t["attempt"]
        recover = None if a["tool_errors"] is None else int(a["tool_errors"] >= 1 and a["verified_pass"] is True)
        assert row["tool_error_recoveries"] == recover
        assert row["incorrect_tool_calls"] == (a["incorrect_tool_calls"] if a["diagnostic_events_version"] is not None else None)
        assert row["discovery_failures"] == (a["discovery_failures"] if a["diagnostic_events_version"] is not None else None)
        assert row["wall_seconds"] == a["wall_seconds"] and row["cost_usd"] == a["cost_usd"]


def test_zero_successes_wins_over_incomplete_spend(engine):
    trials = [
        {"task": "a", "repetition": 1, "variant": v, "attempt": {"verified_pass": False, "cost_usd": None, "spend_complete": False}}
        for v in VARIANTS
    ]
    report = build_report(engine, insert_campaign(engine, trials))
    for v in report["variants"]:
        assert v["cost_per_verified_success_usd"] is None
        assert v["cost_per_verified_success_reason"] == "undefined_zero_successes"
        assert v["spend_complete"] is False
        assert v["measured_spend_usd"] is None and v["measured_spend_status"] == "none_measured"


def test_incomplete_spend_with_successes_is_null_with_reason_and_partial_sum(engine):
    trials = [
        {"task": "a", "repetition": 1, "variant": "coding", "attempt": {"verified_pass": True, "cost_usd": 0.5, "spend_complete": True}},
        {"task": "a", "repetition": 2, "variant": "coding", "attempt": {"verified_pass": False, "cost_usd": 0.25, "spend_complete": False}},
        {"task": "a", "repetition": 1, "variant": "baseline", "attempt": {"verified_pass": True, "cost_usd": 0.5, "spend_complete": True}},
        {"task": "a", "repetition": 2, "variant": "baseline", "attempt": {"verified_pass": False, "cost_usd": 0.5, "spend_complete": True}},
    ]
    report = build_report(engine, insert_campaign(engine, trials))
    coding = next(v for v in report["variants"] if v["variant"] == "coding")
    baseline = next(v for v in report["variants"] if v["variant"] == "baseline")
    assert coding["measured_spend_usd"] == pytest.approx(0.75)
    assert coding["measured_spend_status"] == "partial"
    assert coding["cost_per_verified_success_usd"] is None
    assert coding["cost_per_verified_success_reason"] == "incomplete_missing_spend"
    # Failures count towards spend: 1.00 over all attempts / 1 success.
    assert baseline["cost_per_verified_success_usd"] == pytest.approx(1.0)
    assert baseline["spend_complete"] is True


def test_missing_wall_drops_only_that_pairs_wall_comparison(engine):
    trials = [
        {"task": "a", "repetition": 1, "variant": "baseline", "attempt": {"verified_pass": False, "wall_seconds": None}},
        {"task": "a", "repetition": 1, "variant": "coding", "attempt": {"verified_pass": True, "wall_seconds": 50.0}},
        {"task": "a", "repetition": 2, "variant": "baseline", "attempt": {"verified_pass": True, "wall_seconds": 100.0}},
        {"task": "a", "repetition": 2, "variant": "coding", "attempt": {"verified_pass": True, "wall_seconds": 70.0}},
    ]
    report = build_report(engine, insert_campaign(engine, trials))
    pd = report["paired_differences"]
    assert pd["verified_success"]["pairs"] == 2 and pd["verified_success"]["estimate"] == pytest.approx(0.5)
    assert pd["wall_seconds"]["pairs"] == 1 and pd["wall_seconds"]["estimate"] == pytest.approx(-30.0)
    assert pd["verified_success"]["interval_reason"] == "single_task_cluster"
    assert pd["verified_success"]["ci_low"] is None
    assert pd["exploratory"] is True


def test_not_attempted_trials_are_listed_separately_and_never_counted(engine):
    trials = [
        {"task": "a", "repetition": 1, "variant": "baseline", "attempt": {"verified_pass": True}},
        {"task": "a", "repetition": 1, "variant": "coding", "attempt": None, "status": "not_attempted", "reason": "spend_limit"},
        {"task": "b", "repetition": 1, "variant": "baseline", "attempt": None, "status": "scheduled", "reason": None},
        {"task": "b", "repetition": 1, "variant": "coding", "attempt": None, "status": "admitted", "reason": None},
    ]
    report = build_report(engine, insert_campaign(engine, trials, stop_reason="spend_limit", state="stopped"))
    assert [v["attempts"] for v in report["variants"]] == [1, 0]
    assert [v["successes"] for v in report["variants"]] == [1, 0]
    assert report["completion"]["not_attempted_by_reason"] == {"admitted_without_attempt": 1, "not_reached": 1, "spend_limit": 1}
    assert report["completion"]["all_scheduled_attempted"] is False
    assert [(t["trial_id"], t["reason"]) for t in report["not_attempted_trials"]] == [
        ("a/r1/coding", "spend_limit"),
        ("b/r1/baseline", "not_reached"),
        ("b/r1/coding", "admitted_without_attempt"),
    ]
    assert report["paired_differences"]["verified_success"]["estimate_reason"] == "no_complete_pairs"
    assert report["decision"]["basis"] == "no_paired_evidence"


def test_provider_scope_reports_one_provider_and_the_whole(engine):
    trials = []
    for provider, coding_pass in (("openai-codex", True), ("zai", False)):
        for task in ("a", "b"):
            trials += [
                {"task": task, "repetition": 1, "variant": "baseline", "provider": provider, "attempt": {"verified_pass": False}},
                {"task": task, "repetition": 1, "variant": "coding", "provider": provider, "attempt": {"verified_pass": coding_pass}},
            ]
    cid = insert_campaign(engine, trials)
    whole = build_report(engine, cid)
    zai = build_report(engine, cid, provider="zai")
    assert whole["scope"]["provider"] is None and zai["scope"]["provider"] == "zai"
    assert whole["completion"]["attempted"] == 8 and zai["completion"]["attempted"] == 4
    assert whole["paired_differences"]["verified_success"]["estimate"] == pytest.approx(0.5)
    assert zai["paired_differences"]["verified_success"]["estimate"] == 0.0
    assert {t["provider"] for t in zai["trials"]} == {"zai"}
    assert zai["runtime"]["providers"] == ["zai"]


def test_a_provider_running_the_offline_agent_makes_the_figures_synthetic(engine):
    """A multi-provider campaign whose catalog gives the offline agent (synthetic
    prices) to a provider not named "offline": its agent is recorded as "custom",
    yet the figures of that provider, and of the whole campaign, are synthetic."""
    experiment = {
        "kind": "campaign",
        "agent": "custom",
        "model": None,
        "seed": 107,
        "tasks": ["a", "b"],
        "providers": [
            {"name": "openai-codex", "model": "openai-codex:gpt-5-codex", "agent": "codex", "basis": "public list price"},
            {"name": "sim", "model": "sim:synthetic", "agent": "offline", "basis": "synthetic"},
        ],
    }
    trials = []
    for provider in ("openai-codex", "sim"):
        for task in ("a", "b"):
            trials += [
                {"task": task, "repetition": 1, "variant": v, "provider": provider, "attempt": {"verified_pass": v == "coding"}}
                for v in VARIANTS
            ]
    cid = insert_campaign(engine, trials, agent="custom", kind="campaign", experiment=experiment)
    whole, sim, real = (build_report(engine, cid, provider=p) for p in (None, "sim", "openai-codex"))
    assert whole["synthetic"] is True and whole["decision"]["basis"] == "synthetic_figures"
    assert sim["synthetic"] is True and sim["decision"]["basis"] == "synthetic_figures"
    assert real["synthetic"] is False


@pytest.mark.parametrize("paired", [False, True])
def test_a_replayed_upstream_makes_the_figures_synthetic_whatever_its_price_basis(engine, paired):
    """A catalog may price the replay provider's scripted model at a public list price, and
    a paired plan may route to it: what it answered is still test data, never evidence.
    Before, such a report read synthetic false, with a real decision and no banner."""
    if paired:
        experiment = {"kind": "paired", "agent": "claude-code", "model": "replay:claude-sonnet-4-5", "seed": 107, "tasks": ["a", "b"], "wire_upstream": "replay"}
        agent, kind = "claude-code", "paired"
    else:
        experiment = {
            "kind": "campaign", "agent": "custom", "model": None, "seed": 107, "tasks": ["a", "b"],
            "providers": [{"name": "listtest", "model": "listtest:m", "agent": "offline-wire", "basis": "public list price", "wire_upstream": "replay"}],
        }  # fmt: skip
        agent, kind = "custom", "campaign"
    trials = [
        {"task": task, "repetition": 1, "variant": v, "provider": "listtest", "attempt": {"verified_pass": v == "coding"}}
        for task in ("a", "b")
        for v in VARIANTS
    ]
    report = build_report(engine, insert_campaign(engine, trials, agent=agent, kind=kind, experiment=experiment))
    assert report["synthetic"] is True and report["decision"]["basis"] == "synthetic_figures"
    assert "**Synthetic figures.**" in render_markdown(report, "r.svg")


def test_attempts_a_provider_or_the_engine_ended_are_not_called_interrupted(engine):
    """A trial whose only attempts the provider (or the engine) ended has no result for
    that reason, not because anyone interrupted it; a trial with a result after a fault
    has no interrupted attempt either."""
    rate_limited = {"status": "faulted", "outcome": "provider_error", "failure_class": "http_429", "verified_pass": None, "cost_usd": None}
    engine_fault = {"status": "faulted", "outcome": "engine_error", "failure_class": "engine_error", "verified_pass": None}
    interrupted = {"status": "interrupted", "cost_usd": 0.5}
    passed = {"outcome": "passed", "verified_pass": True, "wall_seconds": 100.0}
    trials = [
        {"task": "a", "repetition": 1, "variant": "baseline", "attempt": None, "earlier": [rate_limited, rate_limited], "status": "scheduled"},
        {"task": "a", "repetition": 1, "variant": "coding", "attempt": None, "earlier": [engine_fault], "status": "scheduled"},
        {"task": "b", "repetition": 1, "variant": "baseline", "attempt": None, "earlier": [rate_limited, interrupted], "status": "scheduled"},
        {"task": "b", "repetition": 1, "variant": "coding", "attempt": passed, "earlier": [rate_limited]},
    ]
    report = build_report(engine, insert_campaign(engine, trials, state="stopped", stop_reason="provider_unavailable"))
    done = report["completion"]
    # Each was attempted and paid for: none is "not attempted", each is without a result.
    assert (done["not_attempted"], done["not_attempted_by_reason"], done["attempted_without_result"]) == (0, {}, 3)
    assert done["without_result_by_reason"] == {"engine_error": 1, "interrupted": 1, "provider_error": 1}
    assert (done["interrupted_attempts"], done["provider_error_attempts"], done["engine_error_attempts"]) == (1, 4, 1)
    assert [(t["trial_id"], t["reason"], t["interrupted_attempts"]) for t in report["not_attempted_trials"]] == [
        ("a/r1/baseline", "provider_error", 0),
        ("a/r1/coding", "engine_error", 0),
        ("b/r1/baseline", "interrupted", 1),
    ]
    ((trial),) = report["trials"]
    assert (trial["trial_id"], trial["outcome"], trial["interrupted_attempts"]) == ("b/r1/coding", "passed", 0)
    assert report["redaction"]["dropped_keys"] == 0


def test_interrupted_attempts_are_neither_attempts_nor_failures(engine):
    """Rows as the lanes write them: an interrupted attempt (status and outcome
    interrupted, no verdict) and an orphan left running by a killed runner carry no
    verdict, so they are no result: not attempts, not failures, not in any pair;
    they are counted as interrupted and their spend is measured. A timeout is a
    finished attempt and a failure; a not_attempted trial is neither."""
    interrupted = {"status": "interrupted", "outcome": "interrupted", "failure_class": "interrupted", "verified_pass": None, "wall_seconds": None, "cost_usd": 0.5}
    timeout = {"outcome": "timeout", "failure_class": "timeout", "verified_pass": False, "wall_seconds": 600.0}
    running = {"status": "running", "outcome": None, "verified_pass": None, "cost_usd": 0.25}
    passed = {"outcome": "passed", "verified_pass": True, "wall_seconds": 100.0}
    trials = [
        {"task": "a", "repetition": 1, "variant": "baseline", "attempt": passed},
        {"task": "a", "repetition": 1, "variant": "coding", "attempt": None, "earlier": [interrupted], "status": "scheduled"},
        {"task": "b", "repetition": 1, "variant": "baseline", "attempt": passed},
        {"task": "b", "repetition": 1, "variant": "coding", "attempt": timeout},
        {"task": "c", "repetition": 1, "variant": "coding", "attempt": None, "status": "not_attempted", "reason": "interrupted"},
        {"task": "c", "repetition": 1, "variant": "baseline", "attempt": None, "earlier": [running], "status": "admitted"},
    ]
    report = build_report(engine, insert_campaign(engine, trials, state="interrupted", stop_reason="interrupted"))
    assert report["integrity"]["chain_verified"] is True  # a running row may end a chain
    got = {v["variant"]: v for v in report["variants"]}
    assert (got["baseline"]["attempts"], got["baseline"]["successes"], got["baseline"]["interrupted_attempts"], got["baseline"]["unfinished_attempts"]) == (2, 2, 1, 1)
    assert (got["coding"]["attempts"], got["coding"]["successes"], got["coding"]["interrupted_attempts"], got["coding"]["unfinished_attempts"]) == (1, 0, 1, 0)
    assert got["baseline"]["success_rate"] == 1.0 and got["coding"]["success_rate"] == 0.0
    # Their spend is measured (and, with no spend_complete flag, incomplete).
    assert got["coding"]["measured_spend_usd"] == 0.5 and got["coding"]["spend_attempts"] == 2
    assert got["baseline"]["measured_spend_usd"] == 0.25 and got["baseline"]["spend_complete"] is False
    # Counters come from results only: the interrupted attempt's missing wall time is not "missing".
    assert got["coding"]["missing"].get("wall_seconds") is None and got["coding"]["wall_seconds_measured"] == 1
    done = report["completion"]
    assert (done["attempted"], done["not_attempted"], done["attempted_without_result"], done["interrupted_attempts"], done["all_scheduled_attempted"]) == (3, 1, 2, 2, False)
    assert done["attempts_by_status"] == {"finished": 3, "interrupted": 1, "running": 1}
    assert done["not_attempted_by_reason"] == {"interrupted": 1} and done["without_result_by_reason"] == {"interrupted": 3}
    assert [(t["trial_id"], t["interrupted_attempts"]) for t in report["not_attempted_trials"]] == [("a/r1/coding", 1), ("c/r1/coding", 0), ("c/r1/baseline", 1)]
    assert [(a["trial_id"], a["why"]) for a in report["spend_only_attempts"]] == [("a/r1/coding", "interrupted"), ("c/r1/baseline", "left_running")]
    pd = report["paired_differences"]
    # One complete pair (task b); task a's coding trial has no result, so a has no pair.
    assert (pd["verified_success"]["pairs"], pd["verified_success"]["estimate"]) == (1, -1.0)
    assert [t["task"] for t in pd["per_task"]] == ["b"]
    assert (pd["wall_seconds"]["pairs"], pd["wall_seconds"]["estimate"]) == (1, 500.0)


def test_a_verified_chain_does_not_vouch_for_the_types_of_its_values(engine):
    """The chain is no signature: whoever edits a row can reseal it. Text where a number
    belongs is nulled and counted in a verified report as in any other."""
    cid = insert_campaign(engine, [{"task": "a", "repetition": 1, "variant": "baseline", "attempt": {"outcome": "passed", "verified_pass": True}}])
    with engine.begin() as conn:
        (attempt_id,) = conn.execute(text("SELECT id FROM attempts WHERE campaign_id = :c"), {"c": cid}).one()
        conn.execute(
            text("UPDATE attempts SET wall_seconds = '<script>alert(1)</script>', output_tokens = 'sk-ant-api03-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0', "
                 "cost_usd = '/home/alice/.config/secret.toml', row_hash = NULL, prev_hash = NULL WHERE id = :a"),  # fmt: skip
            {"a": attempt_id},
        )
    seal_attempt(engine, attempt_id)  # resealed, as anyone with the store can
    report = build_report(engine, cid)
    assert report["integrity"]["chain_verified"] is True
    ((trial),) = report["trials"]
    assert (trial["wall_seconds"], trial["output_tokens"], trial["cost_usd"]) == (None, None, None)
    assert report["redaction"]["nulled_values"] >= 3
