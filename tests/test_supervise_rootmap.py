"""A member started with a root map sees the mapped paths (/app, /tests, /logs/verifier)
in a root of its own, while the host's tree is unchanged and nothing leaks out of it.

Needs what the engine needs for Harbor tasks: a runner holding CAP_SYS_ADMIN."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from campaign import isolation
from campaign.supervise import Supervisor, SupervisorError, TeardownBudget, confine, rootmap
from campaign.supervise import pinned

FAST = TeardownBudget(grace=0.5, kill_wait=3.0, run_grace=0.3)

pytestmark = pytest.mark.skipif(not (confine.available() and rootmap.available()), reason="root maps need CAP_SYS_ADMIN and a known pivot_root")

LOOK = textwrap.dedent(
    """
    import json, os, sys
    out = {"cwd": os.getcwd(), "app": sorted(os.listdir("/app")), "tests": sorted(os.listdir("/tests")),
           "root_has_usr": os.path.isdir("/usr/bin")}
    open("/logs/verifier/reward.txt", "w").write("1\\n")
    open("/app/made-inside.txt", "w").write("from the member\\n")
    try:
        open("/tests/planted.txt", "w").write("x")
        out["tests_writable"] = True
    except OSError:
        out["tests_writable"] = False
    mounts = open("/proc/self/mountinfo").read()
    out["scratch_visible"] = sys.argv[1] in mounts
    print(json.dumps(out))
    """
)


def _dir(root, name: str):
    path = root.path / name
    path.mkdir(mode=0o700)
    return path, pinned.identity(os.lstat(path))


def test_a_mapped_member_sees_app_tests_and_logs_and_the_host_sees_nothing_new(engine, make_attempt, tmp_path):
    attempt_id, _ = make_attempt()
    root = isolation.create_private_root(tmp_path)
    (root.cwd / "main.py").write_text("print('fixture')\n")
    tests, tests_id = _dir(root, "verifier-tests")
    (tests / "test.sh").write_text("exit 0\n")
    logs, logs_id = _dir(root, "verifier-logs")
    scratch, scratch_id = _dir(root, "rootmap")
    work_id = pinned.identity(os.lstat(root.cwd))
    binds = (
        rootmap.Bind(root.cwd, "app", work_id),
        rootmap.Bind(tests, "tests", tests_id, readonly=True),
        rootmap.Bind(logs, "logs/verifier", logs_id),
    )
    mapped = rootmap.plan(scratch, scratch_id, binds, "/app")
    out = root.path / "look.out"
    with Supervisor(engine, attempt_id, root, budget=FAST) as sup:
        result = sup.run("verifier", [sys.executable, "-c", LOOK, str(scratch)], cwd=root.cwd, env={"PATH": os.environ["PATH"]}, timeout=60, stdout=out, root_map=mapped)
    assert result.exit_code == 0, (root.path / "look.out").read_text()
    seen = json.loads(out.read_text())
    assert seen["cwd"] == "/app" and seen["app"] == ["main.py"] and seen["tests"] == ["test.sh"] and seen["root_has_usr"]
    assert seen["tests_writable"] is False  # the hidden tests are read-only to what runs them
    assert seen["scratch_visible"] is False  # the new root does not show itself inside itself
    # What the member wrote through the mapped paths landed in the private root, nowhere else.
    assert (logs / "reward.txt").read_text() == "1\n"
    assert (root.cwd / "made-inside.txt").read_text() == "from the member\n"
    assert not os.path.exists("/app/made-inside.txt")
    assert list(scratch.iterdir()) == []  # the host sees the scratch directory as it was


def test_a_swapped_working_copy_aborts_the_spawn(engine, make_attempt, tmp_path):
    attempt_id, _ = make_attempt()
    root = isolation.create_private_root(tmp_path)
    scratch, scratch_id = _dir(root, "rootmap")
    pinned_work = pinned.identity(os.lstat(root.cwd))
    os.rename(root.cwd, root.path / "elsewhere")
    root.cwd.mkdir()  # a different directory now holds the name the map binds
    mapped = rootmap.plan(scratch, scratch_id, (rootmap.Bind(root.cwd, "app", pinned_work),), "/app")
    with Supervisor(engine, attempt_id, root, budget=FAST) as sup:
        with pytest.raises(Exception, match="could not start"):
            sup.run("client", ["true"], cwd=root.path, env={"PATH": os.environ["PATH"]}, timeout=30, root_map=mapped)


def test_a_root_map_needs_confined_members(engine, make_attempt, tmp_path):
    attempt_id, _ = make_attempt()
    root = isolation.create_private_root(tmp_path)
    scratch, scratch_id = _dir(root, "rootmap")
    mapped = rootmap.plan(scratch, scratch_id, (), "/")
    with Supervisor(engine, attempt_id, root, budget=FAST, confine_members=False) as sup:
        with pytest.raises(SupervisorError, match="CAP_SYS_ADMIN"):
            sup.run("client", ["true"], cwd=root.path, env={"PATH": os.environ["PATH"]}, timeout=30, root_map=mapped)
