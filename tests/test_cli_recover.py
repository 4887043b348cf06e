"""`campaign recover`: argument handling, verdict lines and exit codes."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers.procs import start_ticks, wait_for

from campaign.cli import cli
from campaign.store import repository
from campaign.store.repository import LedgerMember
from campaign.supervise.procfs import ProcFS


def test_needs_exactly_one_of_attempt_or_all(runner, engine, db_url):
    for args in ([], ["1", "--all"]):
        result = runner.invoke(cli, ["recover", *args, "--db", db_url])
        assert result.exit_code == 2 and "give one ATTEMPT_ID or --all" in result.output


def test_a_wait_that_is_not_a_number_is_refused(runner, engine, db_url):
    # NaN passes a range check (no comparison with it holds), and waited 0 s.
    result = runner.invoke(cli, ["recover", "--all", "--wait", "nan", "--db", db_url])
    assert result.exit_code == 2 and "Invalid value for '--wait': 'nan' is not a number" in result.output


def test_unknown_attempt_is_a_usage_problem(runner, engine, db_url):
    result = runner.invoke(cli, ["recover", "99", "--db", db_url])
    assert result.exit_code == 2 and "no attempt 99" in result.output


def test_an_attempt_with_no_ledger_row_started_nothing_and_is_proven_clean(runner, engine, db_url, make_attempt):
    # Its runner was killed between the attempt row and the first spawn: no process ever
    # passed an exec gate, so recovery proves it and the way forward is open (issue 27).
    attempt_id, _ = make_attempt()
    result = runner.invoke(cli, ["recover", str(attempt_id), "--db", db_url])
    assert result.exit_code == 0, result.output
    assert f"attempt {attempt_id}: cleanup verified: no process was ever started for it" in result.output
    assert (repository.get_attempt(engine, attempt_id).cleanup_complete, repository.get_attempt(engine, attempt_id).teardown_outcome) == (True, "recovered")
    again = runner.invoke(cli, ["recover", str(attempt_id), "--db", db_url])
    assert again.exit_code == 0 and "cleanup already verified" in again.output


def test_missing_ledger_of_an_attempt_that_ran_exits_nonzero_with_a_clear_line(runner, engine, db_url, make_attempt):
    attempt_id, _ = make_attempt()
    repository.update_attempt(engine, attempt_id, wall_seconds=1.5)  # a client returned: something ran
    result = runner.invoke(cli, ["recover", str(attempt_id), "--db", db_url])
    assert result.exit_code == 1
    assert f"attempt {attempt_id}: cleanup_unverified" in result.output
    assert "no ledger rows for an attempt that ran" in result.output
    assert f"cleanup unverified for attempt(s) {attempt_id}" in result.output
    assert repository.get_attempt(engine, attempt_id).cleanup_complete is False


def test_already_verified_and_all(runner, engine, db_url, make_attempt):
    done, _ = make_attempt("task-a")
    repository.update_attempt(engine, done, cleanup_complete=True, teardown_outcome="clean")
    result = runner.invoke(cli, ["recover", str(done), "--db", db_url])
    assert result.exit_code == 0 and "cleanup already verified" in result.output
    result = runner.invoke(cli, ["recover", "--all", "--db", db_url])
    assert result.exit_code == 0 and "no attempt has unverified cleanup" in result.output


def test_all_visits_every_unverified_attempt(runner, engine, db_url, make_attempt):
    first, _ = make_attempt("task-a")
    repository.update_attempt(engine, first, wall_seconds=1.5)
    second, _ = make_attempt("task-b")
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        ticks = wait_for(lambda: start_ticks(bystander.pid))
        proc = ProcFS()
        repository.record_ledger(engine, second, LedgerMember("runtime", bystander.pid, ticks - 1, proc.boot_id(), proc.pid_ns(), None))
        result = runner.invoke(cli, ["recover", "--all", "--db", db_url])
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()
    assert result.exit_code == 1
    assert f"attempt {first}: cleanup_unverified" in result.output
    assert f"attempt {second}: cleanup_unverified: 0 of 1" in result.output
    assert f"attempt(s) {first}, {second}" in result.output


def test_never_creates_a_store(runner, tmp_path):
    result = runner.invoke(cli, ["recover", "1", "--db", str(tmp_path / "none.db")])
    assert result.exit_code == 2 and not (tmp_path / "none.db").exists()


def test_recover_never_rewrites_a_finished_sealed_row(runner, engine, db_url, make_attempt):
    from campaign.store import chain

    attempt_id, trial = make_attempt()
    gone = subprocess.Popen(["true"])
    gone.wait()
    proc = ProcFS()
    # A member that is provably gone now (its pid exited): the ledger gets the proof...
    repository.record_ledger(engine, attempt_id, LedgerMember("client", gone.pid, 1, proc.boot_id(), proc.pid_ns(), None))
    repository.finish_attempt(engine, attempt_id, trial.id, outcome="failed", cleanup_complete=False, teardown_outcome="unverified")
    result = runner.invoke(cli, ["recover", str(attempt_id), "--db", db_url])
    row = repository.get_attempt(engine, attempt_id)
    # ...but the sealed attempt keeps its recorded fact, so the stop it caused stands.
    assert (row.cleanup_complete, row.teardown_outcome) == (False, "unverified")
    assert chain.verify_chain(engine, trial.campaign_id) == []
    assert [e.verification for e in repository.ledger_for(engine, attempt_id)] != [None]
    assert result.exit_code in (0, 1)


def test_a_stop_while_recovery_reads_the_ledger_exits_130_and_records_nothing(engine, db_url, make_attempt):
    """The operator's Ctrl-C is not an unreadable ledger: before, the catch-all around the
    ledger read took it for one and recorded the attempt's cleanup as unverified."""
    attempt_id, _ = make_attempt()
    repository.update_attempt(engine, attempt_id, wall_seconds=1.5)
    env = {**os.environ, "CAMPAIGN_TEST_STOP_AT": "recovering:1:INT"}
    done = subprocess.run([sys.executable, "-m", "campaign", "recover", str(attempt_id), "--db", db_url], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stdout + done.stderr
    assert "ledger unreadable" not in done.stdout + done.stderr
    row = repository.get_attempt(engine, attempt_id)
    assert (row.status, row.cleanup_complete, row.teardown_outcome) == ("running", None, None)
