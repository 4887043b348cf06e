"""The store on every backend: SQLite and a real PostgreSQL (scripts/test.sh starts one).

SQL stays dialect-neutral outside clearly marked places; these tests prove the
migrations, compare-and-set admission, the hash chain, read-only SQL, the
report's aggregates and a whole live paired run on both.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import event, text

from campaign.cli import cli
from campaign.schedule import build_schedule
from campaign.store import chain, repository
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import current_revision, drift, head_revision, open_store
from workspace import run


@pytest.fixture
def store(backend_url):
    engine = open_store(backend_url)
    yield engine
    engine.dispose()


def _campaign(engine, tasks=("t1", "t2"), reps=2) -> int:
    return repository.create_campaign(
        engine,
        repository.NewCampaign(kind="paired", state="running", live=False, agent="offline", seed=7, experiment={"k": 1}),
        build_schedule(list(tasks), reps, seed=7),
        model="offline:synthetic",
        default_provider="offline",
    )


def test_an_empty_store_is_migrated_to_head_without_drift(store, backend_url, runner):
    assert current_revision(store) == head_revision()
    assert drift(store) == []
    result = runner.invoke(cli, ["db", "check", "--db", backend_url])
    assert result.exit_code == 0, result.output


def test_two_engines_never_admit_the_same_trial(store, backend_url):
    campaign_id = _campaign(store)
    other = make_engine(resolve_url(backend_url))
    try:
        wins = [repository.admit_trial(store, t.id) + repository.admit_trial(other, t.id) for t in repository.trials_in_order(store, campaign_id)]
    finally:
        other.dispose()
    assert wins == [1] * 8


def test_finished_rows_are_chained_and_an_edit_is_detected(store):
    campaign_id = _campaign(store)
    for trial in repository.trials_in_order(store, campaign_id)[:3]:
        repository.admit_trial(store, trial.id)
        attempt_id = repository.start_attempt(store, trial, uncached_input_tokens=2**40)
        repository.finish_attempt(store, attempt_id, trial.id, outcome="passed", verified_pass=True, cost_usd=0.125, wall_seconds=1.5)
    assert chain.verify_chain(store, campaign_id) == []
    with store.begin() as conn:
        conn.execute(text("UPDATE attempts SET cost_usd = 0.0 WHERE seq = 2"))
    assert [p.kind for p in chain.verify_chain(store, campaign_id)] == ["edited"]


def _held_across_a_read(reader, campaign_id: int) -> tuple:
    """The head, shown not to move across a verification (a read). On PostgreSQL the head's
    stamp is the server's next transaction id, which the other test workers' databases on
    the same server move too; a read of ours that took one would move it every time, so
    one quiet try of five proves ours do not."""
    for _ in range(5):
        before = chain.head(reader, campaign_id)
        chain.verify_chain(reader, campaign_id)
        if chain.head(reader, campaign_id) == before:
            return before
    raise AssertionError("a verification moved the head five times in a row")


def test_a_finished_campaigns_head_moves_with_any_commit_to_the_store_and_holds_on_reads(store, backend_url):
    """An edit no link shows (a trial row here) moves a finished campaign's head, as read
    by a read-only engine such as the view's; reading moves nothing."""
    campaign_id = _campaign(store)
    reader = make_engine(resolve_url(backend_url), readonly=True)
    try:
        running = chain.head(reader, campaign_id)
        with store.begin() as conn:
            conn.execute(text("UPDATE campaigns SET state = 'completed' WHERE id = :c"), {"c": campaign_id})
        finished = _held_across_a_read(reader, campaign_id)
        assert finished != running
        with store.begin() as conn:
            conn.execute(text("UPDATE trials SET variant = 'coding' WHERE campaign_id = :c AND position = 0"), {"c": campaign_id})
        assert chain.head(reader, campaign_id) != finished
    finally:
        reader.dispose()


def test_a_check_reads_one_state_while_the_engine_finishes_an_attempt(store, backend_url):
    """`campaign verify` and the view check running campaigns on read-only engines: the
    attempt rows first, the trial rows after. An attempt that finishes between those reads
    must not look like a trial finished without its row ("the row was deleted")."""
    campaign_id = _campaign(store)
    running = []
    for trial in repository.trials_in_order(store, campaign_id)[:2]:
        repository.admit_trial(store, trial.id)
        running.append((repository.start_attempt(store, trial), trial.id))
    repository.finish_attempt(store, *running[0], outcome="passed", verified_pass=True)
    reader = make_engine(resolve_url(backend_url), readonly=True)
    landed = []

    def finish_between(conn, cursor, statement, *rest):
        if "FROM trials" in statement and not landed:
            landed.append(statement)
            repository.finish_attempt(store, *running[1], outcome="passed", verified_pass=True)

    event.listen(reader, "before_cursor_execute", finish_between)
    try:
        assert chain.verify_chain(reader, campaign_id) == []
        assert landed  # the commit did land between its reads
        assert chain.verify_chain(reader, campaign_id) == []  # and the state after it verifies too
    finally:
        reader.dispose()


def test_sql_is_read_only(store, backend_url, runner):
    _campaign(store)
    ok = runner.invoke(cli, ["sql", "SELECT count(*) AS n FROM trials", "--db", backend_url, "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output) == [{"n": 8}]
    refused = runner.invoke(cli, ["sql", "DELETE FROM trials", "--db", backend_url])
    assert refused.exit_code == 2 and "read-only" in refused.output
    for statement in ("SELECT 1; SELECT 2", "SELECT 1; DELETE FROM trials"):
        two = runner.invoke(cli, ["sql", statement, "--db", backend_url])
        assert two.exit_code == 2 and "STATEMENT" in two.output, two.output
    assert json.loads(runner.invoke(cli, ["sql", "SELECT count(*) AS n FROM trials", "--db", backend_url, "--json"]).output) == [{"n": 8}]


def test_a_live_paired_run_and_its_report(ws, backend_url, monkeypatch, tmp_path):
    from campaign.canonical import spec_digest

    monkeypatch.setenv("OFFLINE_TEST_API_KEY", "k")
    # Through the recording proxy: a live paired run needs the wire's flush for complete spend.
    args = ws.args("--agent", "offline-wire", "--repetitions", "1", "--model", "offline:synthetic", tasks="semver-precedence")
    args[args.index("--db") + 1] = backend_url
    planned = run(args)
    assert planned.exit_code == 0, planned.output
    plan = json.loads(ws.output.read_text())["plan"]
    plan.update(approved=True, max_spend_usd=5.0, per_attempt_spend_ceiling_usd=1.0, provider_budget_enforced=True, credential_env=["OFFLINE_TEST_API_KEY"])
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(plan))
    report = tmp_path / "reports" / "live.json"
    live = args + ["--live", "--plan", str(plan_path), "--approve-plan-digest", spec_digest(plan)]
    live[live.index("--output") + 1] = str(report)
    result = run(live)
    assert result.exit_code == 0, result.output
    doc = json.loads(report.read_text())
    assert doc["completion"]["attempted"] == 2
    assert {v["variant"]: v["attempts"] for v in doc["variants"]} == {"baseline": 1, "coding": 1}
    engine = make_engine(resolve_url(backend_url))
    try:
        (campaign,) = [c for c in [repository.latest_campaign(engine, kind="paired")] if c is not None]
        assert chain.verify_chain(engine, campaign.id) == []
        assert {e.role for a in repository.attempts_for(engine, campaign.id) for e in repository.ledger_for(engine, a.id)} >= {"client", "verifier"}
    finally:
        engine.dispose()


def test_a_campaign_runs_and_resumes(backend_url, tmp_path):
    out = tmp_path / "out"
    args = ["coding", "--campaign", "--tasks", "semver-precedence", "--repetitions", "1", "--output-dir", str(out), "--live", "--db", backend_url]
    first = run(args)
    assert first.exit_code == 0, first.output
    again = run(args + ["--resume"])
    assert again.exit_code == 0 and "ran 0 attempts now" in again.output
    assert (out / "report.json").is_file()
