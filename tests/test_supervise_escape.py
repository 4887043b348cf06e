"""Issue 13 item 5: a descendant that leaves the attempt cgroup and keeps forking
short-lived generations must never end in ``cleanup_complete = True`` while it runs.

Confined members (the default where the runner may confine) cannot leave at all:
the write to the root cgroup is refused, the chain stays in the attempt cgroup,
and ``cgroup.kill`` ends it with a proof. Unconfined (``confine_members=False``,
as on a runner without CAP_SYS_ADMIN) the escape succeeds and must be a breach."""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap
import time
import uuid

import pytest
from helpers.procs import reap_exited_children

from campaign import isolation
from campaign.supervise import Supervisor, TeardownBudget
from campaign.supervise import confine
from campaign.supervise.cgroup import AttemptCgroup, cgroup2_mount
from campaign.supervise.discovery import Discovery
from campaign.supervise.members import Members
from campaign.supervise.procfs import ProcFS

FAST = TeardownBudget(grace=0.5, kill_wait=3.0, run_grace=0.3)

# The client forks a child that leaves its session and the attempt cgroup, then
# hands over to a chain of generations that each live 5-20 ms and fork the next.
ESCAPER = textwrap.dedent(
    """
    import os, random, sys, time
    marker, root_procs, flag = sys.argv[1], sys.argv[2], sys.argv[3]
    low, high = float(sys.argv[4]), float(sys.argv[5])
    if os.fork() == 0:
        os.setsid()
        try:
            with open(root_procs, "w") as fh:
                fh.write(str(os.getpid()))
            moved = ""
        except OSError as exc:
            moved = f"refused: {exc.strerror}\\n"
        with open(flag, "w") as fh:
            fh.write(moved + open("/proc/self/cgroup").read())
        end = time.monotonic() + 20.0
        while time.monotonic() < end and not os.path.exists(flag + ".stop"):
            try:
                if os.fork() != 0:
                    os._exit(0)  # the parent generation ends; the child carries on
            except OSError:
                os._exit(1)
            time.sleep(random.uniform(low, high))
        os._exit(0)
    os._exit(0)
    """
)


def _marked(marker: str) -> list[int]:
    """Pids whose command line carries this test's marker (only processes it started)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    out.append(int(name))
        except OSError:
            continue
    return out


def _kill_marked(marker: str, seconds: float = 5.0, stop=None) -> None:
    """Stop what this test started: ask the chain to stop (it checks ``stop`` every
    generation), then SIGKILL, through a pidfd, any process still carrying the marker."""
    if stop is not None:
        stop.write_text("stop")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pids = _marked(marker)
        if not pids:
            return
        for pid in pids:
            try:
                fd = os.pidfd_open(pid)
            except OSError:
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read():  # still the same, marked process
                        signal.pidfd_send_signal(fd, signal.SIGKILL)
            except OSError:
                pass
            finally:
                os.close(fd)
        time.sleep(0.01)


def _chain_alive(marker: str, window: float = 0.3) -> bool:
    deadline = time.monotonic() + window
    while time.monotonic() < deadline:
        if _marked(marker):
            return True
        time.sleep(0.005)
    return False


@pytest.fixture
def escape_setup(engine, make_attempt, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("leaving the attempt cgroup for the root cgroup needs root")
    mount = cgroup2_mount()
    if not mount or not os.access(os.path.join(mount, "cgroup.procs"), os.W_OK):
        pytest.skip("no writable cgroup v2 root")
    probe = AttemptCgroup.create(f"campaign-probe-{os.getpid()}")
    if probe is None:
        pytest.skip("no attempt cgroup (cgroup v2 with cgroup.kill) available")
    probe.remove()
    attempt_id, _ = make_attempt()
    root = isolation.create_private_root(tmp_path)
    env = isolation.build_env(root, os.environ)
    marker = f"escape-marker-{uuid.uuid4().hex}"
    yield attempt_id, root, env, marker, os.path.join(mount, "cgroup.procs"), tmp_path / "escaped"
    _kill_marked(marker, seconds=20.0, stop=tmp_path / "escaped.stop")
    assert not _marked(marker), "a marked escape process is still running after cleanup"
    # The chain's killed orphans were handed to this (subreaper) process: reap them, or
    # every later test's "no child left" proof fails on them.
    reap_exited_children(seconds=2.0)


def run_escape(engine, attempt_id, root, env, marker, root_procs, flag, *, containment="cgroup2", nap=(0.005, 0.020), confined=False):
    """Start the escaper in a supervisor; return (verdict, chain alive after teardown, provable)."""
    provable = not reap_exited_children()
    with Supervisor(engine, attempt_id, root, budget=FAST, containment=containment, confine_members=confined) as sup:
        client = sup.start("client", [sys.executable, "-c", ESCAPER, marker, root_procs, str(flag), str(nap[0]), str(nap[1])], env=env)
        assert client.wait(10) == 0
        deadline = time.monotonic() + 10
        while not (flag.exists() and flag.read_text()):
            assert time.monotonic() < deadline, "the escaper never tried to leave the cgroup"
            time.sleep(0.01)
        if confined:
            # Refused, and its own view of its cgroup is the namespace root: it is still inside.
            assert flag.read_text().startswith("refused: Read-only file system"), flag.read_text()
        else:
            assert "0::/\n" in flag.read_text()  # it really is in the root cgroup now
        time.sleep(0.3)  # let the chain run a few generations
    verdict = sup.teardown()
    return verdict, _chain_alive(marker), provable


@pytest.mark.parametrize("nap", [pytest.param((0.005, 0.020), id="5-20ms"), pytest.param((0.0005, 0.003), id="0.5-3ms")])
def test_a_confined_member_cannot_leave_its_cgroup_and_is_proven_gone(engine, escape_setup, nap):
    if not confine.available():
        pytest.skip("confinement needs CAP_SYS_ADMIN in the runner")
    attempt_id, root, env, marker, root_procs, flag = escape_setup
    verdict, alive_after, _ = run_escape(engine, attempt_id, root, env, marker, root_procs, flag, nap=nap, confined=True)
    assert not alive_after, f"the chain outlived teardown ({verdict})"
    # The chain never left, so cgroup.kill and an empty, removed cgroup prove it gone.
    assert verdict.cleanup_complete and verdict.outcome in ("clean", "forced"), verdict
    assert "escaped_cgroup" not in verdict.reasons


def test_a_confined_member_cannot_mount_or_regain_capabilities(engine, make_attempt, tmp_path):
    if os.geteuid() != 0 or not confine.available():
        pytest.skip("confinement needs root with CAP_SYS_ADMIN")
    attempt_id, _ = make_attempt()
    root = isolation.create_private_root(tmp_path)
    env = isolation.build_env(root, os.environ)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary").write_text("keep")
    target = tmp_path / "target"
    target.mkdir()
    report = tmp_path / "report.json"
    probe = textwrap.dedent(
        f"""
        import ctypes, json, os
        libc = ctypes.CDLL(None, use_errno=True)
        out = {{}}
        out["bind_mount"] = libc.mount({str(outside).encode()!r}, {str(target).encode()!r}, None, 4096, None) == 0
        out["unshare_mount_ns"] = libc.unshare(0x00020000) == 0
        out["setns_host"] = False
        try:
            fd = os.open("/proc/1/ns/mnt", os.O_RDONLY)
            out["setns_host"] = libc.setns(fd, 0) == 0
        except OSError:
            pass
        status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
        out["cap_sys_admin"] = bool(int(status["CapBnd"].strip(), 16) >> 21 & 1) or bool(int(status["CapEff"].strip(), 16) >> 21 & 1)
        out["cgroup_view"] = open("/proc/self/cgroup").read()
        json.dump(out, open({str(report)!r}, "w"))
        """
    )
    with Supervisor(engine, attempt_id, root, budget=FAST) as sup:
        assert sup.start("client", [sys.executable, "-c", probe], env=env).wait(10) == 0
    assert sup.teardown().cleanup_complete
    seen = json.loads(report.read_text())
    assert seen["bind_mount"] is False and seen["unshare_mount_ns"] is False and seen["setns_host"] is False, seen
    assert seen["cap_sys_admin"] is False
    # Its cgroup namespace root is the attempt cgroup.
    assert "0::/" in seen["cgroup_view"].splitlines(), seen["cgroup_view"]
    assert os.listdir(target) == [] and (outside / "canary").read_text() == "keep"


NAPS = [pytest.param((0.005, 0.020), id="5-20ms"), pytest.param((0.0005, 0.003), id="0.5-3ms")]
# Generations this short can outrun the drain's kills on a loaded machine: the verdict
# still never says complete (asserted always), but stopping them is not guaranteed.
FAST_CHAIN = (0.0005, 0.003)


@pytest.mark.parametrize("nap", NAPS)
def test_cgroup_escapee_forking_generations_is_never_clean(engine, escape_setup, nap):
    attempt_id, root, env, marker, root_procs, flag = escape_setup
    verdict, alive_after, provable = run_escape(engine, attempt_id, root, env, marker, root_procs, flag, nap=nap)
    # Fail closed: leaving the attempt cgroup is a containment breach ...
    assert not verdict.cleanup_complete, verdict
    assert verdict.outcome == "unverified" and {"escaped_cgroup", "survivors"} & set(verdict.reasons), verdict
    # ... and the chain, found through the subreaper, was stopped (when the runner's
    # children can be proven gone at all).
    assert not (provable and alive_after and nap != FAST_CHAIN), "the escaped chain outlived teardown"


@pytest.mark.parametrize(
    "nap",
    [
        NAPS[0],
        pytest.param(
            FAST_CHAIN,
            id="0.5-3ms",
            # Known gap (open issue 13): without a cgroup, and with the runner holding other
            # live children (as a test process may), no kernel proof is possible and a chain
            # this fast can slip past every scan.
            marks=pytest.mark.xfail(reason="sub-3 ms chain without a cgroup can evade the scan-only fallback", strict=False),
        ),
    ],
)
def test_forking_chain_is_stopped_and_proven_gone_without_a_cgroup(engine, escape_setup, nap):
    """Without a cgroup there is no breach to see: the final drain alone must stop the
    chain, and a complete verdict needs the kernel's word that no child is left."""
    attempt_id, root, env, marker, root_procs, flag = escape_setup
    verdict, alive_after, provable = run_escape(engine, attempt_id, root, env, marker, root_procs, flag, containment="subreaper-pidfd", nap=nap)
    # Never "complete" while the chain runs on; with a provable runner it is also stopped.
    assert not (verdict.cleanup_complete and alive_after), verdict
    assert not (provable and alive_after and nap != FAST_CHAIN), f"the chain outlived teardown ({verdict})"
    assert verdict.cleanup_complete or "survivors" in verdict.reasons, verdict


def test_attempt_cgroup_contains_matches_its_own_path_only():
    group = AttemptCgroup("/sys/fs/cgroup/campaign.attempts/attempt-7-abc")
    assert group.contains("/campaign.attempts/attempt-7-abc")
    assert group.contains("/campaign.attempts/attempt-7-abc/nested")
    assert group.contains("/outer/campaign.attempts/attempt-7-abc")  # seen from a wider cgroup namespace
    assert not group.contains("/")
    assert not group.contains("/campaign.attempts/attempt-7-abcd")
    assert not group.contains("/campaign.attempts/attempt-8-abc")


def _zombie(cgroup: AttemptCgroup | None) -> int:
    """A child of this test that exits at once (inside ``cgroup`` when given) and is left
    unreaped: a zombie, as a chain's dead generation is until the runner reaps it."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.read(read, 1)
        os._exit(0)
    if cgroup is not None:
        cgroup.add(pid)
    os.write(write, b"x")
    os.close(read), os.close(write)
    deadline = time.monotonic() + 5
    while ProcFS().stat(pid) is None or not ProcFS().stat(pid).exited:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    return pid


def test_a_zombie_outside_the_cgroup_is_a_breach_and_one_that_died_inside_is_not(tmp_path):
    """Generations of 0.5-3 ms are dead before any check reaches them (the escape test
    above failed 2 runs in 8 under load before this): the zombie, which keeps the cgroup
    it died in until it is reaped, is then the only trace of the breach. One that died
    inside the attempt cgroup is none, also once that cgroup is removed (its path then
    reads '... (deleted)')."""
    if os.geteuid() != 0 or not cgroup2_mount():
        pytest.skip("needs root and a cgroup v2 mount")
    cgroup = AttemptCgroup.create(f"campaign-zombie-{uuid.uuid4().hex[:8]}")
    if cgroup is None:
        pytest.skip("no attempt cgroup (cgroup v2 with cgroup.kill) available")
    inside, outside = _zombie(cgroup), _zombie(None)
    try:
        assert cgroup.remove()  # a zombie does not populate it
        proc = ProcFS()
        found = Discovery(Members(None, proc, linux=True), lambda line: None, None, cgroup=cgroup, since=0, me=os.getpid())
        found.check_exited(proc.stat(inside))
        assert found.escaped == set()
        found.check_exited(proc.stat(outside))
        assert found.escaped == {(outside, proc.stat(outside).start_ticks)}
    finally:
        for pid in (inside, outside):
            os.waitpid(pid, 0)
