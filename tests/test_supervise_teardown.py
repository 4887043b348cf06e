"""Teardown against real misbehaving processes: everything found, stopped and proven gone."""

from __future__ import annotations

import os
import sys
import time

import pytest
from helpers import procs
from helpers.procs import AGENT, alive, wait_for, wait_pids
from sqlalchemy import delete

from campaign import isolation
from campaign.store import repository
from campaign.store.models import LedgerEntry
from campaign.supervise import Supervisor, SupervisorError, TeardownBudget

pids_file = procs.pids_file  # fixture
tmp_base = procs.tmp_base  # fixture

FAST = TeardownBudget(grace=0.5, kill_wait=3.0, run_grace=0.3)
MODES = procs.containment_modes()


@pytest.fixture
def attempt(engine, make_attempt, tmp_path):
    attempt_id, _ = make_attempt()
    root = isolation.create_private_root(tmp_path)
    return attempt_id, root, isolation.build_env(root, os.environ)


def _all_gone(rows):
    return all(not alive(pid, ticks) for _label, pid, ticks in rows)


def test_exit_immediately_does_not_wait_the_grace(engine, attempt, pids_file):
    attempt_id, root, env = attempt
    naps = []
    with Supervisor(engine, attempt_id, root, sleep=naps.append) as sup:  # spec budget: 5 s grace
        assert sup.budget.grace == 5.0 and sup.budget.total == 35.0
        rt = sup.start("runtime", [*AGENT, "exit", str(pids_file)], env=env)
        assert rt.wait(10) == 0
        start = time.monotonic()
    verdict = sup.teardown()
    assert verdict.cleanup_complete and verdict.outcome == "clean"
    assert naps == []  # never slept waiting for a grace period
    assert time.monotonic() - start < 5.0 and verdict.seconds < 5.0


def _recovery_probe(tmp_path):
    """A recovery command that leaves a mark when it is started, then runs the real one."""
    mark = tmp_path / "recovery-started"
    argv = [sys.executable, "-c", "import pathlib, runpy, sys; pathlib.Path(sys.argv.pop(1)).touch(); sys.argv[0] = 'recovery';"
            " runpy.run_module('campaign.supervise.recovery', run_name='__main__')", str(mark)]  # fmt: skip
    return mark, argv


@pytest.mark.parametrize("containment", MODES)
def test_an_agent_that_left_nothing_is_proven_gone_without_signals_or_recovery(engine, attempt, pids_file, tmp_path, containment):
    attempt_id, root, env = attempt
    mark, recovery = _recovery_probe(tmp_path)
    naps = []
    assert not procs.reap_exited_children(), "an earlier test left a live child of this process: no fast-path proof is possible"
    with Supervisor(engine, attempt_id, root, sleep=naps.append, containment=containment, recovery_argv=recovery) as sup:
        assert sup.run("client", [*AGENT, "exit", str(pids_file)], env=env, timeout=30).exit_code == 0
        assert sup.run("verifier", [*AGENT, "exit", str(pids_file)], env=env, timeout=30).exit_code == 0
    verdict = sup.teardown()
    assert (verdict.cleanup_complete, verdict.outcome, verdict.phases, verdict.containment) == (True, "clean", (), containment)
    assert not mark.exists() and naps == []  # no recovery process started, no grace waited
    assert [(r.role, r.state, r.verification) for r in repository.ledger_for(engine, attempt_id)] == [("client", "gone", "exited"), ("verifier", "gone", "exited")]
    assert _all_gone(procs.read_pids(pids_file))


@pytest.mark.parametrize("containment", MODES)
def test_an_agent_that_left_a_child_behind_still_gets_the_grace_and_the_recovery(engine, attempt, pids_file, tmp_path, containment):
    attempt_id, root, env = attempt
    mark, recovery = _recovery_probe(tmp_path)
    with Supervisor(engine, attempt_id, root, budget=FAST, containment=containment, recovery_argv=recovery) as sup:
        sup.start("client", [*AGENT, "double-fork-exit", str(pids_file)], env=env).wait(10)
        rows = wait_pids(pids_file, ["self", "escaped"])
    verdict = sup.teardown()
    assert verdict.cleanup_complete and verdict.phases[0] == "term" and verdict.phases[-1] == "recovery", verdict
    assert mark.exists()
    assert _all_gone(rows)


@pytest.mark.parametrize("containment", MODES)
def test_double_forked_session_escapee_is_found_recorded_and_stopped(engine, attempt, pids_file, containment):
    attempt_id, root, env = attempt
    with Supervisor(engine, attempt_id, root, budget=FAST, containment=containment) as sup:
        sup.start("runtime", [*AGENT, "double-fork", str(pids_file)], env=env)
        rows = wait_pids(pids_file, ["self", "escaped"])
        escaped = next(r for r in rows if r[0] == "escaped")
        assert alive(escaped[1], escaped[2])
    verdict = sup.teardown()
    assert verdict.cleanup_complete, verdict
    assert verdict.containment == containment and verdict.survivors == 0
    assert _all_gone(rows)
    ledger = repository.ledger_for(engine, attempt_id)
    found = [r for r in ledger if r.pid == escaped[1]]
    assert found and found[0].role == "descendant" and found[0].discovered and found[0].start_ticks == escaped[2]
    assert all(r.state == "gone" for r in ledger)
    row = repository.get_attempt(engine, attempt_id)
    assert (row.cleanup_complete, row.teardown_outcome, row.containment) == (True, verdict.outcome, containment)


def test_sigterm_ignoring_member_is_forced(engine, attempt, pids_file):
    attempt_id, root, env = attempt
    with Supervisor(engine, attempt_id, root, budget=FAST) as sup:
        sup.start("runtime", [*AGENT, "ignore-term", str(pids_file)], env=env)
        rows = wait_pids(pids_file, ["self"])
    verdict = sup.teardown()
    assert verdict.cleanup_complete and verdict.outcome == "forced"
    assert verdict.seconds >= FAST.grace  # the grace was honoured before SIGKILL
    assert _all_gone(rows)


def test_fifo_holder_blocked_in_open_is_stopped(engine, attempt, pids_file, tmp_path):
    attempt_id, root, env = attempt
    with Supervisor(engine, attempt_id, root, budget=FAST) as sup:
        sup.start("runtime", [*AGENT, "fifo", str(pids_file), str(root.tmpdir / "pipe")], env=env)
        rows = wait_pids(pids_file, ["self"])
        wait_for(lambda: (root.tmpdir / "pipe").exists())
    verdict = sup.teardown()
    assert verdict.cleanup_complete and verdict.outcome == "clean"
    assert _all_gone(rows)


@pytest.mark.parametrize("containment", MODES)
def test_grandchild_left_in_the_process_group_is_stopped(engine, attempt, pids_file, containment):
    attempt_id, root, env = attempt
    with Supervisor(engine, attempt_id, root, budget=FAST, containment=containment) as sup:
        leader = sup.start("runtime", [*AGENT, "grandchild", str(pids_file)], env=env)
        rows = wait_pids(pids_file, ["self", "grandchild"])
        assert leader.wait(10) == 0  # the leader is gone; its grandchild (ignoring TERM) is not
        grandchild = next(r for r in rows if r[0] == "grandchild")
        assert alive(grandchild[1], grandchild[2])
    verdict = sup.teardown()
    assert verdict.cleanup_complete and verdict.outcome == "forced"
    assert _all_gone(rows)
    assert any(r.pid == grandchild[1] and r.discovered for r in repository.ledger_for(engine, attempt_id))


def test_deadline_stops_the_command_and_its_same_group_children(engine, attempt, pids_file):
    attempt_id, root, env = attempt
    with Supervisor(engine, attempt_id, root, budget=FAST) as sup:
        res = sup.run("client", [*AGENT, "grandchild-stay", str(pids_file)], env=env, timeout=1.0)
        rows = wait_pids(pids_file, ["self", "grandchild"])
        assert res.timed_out and res.exit_code is None and res.wall_seconds >= 1.0
        assert _all_gone(rows)  # before teardown: the deadline owner stopped its whole group
    assert sup.teardown().cleanup_complete


def test_finished_command_leaves_no_background_children(engine, attempt, pids_file):
    attempt_id, root, env = attempt
    with Supervisor(engine, attempt_id, root, budget=FAST) as sup:
        res = sup.run("verifier", [*AGENT, "grandchild", str(pids_file)], env=env, timeout=30)
        assert (res.exit_code, res.timed_out) == (0, False)
        rows = wait_pids(pids_file, ["self", "grandchild"])
        wait_for(lambda: _all_gone(rows), timeout=5)
        code = sup.run("client", [*AGENT, "exit", str(pids_file), "3"], env=env, timeout=30)
        assert code.exit_code == 3
    assert sup.teardown().cleanup_complete


def test_child_environment_carries_no_unapproved_secret(engine, attempt, monkeypatch):
    attempt_id, root, _ = attempt
    monkeypatch.setenv("SECRET_CANARY", "canary-91b2-never-leak")
    monkeypatch.setenv("OPENAI_API_KEY", "canary-approved-credential")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "canary-not-approved")
    env = isolation.build_env(root, os.environ, credential_names=("OPENAI_API_KEY",))
    out = root.capture("env.out")
    with Supervisor(engine, attempt_id, root, budget=FAST) as sup:
        sup.run("client", [sys.executable, "-I", "-c", "import os; print(sorted(os.environ.items()))"], env=env, timeout=30, stdout=out)
    seen = out.read_text()
    assert "canary-approved-credential" in seen
    assert "canary-91b2-never-leak" not in seen and "canary-not-approved" not in seen
    assert str(root.home) in seen


def test_unprovable_cleanup_keeps_the_root_and_says_stop(engine, attempt, pids_file):
    attempt_id, root, env = attempt
    # A recovery process that cannot run is a cleanup that cannot be proven.
    with Supervisor(engine, attempt_id, root, budget=FAST, recovery_argv=["false"]) as sup:
        sup.start("runtime", [*AGENT, "sleep", str(pids_file)], env=env)
        wait_pids(pids_file, ["self"])
    verdict = sup.teardown()
    assert not verdict.cleanup_complete and verdict.outcome == "unverified"
    assert verdict.stop_reason == "cleanup_unverified" and "recovery_failed" in verdict.reasons
    row = repository.get_attempt(engine, attempt_id)
    assert (row.cleanup_complete, row.teardown_outcome, row.private_root) == (False, "unverified", str(root.path))
    assert "teardown verdict: unverified" in root.cleanup_log.read_text()
    result = sup.dispose(finalization_ok=True)
    assert (result.disposal_complete, result.reason) == (False, "cleanup_unverified")
    assert root.path.is_dir()


def test_lost_ledger_rows_are_unverified(engine, attempt, pids_file):
    attempt_id, root, env = attempt
    with Supervisor(engine, attempt_id, root, budget=FAST) as sup:
        sup.start("runtime", [*AGENT, "sleep", str(pids_file)], env=env)
        wait_pids(pids_file, ["self"])
        sup.verify_ledger()  # the pre-paid-call check passes while the rows are intact
        with engine.begin() as conn:
            conn.execute(delete(LedgerEntry).where(LedgerEntry.attempt_id == attempt_id))
        with pytest.raises(SupervisorError, match="missing or altered"):
            sup.verify_ledger()
    verdict = sup.teardown()
    assert not verdict.cleanup_complete and "ledger_missing" in verdict.reasons


def test_nothing_spawned_is_clean_and_recorded(engine, attempt):
    attempt_id, root, _ = attempt
    with Supervisor(engine, attempt_id, root) as sup:
        pass
    assert sup.teardown().outcome == "clean"
    row = repository.get_attempt(engine, attempt_id)
    assert row.cleanup_complete is True and row.private_root == str(root.path)


def test_one_supervisor_per_root(engine, attempt):
    attempt_id, root, _ = attempt
    with Supervisor(engine, attempt_id, root):
        with pytest.raises(SupervisorError, match="holds this private root"):
            Supervisor(engine, attempt_id, root).__enter__()
