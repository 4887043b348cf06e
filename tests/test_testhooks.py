"""The step-boundary test hook: what it accepts, and that it stops the process on the N-th pass."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from campaign import testhooks


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("client", ("client", 1, signal.SIGKILL)),
        ("ledger:3", ("ledger", 3, signal.SIGKILL)),
        ("exit:1:TERM", ("exit", 1, signal.SIGTERM)),
        ("between::INT", ("between", 1, signal.SIGINT)),
    ],
)
def test_a_boundary_an_occurrence_and_a_signal(value, parsed):
    assert testhooks.parse(value) == parsed


@pytest.mark.parametrize("value", [None, "", "nowhere", "client:x", "client:1:USR1", "Client"])
def test_anything_else_never_fires(value):
    assert testhooks.parse(value) is None


PASSES = "from campaign import testhooks\nfor i in range(5):\n    print(i, flush=True)\n    testhooks.reached('between')\n    testhooks.reached('client')\n"


def test_the_nth_pass_signals_this_process_and_no_other_boundary_does():
    env = {"CAMPAIGN_TEST_STOP_AT": "between:3", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", PASSES], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGKILL
    assert done.stdout.split() == ["0", "1", "2"]
    unset = subprocess.run([sys.executable, "-c", PASSES], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)
    assert unset.returncode == 0 and unset.stdout.split() == ["0", "1", "2", "3", "4"]
