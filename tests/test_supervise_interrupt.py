"""SIGINT/SIGTERM: teardown still runs, the outcome is recorded, the runner exits 130."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from helpers import procs
from helpers.procs import RUNNER, alive, wait_for, wait_pids

from campaign.errors import Interrupted
from campaign.store import repository
from campaign.supervise import critical, interruptible

pids_file = procs.pids_file  # fixture
tmp_base = procs.tmp_base  # fixture


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_runner_tears_down_persists_and_exits_130(engine, db_url, make_attempt, tmp_base, pids_file, sig):
    attempt_id, trial = make_attempt()
    ready = tmp_base / "ready"
    runner = subprocess.Popen(
        [*RUNNER, db_url, str(attempt_id), str(trial.id), str(tmp_base), str(pids_file), str(ready), "auto"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        rows = wait_pids(pids_file, ["self", "self", "self", "escaped"], timeout=30)
        wait_for(lambda: ready.exists() and ready.read_text())
        runner.send_signal(sig)
        out, _ = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == 130, out
    assert "interrupted; teardown" in out
    assert all(not alive(pid, ticks) for _l, pid, ticks in rows)
    attempt = repository.get_attempt(engine, attempt_id)
    assert attempt.status == "interrupted"
    assert attempt.cleanup_complete is True and attempt.teardown_outcome in ("clean", "forced")
    assert all(r.state == "gone" for r in repository.ledger_for(engine, attempt_id))


def test_signal_inside_a_critical_section_is_deferred_to_its_end():
    steps = []
    with interruptible() as intr:
        with pytest.raises(Interrupted):
            with critical():
                signal.raise_signal(signal.SIGINT)
                steps.append("finished the critical work")
                with critical():  # nested sections defer to the outermost end
                    steps.append("nested")
                steps.append("after nested")
            steps.append("never reached")
        assert intr.interrupted and intr.signal == signal.SIGINT
    assert steps == ["finished the critical work", "nested", "after nested"]


def test_only_the_first_signal_raises_and_handlers_are_restored():
    before = signal.getsignal(signal.SIGTERM)
    with interruptible() as outer:
        with interruptible() as inner:  # re-entrant: one shared state, handlers installed once
            assert inner is outer
            with pytest.raises(Interrupted, match="SIGTERM"):
                signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGINT)  # already delivered: remembered, not raised again
            with critical():
                pass
        assert outer.signal == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before


def test_outside_a_critical_section_the_signal_raises_at_once():
    with interruptible():
        with pytest.raises(Interrupted):
            signal.raise_signal(signal.SIGINT)
            raise AssertionError("not reached")


HOLD = """
import signal, sys
from campaign.errors import Interrupted
from campaign.supervise.interrupt import hold, interruptible
intr = hold()
with interruptible():
    pass
assert signal.getsignal(signal.SIGTERM) == intr._handle, "a nested interruptible() restored the defaults"
try:
    signal.raise_signal(signal.SIGTERM)
    sys.exit("not raised")
except Interrupted:
    print("raised")
intr.close()
signal.raise_signal(signal.SIGINT)
print("closed: remembered, not raised")
"""


def test_held_handlers_outlive_every_interruptible_and_close_ends_them_quietly():
    done = subprocess.run([sys.executable, "-c", HOLD], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["raised", "closed: remembered, not raised"]


def test_the_command_line_entry_installs_them_before_importing_any_command():
    # Everything a command needs (click, SQLAlchemy, the lanes) takes most of a second to
    # import: a stop in that window must already be an operator's stop.
    probe = "import sys, campaign.cli; print(sorted(m for m in ('click', 'sqlalchemy', 'campaign.lanes') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
