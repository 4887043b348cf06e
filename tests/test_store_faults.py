"""A store that fails while a campaign runs is one line naming it, never a traceback.

Real runner processes against real stores: SQLite held locked by another process past
the runner's busy timeout (the store URL's ``?timeout=`` makes it short), a SQLite
store on a small tmpfs that runs out of room, and a PostgreSQL server of our own
stopped mid-campaign. Each time: one ``Error:`` line on stderr that names the store,
exit 1 ("the engine refused or failed", docs/reliability.md), no traceback; and once the
store is back, ``--resume`` (and the steps it prints) finishes the campaign.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.procs import wait_for
from sqlalchemy.exc import OperationalError
from test_campaign_interruptions import SLOW_AGENT, wait_for_running_attempt

from campaign.errors import Interrupted
from campaign.store import scope
from campaign.store.engine import make_engine, resolve_url

TASKS = "semver-precedence,invoice-rounding"
# Room for the SQLite -shm a runner maps when it opens a WAL store, and not one page more:
# the store opens, and its first write (a WAL frame) finds the disk full.
SHM_ROOM = 32 * 1024


def campaign(out: Path, db: str, *extra: str, agent: Path | None = None) -> list[str]:
    by = ["--agent", str(agent)] if agent is not None else []
    return [sys.executable, "-m", "campaign", "coding", "--campaign", "--tasks", TASKS, "--repetitions", "1", *by, "--output-dir", str(out), "--db", db, "--live", *extra]


def env_for(tmp_path: Path) -> dict[str, str]:
    runner_tmp = tmp_path / "runner-tmp"
    runner_tmp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(runner_tmp)}


def one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, stderr
    return errors[0]


def resume_to_the_end(argv: list[str], env: dict[str, str]) -> None:
    """``--resume``; when it says the campaign is blocked (an attempt row the failure left
    running), the steps it prints, followed literally, finish the experiment."""
    resumed = subprocess.run([*argv, "--resume"], env=env, capture_output=True, text=True, timeout=300)
    if resumed.returncode == 0:
        return
    assert resumed.returncode == 1 and "admits no more work" in resumed.stderr, resumed.stderr
    lines = resumed.stderr.splitlines()
    steps = lines[lines.index(next(line for line in lines if line.startswith("Next:"))) + 1 :]
    assert steps
    for step in steps:
        done = subprocess.run(shlex.split(step), env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def verified(db: str) -> None:
    check = subprocess.run([sys.executable, "-m", "campaign", "verify", "--db", db], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.fixture
def slow_agent(tmp_path: Path) -> Path:
    path = tmp_path / "slow.toml"
    path.write_text(SLOW_AGENT)
    return path


# --- SQLite locked past the busy timeout -------------------------------------------------

HOLD_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
"""


@contextlib.contextmanager
def write_lock(store: Path) -> Iterator[None]:
    """Another process holds a write transaction on ``store`` until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


def test_a_store_locked_mid_attempt_stops_the_run_in_one_line_and_resume_finishes_it(tmp_path, slow_agent):
    out = tmp_path / "out"
    store = out / "campaign.db"
    db = f"sqlite:///{store}?timeout=0.2"
    argv = campaign(out, db, agent=slow_agent)
    runner = subprocess.Popen(argv, env=env_for(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_running_attempt(out)
    with write_lock(store):
        _, stderr = runner.communicate(timeout=120)
    assert runner.returncode == 1, stderr
    line = one_error_line(stderr)
    assert f"the store at {store} stayed locked by another process past its busy timeout (database is locked)" in line, line
    assert "--resume" in line and "?timeout" not in line
    resume_to_the_end(argv, env_for(tmp_path))
    verified(db)


def test_a_store_locked_before_the_command_starts_is_one_line_and_changes_nothing(tmp_path):
    out = tmp_path / "out"
    store = tmp_path / "store.db"
    db = f"sqlite:///{store}?timeout=0.2"
    assert subprocess.run(campaign(out, db), env=env_for(tmp_path), capture_output=True, timeout=300).returncode == 0
    before = store.read_bytes()
    with write_lock(store):
        locked = subprocess.run([*campaign(out, db), "--resume"], env=env_for(tmp_path), capture_output=True, text=True, timeout=120)
    assert locked.returncode == 1, locked.stderr
    assert f"the store at {store} stayed locked" in one_error_line(locked.stderr)
    assert store.read_bytes() == before


def test_a_busy_timeout_that_is_not_a_number_of_seconds_is_bad_input(tmp_path):
    out = tmp_path / "out"
    refused = subprocess.run(campaign(out, f"sqlite:///{tmp_path / 'store.db'}?timeout=soon"), env=env_for(tmp_path), capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2, refused.stderr
    assert "--db" in one_error_line(refused.stderr) and "timeout" in refused.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runner-tmp"]


# --- a full disk ---------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs of our own (a real filesystem that fills up), where mounting is allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(mount)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"this machine does not let the tests mount a tmpfs ({made.stderr.strip() or made.returncode})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, *, leave: int) -> Path:
    """Fill ``disk`` up page by page, then give back ``leave`` bytes."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while os.write(fd, bytes(4096)) == 4096:
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    os.truncate(filler, filler.stat().st_size - leave)
    return filler


def test_a_full_disk_stops_the_run_in_one_line_and_leaves_the_store_resumable(tmp_path, small_disk):
    out = tmp_path / "out"
    store = small_disk / "campaign.db"
    db = str(store)
    argv = campaign(out, db)
    # Stopped after its first trial, so that work is left for the runs below.
    first = subprocess.run(argv, env={**env_for(tmp_path), "CAMPAIGN_TEST_STOP_AT": "between:1:INT"}, capture_output=True, text=True, timeout=300)
    assert first.returncode == 130, first.stderr
    filler = fill(small_disk, leave=SHM_ROOM)
    before = store.read_bytes()
    full = subprocess.run([*argv, "--resume"], env=env_for(tmp_path), capture_output=True, text=True, timeout=300)
    assert full.returncode == 1, full.stderr
    line = one_error_line(full.stderr)
    assert f"the store at {store} could not write: its disk is full (database or disk is full); free space there" in line, line
    assert store.read_bytes() == before
    filler.unlink()
    resume_to_the_end(argv, env_for(tmp_path))
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT state FROM campaigns ORDER BY id DESC LIMIT 1").fetchall() == [("completed",)]
    verified(db)


# --- a PostgreSQL server stopped mid-campaign ----------------------------------------


class Cluster:
    """A throwaway PostgreSQL cluster on loopback, started and stopped as scripts/test.sh does."""

    def __init__(self, bindir: Path, home: Path, port: int) -> None:
        self.bindir, self.home, self.port = bindir, home, port
        self.as_server = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://campaign@127.0.0.1:{self.port}/postgres"

    def pg_ctl(self, *args: str) -> None:
        subprocess.run([*self.as_server, str(self.bindir / "pg_ctl"), "-D", str(self.home / "data"), *args], cwd="/", check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self.pg_ctl("-l", str(self.home / "log"), "-w", "-o", f"-h 127.0.0.1 -p {self.port} -k {self.home} -F", "start")

    def stop(self) -> None:
        self.pg_ctl("-m", "immediate", "-w", "stop")


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    bindirs = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    if not bindirs or (os.geteuid() == 0 and shutil.which("runuser") is None):
        if os.environ.get("CAMPAIGN_REQUIRE_POSTGRES"):
            pytest.fail("CAMPAIGN_REQUIRE_POSTGRES is set but there are no PostgreSQL server binaries")
        pytest.skip("no PostgreSQL server binaries to start a cluster of our own")
    pytest.importorskip("psycopg")
    # Directly under /tmp: the server's own user must reach it (pytest's tmp_path is private to us).
    home = Path(tempfile.mkdtemp(prefix="campaign-test-pg-faults."))
    try:
        if os.geteuid() == 0:
            shutil.chown(home, "postgres")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = Cluster(bindirs[-1], home, port)
        initdb = [*server.as_server, str(server.bindir / "initdb"), "-D", str(home / "data"), "-A", "trust", "-U", "campaign", "--no-sync"]
        subprocess.run(initdb, cwd="/", check=True, capture_output=True, timeout=300)
        server.start()
        try:
            yield server
        finally:
            with contextlib.suppress(subprocess.SubprocessError):
                server.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def pg_count(url: str, sql: str) -> int | None:
    """One number from the store, or None while the server cannot answer."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text(sql)).scalar_one())
    except Exception:  # noqa: BLE001 - not there yet (the schema, the server)
        return None
    finally:
        engine.dispose()


def test_a_password_in_the_store_url_never_reaches_the_line():
    pytest.importorskip("psycopg")
    from campaign.errors import StoreError
    from campaign.store import repository

    # Nothing listens on port 1: the first read finds no server.
    engine = make_engine(resolve_url("postgresql+psycopg://me:s3cret-pw@127.0.0.1:1/campaigns?connect_timeout=2"))
    try:
        with pytest.raises(StoreError) as caught:
            repository.latest_campaign(engine)
    finally:
        engine.dispose()
    line = str(caught.value)
    assert "s3cret-pw" not in line and "\n" not in line
    assert line.startswith("the store at postgresql+psycopg://me:***@127.0.0.1:1/campaigns?connect_timeout=2 cannot be reached (")


def test_a_postgresql_server_stopped_mid_campaign_is_one_line_and_resume_finishes_it(tmp_path, slow_agent, cluster):
    out = tmp_path / "out"
    argv = campaign(out, cluster.url, agent=slow_agent)
    runner = subprocess.Popen(argv, env=env_for(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The first trial recorded, the next attempt's client started: stop the server under it.
    wait_for(lambda: (pg_count(cluster.url, "SELECT count(*) FROM attempts WHERE status = 'finished'") or 0) >= 1, timeout=120)
    wait_for(
        lambda: pg_count(cluster.url, "SELECT count(*) FROM attempts JOIN ledger ON ledger.attempt_id = attempts.id WHERE attempts.status = 'running' AND ledger.role = 'client'"),
        timeout=120,
    )
    cluster.stop()
    _, stderr = runner.communicate(timeout=120)
    assert runner.returncode == 1, stderr
    line = one_error_line(stderr)
    assert f"the store at {cluster.url} cannot be reached" in line and "check that its server is running" in line, line
    cluster.start()
    resume_to_the_end(argv, env_for(tmp_path))
    assert pg_count(cluster.url, "SELECT count(*) FROM campaigns WHERE state = 'completed'") == 1
    verified(cluster.url)


def test_a_stop_signal_the_driver_wrapped_is_still_a_stop_not_a_failing_store(tmp_path):
    # A SIGINT landing inside a driver call came back wrapped in the driver's error and
    # was reported as "the store failed (received SIGINT)", exit 1 instead of 130.
    engine = make_engine(resolve_url(str(tmp_path / "store.db")))
    try:
        with pytest.raises(Interrupted, match="received SIGINT"):
            with scope.reading(engine):
                raise OperationalError("SELECT 1", {}, Interrupted("received SIGINT"))
    finally:
        engine.dispose()
