"""The rows outside the chain that the chain still pins.

Only attempt rows are hashed, yet a report also reads the campaign row (its experiment,
seed and schedule size, the campaign it continues) and the trial rows (which variant,
task and provider each attempt ran). Both are pinned through the genesis: the chain
starts at the campaign's ``experiment_digest``, the digest of ``experiment_json``, and
- the experiment rebuilds the schedule the engine wrote (``experiment.Stored.schedule``),
  which the trial rows must be, trial by trial, in the order they were inserted;
- each attempt row hashes its ``trial_pk`` and the config and fixture digests it ran,
  which must be those the experiment records for its trial's variant and task;
- a continuation continues an earlier campaign of the same experiment, and carries
  exactly the verified results the engine carries from it (``carry``), each its own
  trial's, from the campaigns it continues;
- a trial is finished exactly when it holds its result, gets one verdict and runs
  nothing after it, and a running attempt holds its trial admitted (one at a time);
- every timestamp of the campaign row and the trial rows can be read.
So a swapped variant, a renamed task, renumbered trial rows, an edited experiment or
seed, or an unlinked continuation is a problem of the campaign, as an edited attempt row
is. What no check here can see: a chain cut off at its end together with what points at
it (a report's published chain ends can: ``ends``), and the columns that change as a
campaign runs (its state, stop reason, times).

An experiment no lane stores that way (a probe's, a task check's) fixes no schedule; the
probes and task checks written before their digest was computed keep the all-zero one."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, String, func, select, type_coerce
from sqlalchemy.orm import aliased
from sqlalchemy.types import NullType

from campaign.canonical import spec_digest
from campaign.errors import UnreadableValue
from campaign.experiment import PROBE, TASK_CHECK, Stored, StoredSchedule, lane_of
from campaign.store.base import UTCDateTime
from campaign.store.carry import carryable_select
from campaign.store.chain.rows import ATTEMPTS, COLUMN, ID, SEQ, STATUS, ChainProblem
from campaign.store.models import Campaign, Trial

UNPINNED = "0" * 64
UNPINNED_KINDS = (PROBE, TASK_CHECK)
# A trial row's scheduled identity: ScheduledTrial's fields, and the model it ran on.
IDENTITY = ("position", "pair_id", "trial_id", "provider", "model", "task", "variant", "repetition", "pair_order")
# How many mismatched trials a check names before it only counts the rest.
NAMED = 3
TRIAL_PK, CONFIG, FIXTURE = (COLUMN[name] for name in ("trial_pk", "config_digest", "fixture_digest"))
# How SQLite holds the engine's timestamps: YYYY-MM-DD HH:MM:SS.ffffff (UTC).
_STAMP_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]"
# A trial row as read here: its id, its IDENTITY, its status and where a carried result is.
_ID, _PLACED, _STATUS, _CARRIED = 0, slice(1, 1 + len(IDENTITY)), -2, -1
_POSITION, _TRIAL_ID, _TASK, _VARIANT = (1 + IDENTITY.index(name) for name in ("position", "trial_id", "task", "variant"))


def pinned_problems(conn: Connection, campaign_id: int, rows: Sequence[Sequence[Any]]) -> list[ChainProblem]:
    """What the campaign row and its trial rows must bear out, given the campaign's attempt
    rows as ``read_rows`` returned them."""
    columns = (
        Campaign.kind, Campaign.state, Campaign.agent, Campaign.seed, Campaign.experiment_json, Campaign.experiment_digest,
        Campaign.scheduled_count, Campaign.continues_campaign_id,
    )  # fmt: skip
    campaign = conn.execute(select(*columns).where(Campaign.id == campaign_id)).one_or_none()
    if campaign is None:
        return []
    edited, experiment, schedule = _experiment(campaign)
    identity = (Trial.__table__.c[name] for name in IDENTITY)
    trials = conn.execute(select(Trial.id, *identity, Trial.status, Trial.carried_from_trial_pk).where(Trial.campaign_id == campaign_id).order_by(Trial.id)).all()
    if schedule is not None:
        edited += _against_the_schedule(schedule, trials)
    edited += _attempts_against_trials(experiment, trials, rows) + _continues(conn, campaign_id, campaign, trials)
    problems = [ChainProblem(campaign_id, "edited", line) for line in edited]
    if len(trials) != campaign.scheduled_count:
        detail = f"the campaign scheduled {campaign.scheduled_count!r} trials and the store holds {len(trials)} (trial rows were deleted or added)"
        problems.append(ChainProblem(campaign_id, "missing", detail))
    problems += _unreadable_times(conn, campaign_id) + _carried(conn, campaign_id) + _results(conn, campaign_id, trials, rows)
    problems += _running(campaign_id, trials, rows) + _one_verdict(campaign_id, trials, rows)
    if campaign.state == "completed":
        problems += [
            ChainProblem(campaign_id, "unsealed", "a completed campaign has no attempt still running (the row was added or edited)", row[SEQ], row[ID])
            for row in rows
            if row[STATUS] == "running"
        ]
    return problems


def _experiment(campaign: Any) -> tuple[list[str], dict[str, Any], StoredSchedule | None]:
    """What is wrong with the campaign row's experiment, the experiment once it is pinned
    (else empty), and the schedule it fixes: the experiment must match its digest, and the
    row's own copies of it (kind, agent, seed, schedule size) must match the experiment."""
    try:
        experiment = json.loads(campaign.experiment_json)
        digest = spec_digest(experiment)
    except (TypeError, ValueError, RecursionError):  # not JSON text, or NaN in it
        return ["the campaign's experiment is not the JSON the engine writes (experiment_json was edited)"], {}, None
    if digest != campaign.experiment_digest:
        if campaign.experiment_digest == UNPINNED and isinstance(experiment, dict) and lane_of(experiment) in UNPINNED_KINDS:
            return [], {}, None
        return ["the campaign's experiment does not match its experiment_digest (one of them was edited)"], {}, None
    if not isinstance(experiment, dict):
        return [], {}, None
    schedule = Stored(experiment).schedule()
    copies = {"agent": (campaign.agent, experiment.get("agent", campaign.agent)), "seed": (campaign.seed, experiment.get("seed", campaign.seed))}
    if schedule is not None:
        copies["kind"] = (campaign.kind, schedule.kind)
        copies["scheduled_count"] = (campaign.scheduled_count, len(schedule.rows))
    edited = [f"the campaign row's {name} is not its experiment's (the row was edited)" for name, (stored, pinned) in copies.items() if stored != pinned]
    return edited, experiment, schedule


def _against_the_schedule(schedule: StoredSchedule, trials: Sequence[Sequence[Any]]) -> list[str]:
    """Each trial row, in the order the engine inserted them, is the trial the experiment
    scheduled at that place (a row whose id was swapped is out of place too)."""
    model, default, models = schedule.model, schedule.provider, schedule.provider_models
    placed = [row[_PLACED] for row in trials]
    if models is not None:  # each provider's own model; or, as stores written before have it, the first's
        expected = [(position, pid, tid, provider, models[provider], *rest) for position, pid, tid, provider, *rest in schedule.rows]
        if placed == expected or placed == [(position, pid, tid, provider, model, *rest) for position, pid, tid, provider, *rest in schedule.rows]:
            return []
    else:
        expected = [(position, pid, tid, provider or default, model, *rest) for position, pid, tid, provider, *rest in schedule.rows]
        if placed == expected:
            return []
    wrong = [(row, want) for row, want in zip(trials, expected) if row[_PLACED] != want]
    lines = []
    for row, want in wrong[:NAMED]:
        fields = [name for name, got, pinned in zip(IDENTITY, row[_PLACED], want) if got != pinned]
        differ = "differs" if len(fields) == 1 else "differ"
        lines.append(f"trial row {row[0]} is not the trial the experiment scheduled at place {want[0]} ({want[2]}): its {', '.join(fields)} {differ} (the row was edited)")
    if len(wrong) > NAMED:
        lines.append(f"{len(wrong) - NAMED} more trial rows are not the trials the experiment scheduled (the rows were edited)")
    return lines


def _attempts_against_trials(experiment: dict[str, Any], trials: Sequence[Sequence[Any]], rows: Sequence[Sequence[Any]]) -> list[str]:
    """Each attempt row (hashed) belongs to a trial row of its own campaign, and ran that
    trial's variant and task: its config and fixture digests are the ones the experiment
    records for them. So trial rows renumbered under their attempts, or an attempt moved
    to a trial of another campaign, are named, not counted for the wrong trial."""
    of_trial = {row[_ID]: (row[_TASK], row[_VARIANT]) for row in trials}
    stored = Stored(experiment)
    configs, fixtures = stored.config_digests, stored.fixture_digests
    lines = []
    for row in rows:
        trial = of_trial.get(row[TRIAL_PK])
        if trial is None:
            lines.append(f"attempt {row[ID]} belongs to no trial row of its campaign (trial_pk {row[TRIAL_PK]!r}: the trial rows were edited)")
            continue
        task, variant = trial
        config, fixture = row[CONFIG], row[FIXTURE]
        if (config is not None and configs.get(variant, config) != config) or (fixture is not None and fixtures.get(task, fixture) != fixture):
            lines.append(f"attempt {row[ID]} did not run its trial row's variant and task (their digests differ: the trial rows were edited)")
    return lines[:NAMED] + ([f"{len(lines) - NAMED} more attempt rows do not match their trial rows"] if len(lines) > NAMED else [])


def _continues(conn: Connection, campaign_id: int, here: Any, trials: Sequence[Sequence[Any]]) -> list[str]:
    """A continuation continues an earlier campaign of the same experiment, whose rows its
    report takes in (interrupted attempts, spend, carried results): pointing it elsewhere,
    or nowhere, changes what is published. And it carries exactly the results the rule
    carries (``carry``): dropping one would run its trial again for a second verdict."""
    if here.continues_campaign_id is None:
        carried = sum(1 for trial in trials if trial[_CARRIED] is not None)
        return [f"{carried} trials carry results over, yet the campaign continues none (continues_campaign_id was edited)"] if carried else []
    earlier = conn.execute(select(Campaign.id, Campaign.experiment_digest).where(Campaign.id == here.continues_campaign_id)).one_or_none()
    if earlier is None or not (isinstance(earlier.id, int) and earlier.id < campaign_id) or earlier.experiment_digest != here.experiment_digest:
        return ["the campaign continues no earlier campaign of its experiment (continues_campaign_id was edited)"]
    carryable = {trial_id: origin for trial_id, origin in conn.execute(carryable_select(earlier.id))}
    carried = {trial[_TRIAL_ID]: trial[_CARRIED] for trial in trials if trial[_CARRIED] is not None}
    dropped = [trial_id for trial_id in carryable if trial_id not in carried]
    lines = []
    if dropped:
        lines.append(
            f"{len(dropped)} verified results of the campaign it continues are not carried over, first {dropped[0]!r} "
            "(a carried trial was set back to run again: carried_from_trial_pk was edited)"
        )
    unearned = [trial_id for trial_id in carried if trial_id not in carryable]  # (one pointed at another trial's row: ``_carried``)
    if unearned:
        lines.append(
            f"{len(unearned)} trials carry a result the campaign it continues holds no verified result for, first {unearned[0]!r} "
            "(carried_from_trial_pk was edited)"
        )
    return lines


def _unreadable_times(conn: Connection, campaign_id: int) -> list[ChainProblem]:
    """A timestamp of the campaign row or of a trial row that no reader can read (every
    command would stop at it), read by the very reader the models use. Only SQLite holds
    any value in any column; the trial rows in the engine's own form are passed in SQL
    first, so the reader only sees the few that are not."""
    if conn.dialect.name != "sqlite":
        return []
    read = UTCDateTime().dialect_impl(conn.dialect).result_processor(conn.dialect, None) or (lambda value: value)

    def unreadable(value: Any) -> bool:
        try:
            read(value)
        except UnreadableValue:
            return True
        return False

    times = [col for col in Campaign.__table__.columns if isinstance(col.type, UTCDateTime)]
    found = conn.execute(select(*(type_coerce(col, NullType()) for col in times)).where(Campaign.id == campaign_id)).one_or_none() or ()
    problems = [
        ChainProblem(campaign_id, "unreadable", f"the campaign row's {col.name} is no timestamp (the row was edited)") for col, value in zip(times, found) if unreadable(value)
    ]
    stamp = type_coerce(Trial.updated_at, String())  # as stored, no reader in between
    engines_own = (func.typeof(stamp) == "text") & stamp.op("GLOB")(_STAMP_GLOB) & (func.datetime(stamp) == func.substr(stamp, 1, 19)) & (stamp >= "0001-01-02")
    others = conn.execute(select(Trial.id, stamp).where(Trial.campaign_id == campaign_id, ~engines_own).order_by(Trial.id))
    bad = [pk for pk, value in others if unreadable(value)]
    problems += [ChainProblem(campaign_id, "unreadable", f"trial row {pk}'s updated_at is no timestamp (the row was edited)") for pk in bad[:NAMED]]
    return problems


def _carried(conn: Connection, campaign_id: int) -> list[ChainProblem]:
    """A carried trial's result is the same trial's, in a campaign this one continues (a
    continuation carries results over; it never borrows another trial's, nor another
    run's)."""
    origin = aliased(Trial)
    stmt = (
        select(Trial.id)
        .outerjoin(origin, origin.id == Trial.carried_from_trial_pk)
        .where(Trial.campaign_id == campaign_id, Trial.carried_from_trial_pk.is_not(None))
        .where(origin.id.is_(None) | (origin.trial_id != Trial.trial_id) | origin.campaign_id.not_in(ancestors(conn, campaign_id)))
        .order_by(Trial.position)
        .limit(NAMED)
    )
    return [
        ChainProblem(campaign_id, "edited", f"trial row {pk} carries a result that is not its own trial's from a campaign it continues (carried_from_trial_pk was edited)")
        for pk in conn.execute(stmt).scalars()
    ]


def ancestors(conn: Connection, campaign_id: int) -> list[int]:
    """The campaigns this one continues, nearest first, each earlier than the one before
    (an edited link ends the walk; ``_continues`` names it)."""
    found: list[int] = []
    current = campaign_id
    while True:
        earlier = conn.execute(select(Campaign.continues_campaign_id).where(Campaign.id == current)).scalar_one_or_none()
        if not isinstance(earlier, int) or earlier >= current:
            return found
        found.append(earlier)
        current = earlier


def _running(campaign_id: int, trials: Sequence[Sequence[Any]], rows: Sequence[Sequence[Any]]) -> list[ChainProblem]:
    """A running attempt holds its trial admitted, and is its only one: the engine admits a
    trial, starts one attempt, and moves the trial on in the transaction that ends it. A
    running row is no link yet (it is not hashed) and its spend is counted as paid for, so
    one added anywhere else would publish spend no attempt made."""
    status = {trial[_ID]: trial[_STATUS] for trial in trials}
    seen: set[Any] = set()
    problems = []
    for row in rows:
        if row[STATUS] != "running" or row[TRIAL_PK] not in status:  # (no trial of its campaign: ``_attempts_against_trials``)
            continue
        held = status[row[TRIAL_PK]]
        if held != "admitted" or row[TRIAL_PK] in seen:
            why = f"its trial is {held!r}, not admitted" if held != "admitted" else "its trial has another running attempt"
            problems.append(ChainProblem(campaign_id, "edited", f"a running attempt, yet {why} (the row was added or the trial edited)", row[SEQ], row[ID]))
        seen.add(row[TRIAL_PK])
    return problems[:NAMED]


def _one_verdict(campaign_id: int, trials: Sequence[Sequence[Any]], rows: Sequence[Sequence[Any]]) -> list[ChainProblem]:
    """A trial gets one verdict: its finished attempt finishes it, and no attempt of it ends
    after that (the chain is in the order attempts ended); a carried trial carries its
    verdict and runs none. A row past a verdict, resealed onto the chain's end, would
    publish a second verdict, or spend no attempt made."""
    carried = {trial[_ID] for trial in trials if trial[_CARRIED] is not None}
    judged: set[Any] = set()
    problems = []
    for row in rows:
        pk = row[TRIAL_PK]
        if pk in carried:
            problems.append(ChainProblem(campaign_id, "edited", "an attempt of a trial that carries its result over, which runs none (the row was added)", row[SEQ], row[ID]))
        elif pk in judged:
            problems.append(ChainProblem(campaign_id, "edited", "an attempt that ended after its trial's verdict (the row was added)", row[SEQ], row[ID]))
        elif row[STATUS] == "finished":
            judged.add(pk)
    return problems[:NAMED]


def _results(conn: Connection, campaign_id: int, trials: Sequence[Sequence[Any]], rows: Sequence[Sequence[Any]]) -> list[ChainProblem]:
    """A trial is finished exactly when it has its result: its own finished attempt, or,
    for a trial a continuation carried over, the finished attempt of the trial it points
    at. The engine finishes both in one transaction; a finished trial without one lost
    its row, and one with a result that is not finished would run again on a resume."""
    finished = {row[TRIAL_PK] for row in rows if row[STATUS] == "finished"}
    orphaned, reopened, carried = [], [], []
    for trial in trials:
        if trial[_CARRIED] is not None:
            carried.append(trial)
        elif trial[_STATUS] == "finished" and trial[_ID] not in finished:
            orphaned.append(trial)
        elif trial[_STATUS] != "finished" and trial[_ID] in finished:
            reopened.append(trial)
    if carried:  # their results are rows of the campaigns this one continues
        origin = Trial.carried_from_trial_pk
        stmt = select(origin).join(ATTEMPTS, ATTEMPTS.c.trial_pk == origin).where(Trial.campaign_id == campaign_id, ATTEMPTS.c.status == "finished")
        have = set(conn.execute(stmt).scalars())
        orphaned += [t for t in carried if t[_STATUS] == "finished" and t[_CARRIED] not in have]
    orphaned.sort(key=lambda t: t[_POSITION])
    problems = [
        ChainProblem(campaign_id, "missing", f"trial {t[_TRIAL_ID]} is finished but has no finished attempt row (the row was deleted or edited)") for t in orphaned
    ]
    return problems + [
        ChainProblem(campaign_id, "edited", f"trial {t[_TRIAL_ID]!r} holds a finished attempt yet is not finished (its status was edited)") for t in reopened[:NAMED]
    ]
