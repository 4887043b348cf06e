"""Two connections reading one state of the store, on both backends, while a writer commits."""

from __future__ import annotations

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
        repository.NewCampaign(kind="campaign", state="running", live=True, agent="offline", seed=1, experiment={}, experiment_digest="0" * 64),
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
