"""Tamper evidence on a real migrated store: seal, verify, then tamper with raw SQL."""

from __future__ import annotations

import hashlib
import itertools
import json
import sqlite3

import pytest

from campaign.canonical import spec_digest
from campaign.errors import ConflictError, UsageProblem
from campaign.schedule import build_schedule
from campaign.store import chain, repository
from campaign.store.models import Attempt

EXPERIMENT = {"k": 1}
GENESIS = spec_digest(EXPERIMENT)


def _campaign(engine, tasks=("task-a", "task-b", "task-c"), experiment=EXPERIMENT) -> tuple[int, list]:
    campaign_id = repository.create_campaign(
        engine,
        repository.NewCampaign(kind="campaign", state="running", live=False, agent="offline", seed=3, experiment=experiment),
        build_schedule(list(tasks), 1, seed=3),
        model="offline:synthetic",
        default_provider="offline",
    )
    return campaign_id, repository.trials_in_order(engine, campaign_id)


def _start(engine, trial, clock) -> int:
    assert repository.admit_trial(engine, trial.id, clock=clock)
    return repository.start_attempt(engine, trial, clock=clock)


def _finish(engine, attempt_id, trial, clock, **fields) -> None:
    clock.advance(30)
    values = {
        "outcome": "passed",
        "verified_pass": True,
        "wall_seconds": 29.25,
        "completed_turns": 3,
        "uncached_input_tokens": 1200,
        "cached_input_tokens": 3400,
        "cache_write_tokens": None,  # unknown
        "output_tokens": 560,
        "cost_usd": 0.0123,
        "cost_reported": True,
        "cleanup_complete": True,
        "disposal_complete": True,
        "finalization_failed": False,
        "private_root": "/tmp/campaign-paired-runtime-x",
        **fields,
    }
    repository.finish_attempt(engine, attempt_id, trial.id, clock=clock, **values)


def _unseal(engine, ids) -> None:
    """What a store written before sealing existed (or by a crashed writer) looks like."""
    from sqlalchemy import update

    from campaign.store.models import Attempt

    with engine.begin() as conn:
        conn.execute(update(Attempt).where(Attempt.id.in_(ids)).values(row_hash=None, prev_hash=None))


def _run(engine, clock, n: int, *, seal: bool = True, **kwargs) -> tuple[int, list[int]]:
    """n finished attempts; finish_attempt seals each row in its own transaction."""
    campaign_id, trials = _campaign(engine, **kwargs)
    ids = []
    for trial in trials[:n]:
        attempt_id = _start(engine, trial, clock)
        _finish(engine, attempt_id, trial, clock)
        if seal:
            chain.seal_attempt(engine, attempt_id)  # idempotent on an already sealed row
        ids.append(attempt_id)
    if not seal:
        _unseal(engine, ids)
    return campaign_id, ids


def _sql(db_path, statement: str, *params) -> None:
    with sqlite3.connect(db_path) as conn:
        conn.execute(statement, params)


def _kinds(problems) -> list[tuple[str, int | None]]:
    return [(p.kind, p.seq) for p in problems]


def test_sealed_rows_verify_intact_and_link_to_the_genesis(engine, clock):
    campaign_id, _ = _run(engine, clock, 5)
    assert chain.verify_chain(engine) == []
    assert chain.verify_chain(engine, campaign_id) == []
    assert chain.count_rows(engine, campaign_id) == 5
    rows = repository.attempts_for(engine, campaign_id)
    assert rows[0].prev_hash == GENESIS
    for before, after in itertools.pairwise(rows):
        assert after.prev_hash == before.row_hash
    with engine.connect() as conn:
        stored = chain.read_rows(conn, campaign_id)
    assert [r[chain.COLUMN["row_hash"]] for r in stored] == [r.row_hash for r in rows]
    for raw in stored:
        assert raw[chain.COLUMN["row_hash"]] == chain.row_digest(raw[chain.PAYLOAD])


def test_the_hash_is_sha256_of_the_canonical_json_array_of_the_stored_values(engine, clock, db_path):
    _, (attempt_id, *_) = _run(engine, clock, 1)
    with sqlite3.connect(db_path) as conn:
        values = conn.execute(f"SELECT prev_hash, {', '.join(chain.HASHED_COLUMNS)} FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
    named = dict(zip(("prev_hash", *chain.HASHED_COLUMNS), values))
    assert named["prev_hash"] == GENESIS and "private_root" not in named
    assert named["started_at"] == "2026-01-01 00:00:00.000000"  # the stored text, UTC
    assert named["verified_pass"] == 1 and named["cache_write_tokens"] is None  # booleans 0/1; unknown stays null
    payload = json.dumps(list(values), separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    assert repository.get_attempt(engine, attempt_id).row_hash == hashlib.sha256(payload.encode()).hexdigest()
    with pytest.raises(ValueError):
        chain.payload((GENESIS, float("nan")))


def _reseal_in_format_1(engine, db_path, campaign_id) -> None:
    """Rewrite a campaign's chain as the engine sealed rows before format 2 existed."""
    prev = GENESIS
    for row in repository.attempts_for(engine, campaign_id):
        digest = chain.compute_hash(prev, chain.canonical_row(row))
        _sql(db_path, "UPDATE attempts SET prev_hash = ?, row_hash = ? WHERE id = ?", prev, digest, row.id)
        prev = digest


def test_rows_sealed_in_format_1_still_verify_and_edits_to_them_are_still_found(engine, clock, db_path):
    campaign_id, ids = _run(engine, clock, 4)
    _reseal_in_format_1(engine, db_path, campaign_id)
    assert chain.verify_chain(engine, campaign_id) == []
    # A format-1 row at the end of the chain, amended by the engine, is resealed in format 2.
    chain.amend_tail(engine, ids[-1], cleanup_complete=False)
    assert chain.verify_chain(engine, campaign_id) == []
    _sql(db_path, "UPDATE attempts SET output_tokens = 7 WHERE id = ?", ids[1])
    assert _kinds(chain.verify_chain(engine, campaign_id)) == [("edited", 2)]


def test_values_orjson_writes_otherwise_are_hashed_by_the_reference_encoder(engine, clock):
    # Non-ASCII text, a control character and floats below 1e-4: orjson's bytes differ
    # from the reference's, so these rows verify through the reference encoder.
    campaign_id, trials = _campaign(engine)
    for trial, extra in zip(trials, ({"agent_model": "mod\u00e8le"}, {"agent_model": "a\x7fb", "cost_usd": 1e-05}, {"wall_seconds": 2.5e-07})):
        _finish(engine, _start(engine, trial, clock), trial, clock, **extra)
    assert chain.verify_chain(engine, campaign_id) == []
    with engine.connect() as conn:
        rows = chain.read_rows(conn, campaign_id)
    assert chain.fast_digests(rows) != [r[chain.COLUMN["row_hash"]] for r in rows]


def test_an_unknown_edited_to_infinity_is_detected(engine, clock, db_path):
    # orjson writes infinity as null: the row must not pass as the NULL it was sealed with.
    campaign_id, ids = _run(engine, clock, 2)
    _sql(db_path, "UPDATE attempts SET cache_write_tokens = 1e999 WHERE id = ?", ids[0])
    assert _kinds(chain.verify_chain(engine, campaign_id)) == [("edited", 1)]


def test_every_column_but_the_excluded_ones_is_hashed():
    # Fails when a column is added to attempts: decide how rows sealed without it verify.
    columns = [c.name for c in Attempt.__table__.columns]
    assert sorted(chain.HASHED_COLUMNS) == sorted(set(columns) - set(chain.EXCLUDED_COLUMNS))
    assert set(chain.EXCLUDED_COLUMNS) <= set(columns)


def test_private_root_is_not_hashed(engine, clock, db_path):
    _run(engine, clock, 2)
    _sql(db_path, "UPDATE attempts SET private_root = NULL")
    assert chain.verify_chain(engine) == []


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("verified_pass", 0),
        ("cost_usd", 0.0123001),
        ("cache_write_tokens", 0),  # unknown rewritten as zero
        ("cleanup_complete", None),
        ("outcome", "failed"),
        ("ended_at", "2026-01-01 00:00:31.000000"),
        ("status", "interrupted"),
    ],
)
def test_an_edited_column_is_detected(engine, clock, db_path, column, value):
    campaign_id, ids = _run(engine, clock, 4)
    _sql(db_path, f"UPDATE attempts SET {column} = ? WHERE id = ?", value, ids[1])
    problems = chain.verify_chain(engine, campaign_id)
    # A finished row edited to "interrupted" also leaves its finished trial without a result.
    extra = [("missing", None)] if (column, value) == ("status", "interrupted") else []
    assert _kinds(problems) == [("edited", 2), *extra]
    assert problems[0].attempt_id == ids[1]
    assert "changed after it was sealed" in problems[0].line()


def test_a_deleted_row_is_detected(engine, clock, db_path):
    campaign_id, ids = _run(engine, clock, 4)
    trial_id = repository.trials_in_order(engine, campaign_id)[1].trial_id
    _sql(db_path, "DELETE FROM attempts WHERE id = ?", ids[1])
    problems = chain.verify_chain(engine, campaign_id)
    assert _kinds(problems) == [("missing", 3), ("missing", None)]
    assert "seq 2 missing" in problems[0].detail
    assert f"trial {trial_id} is finished but has no finished attempt row" in problems[1].detail


def test_deleting_the_last_row_is_detected_through_its_trial(engine, clock, db_path):
    campaign_id, ids = _run(engine, clock, 3)
    _sql(db_path, "DELETE FROM attempts WHERE id = ?", ids[-1])
    assert _kinds(chain.verify_chain(engine, campaign_id)) == [("missing", None)]


def test_deleting_and_renumbering_is_detected(engine, clock, db_path):
    campaign_id, ids = _run(engine, clock, 4)
    _sql(db_path, "DELETE FROM attempts WHERE id = ?", ids[1])
    _sql(db_path, "UPDATE attempts SET seq = seq - 1 WHERE campaign_id = ? AND seq > 2", campaign_id)
    kinds = _kinds(chain.verify_chain(engine, campaign_id))
    assert ("edited", 2) in kinds and ("broken_link", 2) in kinds and ("edited", 3) in kinds


def test_swapping_the_seq_of_two_rows_is_detected(engine, clock, db_path):
    campaign_id, ids = _run(engine, clock, 4)
    _sql(db_path, "UPDATE attempts SET seq = -1 WHERE id = ?", ids[1])
    _sql(db_path, "UPDATE attempts SET seq = 2 WHERE id = ?", ids[2])
    _sql(db_path, "UPDATE attempts SET seq = 3 WHERE id = ?", ids[1])
    problems = chain.verify_chain(engine, campaign_id)
    kinds = _kinds(problems)
    assert ("edited", 2) in kinds and ("edited", 3) in kinds
    assert ("broken_link", 2) in kinds and ("broken_link", 4) in kinds
    assert {p.attempt_id for p in problems} == {ids[1], ids[2], ids[3]}


def test_swapping_whole_rows_with_their_hashes_breaks_the_links(engine, clock, db_path):
    campaign_id, ids = _run(engine, clock, 4)
    # Swap everything but the identity: each row still matches its own hash, not its place.
    with sqlite3.connect(db_path) as conn:
        conn.row_factory = sqlite3.Row
        a, b = (dict(conn.execute("SELECT * FROM attempts WHERE id = ?", (i,)).fetchone()) for i in ids[1:3])
        conn.execute("UPDATE attempts SET seq = -1 WHERE id = ?", (a["id"],))
        conn.execute("UPDATE attempts SET seq = ?, prev_hash = ?, row_hash = ? WHERE id = ?", (a["seq"], b["prev_hash"], b["row_hash"], b["id"]))
        conn.execute("UPDATE attempts SET seq = ?, prev_hash = ?, row_hash = ? WHERE id = ?", (b["seq"], a["prev_hash"], a["row_hash"], a["id"]))
    assert chain.verify_chain(engine, campaign_id)


def test_a_removed_hash_before_sealed_rows_is_detected(engine, clock, db_path):
    campaign_id, ids = _run(engine, clock, 4)
    _sql(db_path, "UPDATE attempts SET row_hash = NULL, cost_usd = 0 WHERE id = ?", ids[1])
    problems = chain.verify_chain(engine, campaign_id)
    assert _kinds(problems) == [("unsealed", 2)]
    assert "later rows are" in problems[0].detail


def test_an_edited_genesis_is_detected(engine, clock, db_path):
    campaign_id, _ = _run(engine, clock, 2)
    _sql(db_path, "UPDATE campaigns SET experiment_digest = ? WHERE id = ?", "f" * 64, campaign_id)
    problems = chain.verify_chain(engine, campaign_id)
    assert _kinds(problems) == [("broken_link", 1), ("edited", None)]
    assert "experiment digest" in problems[0].detail
    assert "does not match its experiment_digest" in problems[1].detail


def test_an_unreadable_value_is_reported_not_raised(engine, clock, db_path):
    campaign_id, ids = _run(engine, clock, 3)
    _sql(db_path, "UPDATE attempts SET started_at = 'not a time' WHERE id = ?", ids[1])
    problems = chain.verify_chain(engine, campaign_id)
    assert problems and problems[0].kind == "unreadable"


@pytest.mark.parametrize("column", ["schema_diagnostics", "cost_usd"])
def test_a_blob_written_into_a_hashed_column_is_a_named_edit_not_a_traceback(engine, clock, db_path, column):
    campaign_id, ids = _run(engine, clock, 3)
    _sql(db_path, f"UPDATE attempts SET {column} = x'fffe00' WHERE id = ?", ids[1])
    problems = chain.verify_chain(engine, campaign_id)
    assert problems and problems[0].seq == 2 and problems[0].kind in ("edited", "unreadable"), problems


def test_trials_cut_off_with_their_attempts_are_missing_against_the_campaigns_schedule(engine, clock, db_path):
    """The shorter chain is intact on its own: the campaign row says how many trials it scheduled."""
    campaign_id, ids = _run(engine, clock, 6)
    _sql(db_path, "DELETE FROM ledger WHERE attempt_id = ?", ids[-1])
    _sql(db_path, "DELETE FROM attempts WHERE id = ?", ids[-1])
    _sql(db_path, "DELETE FROM trials WHERE campaign_id = ? AND position = (SELECT max(position) FROM trials WHERE campaign_id = ?)", campaign_id, campaign_id)
    problems = chain.verify_chain(engine, campaign_id)
    assert _kinds(problems) == [("missing", None)] and "scheduled 6 trials and the store holds 5" in problems[0].detail


def test_a_running_row_in_a_completed_campaign_is_a_problem(engine, clock, db_path):
    """An unsealed running row may end a chain while its campaign runs, never once it completed."""
    campaign_id, ids = _run(engine, clock, 2)
    trials = repository.trials_in_order(engine, campaign_id)
    assert repository.admit_trial(engine, trials[2].id)
    _sql(db_path, "INSERT INTO attempts (campaign_id, trial_pk, seq, status, started_at, cost_usd) VALUES (?, ?, 3, 'running', '2026-01-01 00:00:00.000000', 100.0)", campaign_id, trials[2].id)
    assert chain.verify_chain(engine, campaign_id) == []  # running: the engine's own state while it works
    _sql(db_path, "UPDATE campaigns SET state = 'completed' WHERE id = ?", campaign_id)
    assert _kinds(chain.verify_chain(engine, campaign_id)) == [("unsealed", 3)]


def test_a_running_row_on_a_trial_not_admitted_to_it_is_a_problem(engine, clock, db_path):
    """A running row is not hashed and its spend counts as paid for: one the engine did not
    start (its trial not admitted, or already running another) is named, in any state."""
    campaign_id, ids = _run(engine, clock, 2)
    trials = repository.trials_in_order(engine, campaign_id)
    insert = "INSERT INTO attempts (campaign_id, trial_pk, seq, status, started_at, cost_usd) VALUES (?, ?, ?, 'running', '2026-01-01 00:00:00.000000', 250.0)"
    _sql(db_path, insert, campaign_id, trials[3].id, -1)
    problems = chain.verify_chain(engine, campaign_id)
    assert [(p.kind, p.detail) for p in problems] == [("edited", "a running attempt, yet its trial is 'scheduled', not admitted (the row was added or the trial edited)")]
    _sql(db_path, "DELETE FROM attempts WHERE seq = -1")
    assert repository.admit_trial(engine, trials[3].id)
    repository.start_attempt(engine, trials[3], clock=clock)
    assert chain.verify_chain(engine, campaign_id) == []  # the engine's own running attempt
    _sql(db_path, insert, campaign_id, trials[3].id, -2)
    assert [p.detail for p in chain.verify_chain(engine, campaign_id)] == ["a running attempt, yet its trial has another running attempt (the row was added or the trial edited)"]


def test_campaigns_chain_independently(engine, clock, db_path):
    first, _ = _run(engine, clock, 2)
    second, ids = _run(engine, clock, 2, experiment={"k": 2})
    _sql(db_path, "UPDATE attempts SET output_tokens = 1 WHERE id = ?", ids[0])
    assert chain.verify_chain(engine, first) == []
    assert [(p.campaign_id, p.kind) for p in chain.verify_chain(engine)] == [(second, "edited")]
    with pytest.raises(UsageProblem, match="no campaign 99"):
        chain.verify_chain(engine, 99)


def test_sealing_is_idempotent_and_refuses_a_running_row(engine, clock):
    campaign_id, trials = _campaign(engine)
    attempt_id = _start(engine, trials[0], clock)
    with pytest.raises(ConflictError, match="still running"):
        chain.seal_attempt(engine, attempt_id)
    assert chain.verify_chain(engine, campaign_id) == []  # a running row may end the chain unsealed
    _finish(engine, attempt_id, trials[0], clock)
    first = chain.seal_attempt(engine, attempt_id)
    assert chain.seal_attempt(engine, attempt_id) == first
    with pytest.raises(UsageProblem, match="no attempt 999"):
        chain.seal_attempt(engine, 999)


def test_sealing_inside_the_callers_transaction(engine, clock):
    campaign_id, trials = _campaign(engine)
    attempt_id = _start(engine, trials[0], clock)
    _finish(engine, attempt_id, trials[0], clock, status="interrupted")
    with engine.begin() as conn:
        digest = chain.seal_attempt(conn, attempt_id)
    assert repository.get_attempt(engine, attempt_id).row_hash == digest
    assert chain.verify_chain(engine, campaign_id) == []


def test_an_unsealed_finished_tail_is_reported_then_sealed_in_order(engine, clock):
    campaign_id, ids = _run(engine, clock, 3, seal=False)
    problems = chain.verify_chain(engine, campaign_id)
    assert _kinds(problems) == [("unsealed", 1), ("unsealed", 2), ("unsealed", 3)]
    # Sealing the last row seals the finished rows before it first.
    chain.seal_attempt(engine, ids[-1])
    assert chain.verify_chain(engine, campaign_id) == []


def test_seal_pending_stops_at_a_running_last_row(engine, clock):
    campaign_id, trials = _campaign(engine)
    finished = []
    for trial in trials[:2]:
        finished.append(_start(engine, trial, clock))
        _finish(engine, finished[-1], trial, clock)
    _unseal(engine, finished)
    running = _start(engine, trials[2], clock)
    assert chain.seal_pending(engine, campaign_id) == 2
    assert chain.seal_pending(engine, campaign_id) == 0
    assert repository.get_attempt(engine, running).row_hash is None
    assert chain.verify_chain(engine, campaign_id) == []


def test_attempts_join_the_chain_in_the_order_they_finish(engine, clock):
    """Workers run providers in parallel: an attempt started later may finish first. A
    running row is not a link yet (provisional negative seq), so the chain never holds
    a running row in its middle and verifies at every point."""
    campaign_id, trials = _campaign(engine)
    slow = _start(engine, trials[0], clock)
    fast = _start(engine, trials[1], clock)
    assert [repository.get_attempt(engine, a).seq for a in (slow, fast)] == [-1, -2]
    assert chain.verify_chain(engine, campaign_id) == []
    _finish(engine, fast, trials[1], clock)
    assert repository.get_attempt(engine, fast).seq == 1
    assert chain.verify_chain(engine, campaign_id) == []
    _finish(engine, slow, trials[0], clock)
    assert [repository.get_attempt(engine, a).seq for a in (fast, slow)] == [1, 2]
    assert repository.get_attempt(engine, slow).prev_hash == repository.get_attempt(engine, fast).row_hash
    assert chain.verify_chain(engine, campaign_id) == []


def test_sealing_refuses_a_chain_with_a_gap(engine, clock, db_path):
    _, trials = _campaign(engine)
    first = _start(engine, trials[0], clock)
    _finish(engine, first, trials[0], clock)
    second = _start(engine, trials[1], clock)
    _finish(engine, second, trials[1], clock)
    _unseal(engine, [second])
    _sql(db_path, "DELETE FROM attempts WHERE id = ?", first)
    with pytest.raises(chain.ChainBroken, match="seq 1 is missing"):
        chain.seal_attempt(engine, second)
    third = _start(engine, trials[2], clock)
    with pytest.raises(chain.ChainBroken, match="seq 1 is missing"):
        _finish(engine, third, trials[2], clock)


def test_amend_tail_reseals_the_last_row_only(engine, clock, db_path):
    campaign_id, ids = _run(engine, clock, 3)
    with pytest.raises(ConflictError, match="not the last row"):
        chain.amend_tail(engine, ids[1], cleanup_complete=False)
    before = repository.get_attempt(engine, ids[-1]).row_hash
    after = chain.amend_tail(engine, ids[-1], cleanup_complete=False, teardown_outcome="recovered")
    row = repository.get_attempt(engine, ids[-1])
    assert after == row.row_hash != before and row.cleanup_complete is False
    assert chain.verify_chain(engine, campaign_id) == []
    for identity in ({"seq": 9}, {"status": "running"}, {"row_hash": "0" * 64}):
        with pytest.raises(ValueError, match="cannot amend"):
            chain.amend_tail(engine, ids[-1], **identity)
    # A row edited outside the engine is not laundered by an amendment.
    _sql(db_path, "UPDATE attempts SET cost_usd = 0 WHERE id = ?", ids[-1])
    with pytest.raises(chain.ChainBroken, match="no longer matches"):
        chain.amend_tail(engine, ids[-1], cleanup_complete=True)
