"""Interrupted attempts and continued campaigns in the report (issue 14, item 1).

Stores are written through the repository, as the lanes write them: one
attempt per admission, ``finish_attempt`` sealing each row (an interrupted
attempt sends its trial back to the queue), ``create_continuation`` carrying a
blocked campaign's verified results into a new campaign. Every attempt's
figures are a fixed function of its trial, like the deterministic offline
agent's, so an interrupted-and-resumed campaign must report exactly what an
uninterrupted one reports, except the interrupted attempt's own row and spend.
"""

from __future__ import annotations

import copy
import zlib
from decimal import Decimal

import pytest
from test_report_fixtures import full_attempt, insert_campaign, paired_trials

from campaign.report import build_report
from campaign.schedule import build_schedule
from campaign.store import repository
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import upgrade_engine

TASKS = ("alpha", "bravo", "charlie", "delta")
REPETITIONS = 2
EXPERIMENT = {"model": "offline:synthetic", "seed": 7, "tasks": list(TASKS), "agent": "offline"}
# What an interrupted attempt leaves: its spend and teardown outcome, no verdict.
INTERRUPTED = {
    "outcome": "interrupted",
    "failure_class": "interrupted",
    "verified_pass": None,
    "completed_turns": 1,
    "cost_usd": 0.01,
    "cost_reported": True,
    "spend_complete": False,
    "cleanup_complete": True,
    "disposal_complete": True,
    "finalization_failed": False,
    "teardown_outcome": "clean",
}


def outcome(trial) -> dict:
    """The deterministic agent: every figure a function of the trial alone."""
    h = zlib.crc32(f"{trial.task}/{trial.repetition}/{trial.variant}".encode())
    passed = h % 3 != 0
    return {
        "outcome": "passed" if passed else "failed",
        "failure_class": None if passed else "verifier_failed",
        "verified_pass": passed,
        "verifier_exit_code": 0 if passed else 1,
        "wall_seconds": 20.0 + h % 50,
        "completed_turns": 1 + h % 4,
        "uncached_input_tokens": 1000 + h % 900,
        "cached_input_tokens": h % 500,
        "cache_write_tokens": 0,
        "output_tokens": 100 + h % 90,
        "tool_calls": 3,
        "tool_errors": h % 2,
        "diagnostic_events_version": 1,
        "discovery_failures": 0,
        "incorrect_tool_calls": h % 2,
        "cost_usd": 0.1,
        "cost_reported": True,
        "spend_complete": True,
        "flush_complete": True,
        "equivalent_spend_usd": 0.1,
        "cleanup_complete": True,
        "disposal_complete": True,
        "finalization_failed": False,
        "teardown_outcome": "clean",
        "config_digest": "c" * 64,
        "fixture_digest": "f" * 64,
        "agent_model": "offline:synthetic",
        "applied_profiles": '["legacy"]' if trial.variant == "baseline" else '["coding"]',
    }


def _new_campaign(engine, clock) -> int:
    return repository.create_campaign(
        engine,
        repository.NewCampaign(kind="paired", state="running", live=False, agent="offline", seed=7, experiment=EXPERIMENT),
        build_schedule(list(TASKS), REPETITIONS, seed=7),
        model="offline:synthetic",
        default_provider="offline",
        clock=clock,
    )


def _attempt(engine, trial, clock, *, status="finished", **fields) -> None:
    assert repository.admit_trial(engine, trial.id, clock=clock)
    attempt_id = repository.start_attempt(engine, trial, clock=clock)
    clock.advance(30)
    repository.finish_attempt(engine, attempt_id, trial.id, status=status, clock=clock, **fields)


def _scheduled(engine, campaign_id) -> list:
    return [t for t in repository.trials_in_order(engine, campaign_id) if t.status == "scheduled"]


def run_campaign(engine, clock, *, interrupt: tuple[int, ...] = ()) -> int:
    """Run every trial in schedule order; at each position in ``interrupt`` the trial's first
    attempt is interrupted, the campaign stops, and a resume runs what is left, that trial first."""
    campaign_id = _new_campaign(engine, clock)
    stops = set(interrupt)
    while remaining := _scheduled(engine, campaign_id):
        trial = remaining[0]
        if trial.position in stops:
            stops.discard(trial.position)
            _attempt(engine, trial, clock, status="interrupted", **INTERRUPTED)
            repository.set_campaign_state(engine, campaign_id, expected=("running",), state="interrupted", stop_reason="interrupted", clock=clock)
            repository.set_campaign_state(engine, campaign_id, expected=("interrupted",), state="running", clock=clock)
            continue
        _attempt(engine, trial, clock, **outcome(trial))
    repository.close_campaign(engine, campaign_id, None, state="completed", clock=clock)
    return campaign_id


# The fields that may differ between the two: which campaign it is, attempt numbering
# (the extra row shifts every later seq), and everything about the interrupted attempt.
_RESULT_ONLY_VARIANT = (
    "variant", "attempts", "successes", "success_rate", "success_rate_reason", "wall_seconds_mean", "wall_seconds_measured",
    "tool_error_recoveries", "tool_error_recoveries_known", "missing",
)  # fmt: skip


def _results_view(report: dict) -> dict:
    r = copy.deepcopy(report)
    for t in r["trials"]:
        del t["attempt_seq"], t["interrupted_attempts"]
    return {
        "paired_differences": r["paired_differences"],
        "decision": r["decision"],
        "synthetic": r["synthetic"],
        "trials": r["trials"],
        "not_attempted_trials": r["not_attempted_trials"],
        "variants": [{k: v[k] for k in _RESULT_ONLY_VARIANT} for v in r["variants"]],
        "completion": {k: r["completion"][k] for k in ("scheduled", "attempted", "not_attempted", "all_scheduled_attempted", "state", "stop_reason")},
        "experiment": r["experiment"],
        "runtime": r["runtime"],
        "integrity": {k: r["integrity"][k] for k in ("chain_verified", "problems")},
    }


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    url = f"sqlite:///{tmp_path / 'interrupted.db'}" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    engine = make_engine(resolve_url(url))
    upgrade_engine(engine)
    yield engine
    engine.dispose()


def test_an_interrupted_and_resumed_campaign_reports_what_an_uninterrupted_one_does(store, clock):
    straight = build_report(store, run_campaign(store, clock))
    resumed = build_report(store, run_campaign(store, clock, interrupt=(5,)))

    assert _results_view(resumed) == _results_view(straight)
    assert straight["paired_differences"]["verified_success"]["pairs"] == len(TASKS) * REPETITIONS
    assert resumed["integrity"]["chain_verified"] is True

    # The extra row: counted as interrupted, listed as spend only, never a failure.
    (interrupted_trial,) = [t for t in resumed["trials"] if t["interrupted_attempts"]]
    assert interrupted_trial["position"] == 5 and interrupted_trial["attempt_status"] == "finished"
    assert resumed["completion"]["interrupted_attempts"] == 1 and straight["completion"]["interrupted_attempts"] == 0
    assert resumed["completion"]["attempts_by_status"] == {"finished": 16, "interrupted": 1}
    (extra,) = resumed["spend_only_attempts"]
    assert (extra["trial_id"], extra["why"], extra["attempt_status"], extra["cost_usd"]) == (interrupted_trial["trial_id"], "interrupted", "interrupted", 0.01)
    assert "verified_pass" not in extra and "outcome" not in extra

    # ...and its spend: exactly one cent more, in measured and total spend, for its variant only.
    before = {v["variant"]: v for v in straight["variants"]}
    after = {v["variant"]: v for v in resumed["variants"]}
    hit = interrupted_trial["variant"]
    for name in ("baseline", "coding"):
        extra_usd = Decimal("0.01") if name == hit else Decimal(0)
        assert Decimal(str(after[name]["measured_spend_usd"])) == Decimal(str(before[name]["measured_spend_usd"])) + extra_usd
        assert after[name]["interrupted_attempts"] == (1 if name == hit else 0)
        assert after[name]["spend_attempts"] == before[name]["spend_attempts"] + (1 if name == hit else 0)
    assert before[hit]["measured_spend_usd"] == 0.8  # eight attempts of exactly 0.1: an exact sum
    assert Decimal(str(resumed["spend"]["measured_spend_usd"])) == Decimal("1.61")
    # The interrupted attempt's spend was not complete, and the report says so.
    assert after[hit]["spend_complete"] is False and after[hit]["cost_per_verified_success_reason"] == "incomplete_missing_spend"
    assert before[hit]["spend_complete"] is True


def test_a_trial_with_only_an_interrupted_attempt_has_no_result_and_its_pair_is_incomplete(engine, clock):
    campaign_id = _new_campaign(engine, clock)
    trials = repository.trials_in_order(engine, campaign_id)
    first = trials[0]
    partner = next(t for t in trials if t.pair_id == first.pair_id and t.id != first.id)
    _attempt(engine, first, clock, **outcome(first))
    _attempt(engine, partner, clock, status="interrupted", **INTERRUPTED)
    repository.close_campaign(engine, campaign_id, "interrupted", state="interrupted", clock=clock)

    report = build_report(engine, campaign_id)
    assert report["completion"]["attempted"] == 1 and report["completion"]["interrupted_attempts"] == 1
    assert report["paired_differences"]["verified_success"]["pairs"] == 0
    assert report["paired_differences"]["verified_success"]["estimate_reason"] == "no_complete_pairs"
    row = next(t for t in report["not_attempted_trials"] if t["trial_id"] == partner.trial_id)
    # close_campaign recorded it not_attempted(interrupted); its interrupted attempt is counted.
    assert (row["status"], row["reason"], row["interrupted_attempts"]) == ("not_attempted", "interrupted", 1)
    by_variant = {v["variant"]: v for v in report["variants"]}
    assert by_variant[partner.variant]["attempts"] == 0 and by_variant[partner.variant]["success_rate"] is None
    assert by_variant[partner.variant]["measured_spend_usd"] == 0.01


def _blocked_then_continued(engine, clock, *, cleanup_failure_at: int, interrupted_at: int) -> tuple[int, int]:
    """A campaign a killed runner blocked: some trials verified, one finished with its cleanup
    unproven (not carried), one interrupted; then its continuation runs the rest."""
    blocked = _new_campaign(engine, clock)
    for trial in repository.trials_in_order(engine, blocked):
        if trial.position == interrupted_at:
            _attempt(engine, trial, clock, status="interrupted", **INTERRUPTED)
        elif trial.position == cleanup_failure_at:
            _attempt(engine, trial, clock, **{**outcome(trial), "cleanup_complete": False, "teardown_outcome": "unverified"})
            break
        else:
            _attempt(engine, trial, clock, **outcome(trial))
    repository.set_campaign_state(engine, blocked, expected=("running",), state="stopped", stop_reason="cleanup_unverified", clock=clock)
    carried = repository.carryable_trials(engine, blocked)
    continued = repository.create_continuation(engine, blocked, carried, clock=clock)
    for trial in _scheduled(engine, continued):
        _attempt(engine, trial, clock, **outcome(trial))
    repository.close_campaign(engine, continued, None, state="completed", clock=clock)
    return blocked, continued


def test_a_continuation_reports_carried_results_and_every_attempt_paid_for(store, clock):
    straight = build_report(store, run_campaign(store, clock))
    blocked, continued = _blocked_then_continued(store, clock, cleanup_failure_at=6, interrupted_at=2)
    report = build_report(store, continued)

    assert report["campaign"]["continues_campaign_id"] == blocked
    # Positions 0-5 except the interrupted 2 ran to a verified end before the block: five carried.
    assert report["completion"]["carried_trials"] == 5
    assert sorted(t["position"] for t in report["trials"] if t["carried"]) == [0, 1, 3, 4, 5]
    assert [end["campaign_id"] for end in report["integrity"].pop("chains")] == [continued, blocked]
    assert report["integrity"] == {"chain_verified": True, "chain_verified_reason": None, "problems": 0, "campaigns_verified": [continued, blocked]}
    # Results: exactly the uninterrupted campaign's.
    assert _results_view(report)["paired_differences"] == _results_view(straight)["paired_differences"]
    assert [{k: v for k, v in t.items() if k not in ("attempt_seq", "interrupted_attempts", "carried")} for t in report["trials"]] == [
        {k: v for k, v in t.items() if k not in ("attempt_seq", "interrupted_attempts", "carried")} for t in straight["trials"]
    ]
    assert report["completion"]["all_scheduled_attempted"] is True and report["not_attempted_trials"] == []
    # Spend: the 16 results, the blocked campaign's interrupted attempt and its finished
    # attempt whose cleanup was unproven (its trial ran again here): all paid for.
    assert report["spend"]["campaigns"] == [continued, blocked]
    assert report["spend"]["spend_attempts"] == 18
    assert Decimal(str(report["spend"]["measured_spend_usd"])) == Decimal("1.71")
    assert report["completion"]["interrupted_attempts"] == 1 and report["completion"]["not_carried_attempts"] == 1
    assert sorted((a["campaign_id"], a["why"]) for a in report["spend_only_attempts"]) == [(blocked, "interrupted"), (blocked, "not_carried")]
    assert report["redaction"] == {"policy": "structural_allowlist", "dropped_keys": 0, "unlisted_values": 0, "redacted_ids": 0, "nulled_values": 0}
    assert sum(v["spend_attempts"] for v in report["variants"]) == 18
    assert sum(v["attempts"] for v in report["variants"]) == 16

    # The blocked campaign's own report still stands on its own rows.
    old = build_report(store, blocked)
    assert old["completion"]["attempted"] == 6 and old["completion"]["interrupted_attempts"] == 1
    assert old["spend"]["campaigns"] == [blocked]


def test_a_continuation_markdown_names_what_it_continues_and_where_spend_comes_from(engine, clock):
    from campaign.report.markdown import render_markdown

    blocked, continued = _blocked_then_continued(engine, clock, cleanup_failure_at=4, interrupted_at=1)
    md = render_markdown(build_report(engine, continued), "p.svg")
    assert f"continues campaign {blocked}" in md
    assert "3 trials carry that campaign's finished, verified results" in md
    assert f"campaigns {continued}, {blocked}" in md and "continues_campaign_id" in md
    assert "Interrupted attempts: 1" in md and "not failures" in md


def test_exact_dollar_sums(engine):
    """0.1 + 0.2 is 0.3 in every sum the report shows (binary floats would give 0.30000000000000004)."""
    costs = {"a": 0.1, "b": 0.2}
    cid = insert_campaign(engine, paired_trials(["a", "b"], 1, lambda t, r, v: full_attempt(cost_usd=costs[t], equivalent_spend_usd=0.1)))
    report = build_report(engine, cid)
    assert [v["measured_spend_usd"] for v in report["variants"]] == [0.3, 0.3]
    assert report["spend"]["measured_spend_usd"] == 0.6
    assert [v["equivalent_spend_usd"] for v in report["variants"]] == [0.2, 0.2]
    assert [v["cost_per_verified_success_usd"] for v in report["variants"]] == [0.15, 0.15]
