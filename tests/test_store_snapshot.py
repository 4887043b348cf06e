"""Two connections reading one state of the store, on both backends, while a writer commits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest
from sqlalchemy import func, select, update

from campaign.schedule import build_schedule
from campaign.store import repository, snapshot
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import open_store
from campaign.store.models import Trial


@pytest.fixture
def store(backend_url):
    engine = open_store(backend_url)
    yield engine
    engine.dispose()


def _campaign(engine) -> int:
    return repository.create_campaign(
        engine,
        repository.NewCampaign(kind="campaign", state="running", live=True, agent="offline", seed=1, experiment={}),
        build_schedule(["task-a", "task-b"], 2, seed=1),
        model="offline:sim",
        default_provider="offline",
    )


def _finished(conn) -> int:
    return conn.execute(select(func.count()).select_from(Trial).where(Trial.status == "finished")).scalar_one()


def test_the_second_connection_sees_what_the_first_does_while_a_writer_commits(store, backend_url):
    _campaign(store)
    writer = make_engine(resolve_url(backend_url))
    wrote = threading.Event()

    def write() -> None:
        # On SQLite this waits for the readers (they hold the write lock); on PostgreSQL it
        # commits at once, and neither reader may see it.
        with writer.begin() as conn:
            conn.execute(update(Trial).values(status="finished"))
        wrote.set()

    try:
        with snapshot.readers(store) as read:
            assert _finished(read.conn) == 0
            thread = threading.Thread(target=write)
            thread.start()
            wrote.wait(timeout=2 if store.dialect.name == "postgresql" else 0.5)
            assert read.beside(_finished).result() == 0
            assert _finished(read.conn) == 0
        thread.join(timeout=30)
        assert wrote.is_set()
        with store.connect() as conn:
            assert _finished(conn) == 8
    finally:
        writer.dispose()


def test_work_beside_runs_in_order_and_its_failure_reaches_the_caller(store):
    _campaign(store)
    with snapshot.readers(store) as read:
        first = read.beside(lambda conn: conn.execute(select(func.count()).select_from(Trial)).scalar_one())
        broken = read.beside(lambda conn: conn.exec_driver_sql("SELECT no_such_column FROM trials").all())
        assert first.result() == 8
        with pytest.raises(Exception, match="no_such_column"):
            broken.result()


# --- apart: a forked child on a connection of its own ----------------------------------------


def test_work_apart_runs_in_a_child_that_sees_the_state_the_first_connection_sees(store, backend_url):
    _campaign(store)
    writer = make_engine(resolve_url(backend_url))
    try:
        with snapshot.readers(store) as read:
            assert _finished(read.conn) == 0
            if store.dialect.name == "postgresql":
                # Committed after the readers began (SQLite's readers hold the write lock, so
                # there no write can commit until they end): the child must not see it.
                with writer.begin() as conn:
                    conn.execute(update(Trial).values(status="finished"))
            pid, finished = read.apart(lambda conn: (os.getpid(), _finished(conn))).result()
            assert pid != os.getpid() and finished == 0
    finally:
        writer.dispose()


def _in_child(parent: int, then) -> object:
    """A value from the parent; in a child, whatever ``then`` does (raise, die, return junk)."""
    return "parent" if os.getpid() == parent else then()


def test_work_apart_is_rerun_here_when_the_child_gives_no_result(store):
    _campaign(store)
    me = os.getpid()

    def raises():
        raise RuntimeError("only in the child")

    def dies():
        os.kill(os.getpid(), signal.SIGKILL)

    with snapshot.readers(store) as read:
        children = [read.apart(lambda conn, then=then: _in_child(me, then)) for then in (raises, dies, lambda: (lambda: None))]
        assert all(isinstance(c, snapshot.Child) for c in children)
        # A failure, a killed child and a result that does not pickle: each run again here.
        assert [c.result() for c in children] == ["parent", "parent", "parent"]
        # A failure here is the caller's, as with ``beside``.
        broken = read.apart(lambda conn: conn.exec_driver_sql("SELECT no_such_column FROM trials").all())
        with pytest.raises(Exception, match="no_such_column"):
            broken.result()


def test_a_child_is_never_left_behind(store):
    _campaign(store)
    with snapshot.readers(store) as read:
        child = read.apart(lambda conn: signal.pause())
        pid = child._pid
        assert os.waitpid(pid, os.WNOHANG) == (0, 0)  # running, waiting for a signal
    # Leaving the block without asking for the result killed and reaped it.
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_a_process_with_threads_runs_work_apart_in_its_thread(store):
    _campaign(store)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with snapshot.readers(store) as read:
            done = read.apart(lambda conn: (os.getpid(), _finished(conn)))
            assert not isinstance(done, snapshot.Child)
            assert done.result() == (os.getpid(), 0)
    finally:
        stop.set()
        other.join()


def test_work_apart_runs_here_when_no_child_can_be_had(store, backend_url, tmp_path):
    """Out of file descriptors (a real limit, in a process of its own): no pipe, so no
    child; the work runs beside, as in a process with threads, and gives its answer."""
    _campaign(store)
    script = tmp_path / "limited.py"
    script.write_text(
        "import os, resource, sys\n"
        "from campaign.store import snapshot\n"
        "from campaign.store.migrate import open_store\n"
        "from sqlalchemy import text\n"
        "engine = open_store(sys.argv[1])\n"
        "with snapshot.readers(engine) as read:\n"
        "    read.conn.execute(text('SELECT 1')).all()\n"
        "    opened = len(os.listdir('/proc/self/fd'))\n"
        "    resource.setrlimit(resource.RLIMIT_NOFILE, (opened, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))\n"
        "    done = read.apart(lambda conn: (os.getpid(), conn.execute(text('SELECT count(*) FROM trials')).scalar_one()))\n"
        "    print(type(done).__name__, done.result() == (os.getpid(), 8))\n"
    )
    done = subprocess.run([sys.executable, str(script), backend_url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Future", "True"], done.stdout + done.stderr
