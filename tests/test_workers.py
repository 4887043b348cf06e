"""Providers in parallel: local workers on one store (SQLite and PostgreSQL), real processes.

Three workers on a campaign of two providers never run two attempts of one provider at
once and never run a trial twice; a worker killed mid-attempt halts its provider with
its cleanup unverified, and the printed steps finish the experiment; a total spend cap
holds while workers race; the report does not depend on how many workers produced it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.catalogs import offline_copies
from helpers.procs import wait_for
from sqlalchemy import text
from test_provider_faults import Upstream

from campaign.cli import cli
from campaign.store.engine import make_engine, resolve_url

TASKS = "semver-precedence,invoice-rounding"
SLOW_AGENT = (
    'adapter = "generic"\npaid = false\nconfig_env = "CAMPAIGN_AGENT_CONFIG"\napplied_profile_from = "adapter"\nname = "offline"\n'
    'client = ["{python}", "-c", "import os, sys, time; time.sleep(1.5); '
    "os.execv(sys.executable, [sys.executable, '-P', '-m', 'campaign.agents.offline'] + sys.argv[1:])\", "
    '"--task", "{task}", "--prompt-file", "{prompt_file}", "--seed", "{seed}", "--trial-id", "{trial_id}"]\n'
)


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """Two offline providers, alpha and beta: two routes that need no network."""
    path = tmp_path / "providers.toml"
    path.write_text(offline_copies(("alpha", "beta")))
    return path


def command(out: Path, db: str, catalog: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "campaign", "coding", "--campaign", "--providers", "alpha,beta", "--providers-catalog", str(catalog),
            "--tasks", TASKS, "--repetitions", "1", "--output-dir", str(out), "--db", db, "--live", *extra]  # fmt: skip


def env_for(tmp_path: Path) -> dict[str, str]:
    runner_tmp = tmp_path / "runner-tmp"
    runner_tmp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(runner_tmp)}


def rows(db: str, sql: str, **params) -> list[tuple]:
    engine = make_engine(resolve_url(db))
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(sql), params)]
    finally:
        engine.dispose()


def intervals(db: str, campaign_id: int = 1) -> dict[str, list[tuple]]:
    by_provider: dict[str, list[tuple]] = {}
    for provider, position, started, ended, status in rows(
        db,
        "SELECT t.provider, t.position, a.started_at, a.ended_at, a.status FROM attempts a JOIN trials t ON t.id = a.trial_pk"
        " WHERE a.campaign_id = :c ORDER BY a.started_at",
        c=campaign_id,
    ):
        by_provider.setdefault(provider, []).append((position, started, ended, status))
    return by_provider


def test_three_workers_never_run_one_provider_twice_at_once_nor_a_trial_twice(tmp_path, backend_url, catalog):
    out = tmp_path / "out"
    done = subprocess.run(command(out, backend_url, catalog, "--parallel-providers", "3"), env=env_for(tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert rows(backend_url, "SELECT state, stop_reason FROM campaigns") == [("completed", None)]
    per_trial = rows(backend_url, "SELECT trial_pk, count(*) FROM attempts GROUP BY trial_pk")
    assert len(per_trial) == 8 and all(n == 1 for _, n in per_trial)
    spans = intervals(backend_url)
    assert sorted(spans) == ["alpha", "beta"]
    for provider, attempts in spans.items():
        # One at a time, and in schedule order.
        assert [p for p, *_ in attempts] == sorted(p for p, *_ in attempts), provider
        for (_, _, ended, _), (_, started, _, _) in zip(attempts, attempts[1:]):
            assert started >= ended, f"two {provider} attempts overlapped"
    # ... while the two providers did run side by side.
    assert any(a[1] < b[2] and b[1] < a[2] for a in spans["alpha"] for b in spans["beta"]), spans
    assert rows(backend_url, "SELECT count(*) FROM provider_leases WHERE worker_pid IS NOT NULL") == [(0,)]


def test_a_worker_killed_mid_attempt_halts_its_provider_and_the_printed_steps_finish(tmp_path, catalog):
    db = str(tmp_path / "store.db")
    agent = tmp_path / "slow.toml"
    agent.write_text(SLOW_AGENT)
    out = tmp_path / "out"
    argv = command(out, db, catalog, "--agent", str(agent), "--parallel-providers", "2")
    coordinator = subprocess.Popen(argv, env=env_for(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    victim = None
    while victim is None and time.monotonic() < deadline:
        try:
            found = rows(
                db,
                "SELECT l.worker_pid, a.id FROM provider_leases l JOIN trials t ON t.provider = l.provider AND t.campaign_id = l.campaign_id"
                " JOIN attempts a ON a.trial_pk = t.id JOIN ledger g ON g.attempt_id = a.id"
                " WHERE l.provider = 'alpha' AND a.status = 'running' AND g.role = 'client'",
            )
        except Exception:
            found = []
        victim = found[0] if found else None
        time.sleep(0.05)
    assert victim is not None, "no alpha attempt reached its client"
    worker_pid, attempt_id = victim
    os.kill(worker_pid, signal.SIGKILL)
    _, stderr = coordinator.communicate(timeout=300)
    assert coordinator.returncode == 1, stderr
    host = rows(db, "SELECT worker_host FROM provider_leases WHERE provider = 'alpha'")[0][0]
    assert f"provider alpha: worker pid {worker_pid} on host {host} stopped during attempt {attempt_id}" in stderr, stderr
    assert rows(db, "SELECT halted_reason, halted_attempt_id FROM provider_leases WHERE provider = 'alpha'") == [("worker_lost", attempt_id)]
    assert rows(db, "SELECT status, cleanup_complete FROM attempts WHERE id = :a", a=attempt_id) == [("running", 0)]
    # The other provider went on to the end; the halted one admitted nothing more.
    assert rows(db, "SELECT count(*) FROM trials WHERE provider = 'beta' AND status = 'finished'") == [(4,)]
    assert rows(db, "SELECT count(*) FROM attempts a JOIN trials t ON t.id = a.trial_pk WHERE t.provider = 'alpha' AND a.id > :a", a=attempt_id) == [(0,)]
    assert rows(db, "SELECT state, stop_reason FROM campaigns") == [("stopped", "worker_lost")]

    lines = stderr.splitlines()
    steps = [line.strip() for line in lines[lines.index(next(line for line in lines if line.startswith("Next,"))) + 1 :] if line.startswith("  ")]
    follow_up = next(line for line in lines if line.startswith("then continue"))
    steps.append(follow_up.split(": ", 1)[1])
    assert "recover" in steps[0] and "--continue-blocked" in steps[-1], stderr
    for step in steps:
        finished = subprocess.run(shlex.split(step), env=env_for(tmp_path), capture_output=True, text=True, timeout=600)
        assert finished.returncode == 0, (step, finished.stdout, finished.stderr)
    assert rows(db, "SELECT id, state, continues_campaign_id FROM campaigns ORDER BY id") == [(1, "stopped", None), (2, "completed", 1)]
    assert rows(db, "SELECT count(*) FROM trials WHERE campaign_id = 2 AND status = 'finished'") == [(8,)]
    leftover = subprocess.run(["pgrep", "-f", f"campaign.agents.offline.*{tmp_path.name}"], capture_output=True)
    assert leftover.returncode == 1


def _worker_argv(db: str, catalog: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "campaign", "worker", "--db", db, "--campaign-id", "1", "--providers-catalog", str(catalog), *extra]


def test_an_interrupted_runner_waits_for_an_outside_worker_and_that_worker_says_work_is_left(tmp_path, catalog):
    """Ctrl-C on the runner: its local worker stops, the outside worker admits nothing more
    but finishes its attempt, and only then are the reports written; the outside worker then
    says the campaign was interrupted with trials left and exits 1."""
    db = str(tmp_path / "store.db")
    agent = tmp_path / "slow.toml"
    agent.write_text(SLOW_AGENT)
    env = env_for(tmp_path)
    runner = subprocess.Popen(command(tmp_path / "out", db, catalog, "--agent", str(agent), "--parallel-providers", "1"), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    wait_for(lambda: _started(db) is not None, timeout=120)
    outside = subprocess.Popen(_worker_argv(db, catalog, "--agent", str(agent)), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    running = (
        "SELECT count(*) FROM provider_leases l JOIN trials t ON t.provider = l.provider JOIN attempts a ON a.trial_pk = t.id"
        " JOIN ledger g ON g.attempt_id = a.id WHERE a.status = 'running' AND g.role = 'client' AND l.worker_pid IS NOT NULL"
    )
    wait_for(lambda: rows(db, running)[0][0] == 2, timeout=120)
    (outside_attempt,) = rows(db, "SELECT a.id FROM attempts a JOIN trials t ON t.id = a.trial_pk JOIN provider_leases l ON l.provider = t.provider"
                                  " WHERE a.status = 'running' AND l.worker_pid = :pid", pid=outside.pid)[0]  # fmt: skip
    os.killpg(runner.pid, signal.SIGINT)
    _, stderr = runner.communicate(timeout=300)
    assert runner.returncode == 130, stderr
    out, err = outside.communicate(timeout=300)
    assert outside.returncode == 1 and "campaign 1 is interrupted (interrupted) with" in err and "scheduled trial(s) left" in err, (out, err)
    assert rows(db, "SELECT status FROM attempts WHERE id = :a", a=outside_attempt) == [("finished",)]
    assert rows(db, "SELECT count(*) FROM attempts WHERE status = 'running'") == [(0,)]
    assert rows(db, "SELECT count(*) FROM provider_leases WHERE worker_pid IS NOT NULL") == [(0,)]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert sum(v["attempts"] for v in report["variants"]) == rows(db, "SELECT count(*) FROM attempts WHERE status = 'finished'")[0][0]


def test_a_total_cap_holds_while_workers_race(tmp_path, backend_url, catalog):
    out = tmp_path / "out"
    # Through the recording proxy: under a cap, spend no flush proves stops its provider.
    # Each attempt costs about $0.01 to $0.04: the cap holds back some of the eight.
    cap, ceiling = Decimal("0.1"), Decimal("0.05")
    done = subprocess.run(
        command(out, backend_url, catalog, "--agent", "offline-wire", "--parallel-providers", "3", "--max-total-spend-usd", str(cap), "--attempt-ceiling-usd", str(ceiling)),
        env=env_for(tmp_path), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr  # the cap left trials unrun: the run says so
    assert "unfinished: not attempted:" in done.stderr and "spend_limit" in done.stderr
    costs = [Decimal(str(c)) for (c,) in rows(backend_url, "SELECT cost_usd FROM attempts")]
    assert costs and sum(costs) <= cap
    assert rows(backend_url, "SELECT stop_reason FROM campaigns") == [("spend_limit",)]
    assert rows(backend_url, "SELECT count(*) FROM spend_reservations") == [(0,)]
    assert f"spend, all providers: {format(sum(costs).normalize(), 'f')} of {cap:f} USD" in done.stdout


def _comparable(report: dict) -> dict:
    """The report without what timing and storage decide (wall seconds, timestamps, ids,
    and ``attempt_seq``, the order attempts finished in, which parallel workers change;
    the chains' heads, which hash all of them)."""

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if not any(word in k for word in ("wall", "seconds", "_at", "elapsed", "generated", "store", "campaign_id", "attempt_id", "attempt_seq", "chains"))}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(report)


def test_the_report_is_the_same_for_one_runner_on_sqlite_and_three_workers_on_postgresql(tmp_path, catalog, postgres_url):
    reports = []
    for name, db, extra in (("seq", str(tmp_path / "seq.db"), ()), ("par", postgres_url, ("--parallel-providers", "3"))):
        out = tmp_path / name
        done = subprocess.run(command(out, db, catalog, *extra), env=env_for(tmp_path), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        reports.append(json.loads((out / "report.json").read_text()))
    assert _comparable(reports[0]) == _comparable(reports[1])


def test_a_dead_provider_is_halted_for_every_worker_while_the_others_finish(tmp_path, backend_url, catalog, tokenizer_cache, dead_port):
    # A third provider through the recording proxy to its own upstream, where nothing listens.
    port = dead_port.number
    with catalog.open("a") as fh:
        fh.write(
            f'\n[providers.flaky]\nroute = "flaky"\ndefault_model = "synthetic"\nagent = "offline-wire"\nupstream = "http://127.0.0.1:{port}"\n'
            'basis = "synthetic"\nprice_source = "test"\nprice_date = "2026-12-01"\n\n[providers.flaky.prices]\n'
            "uncached_input = 2.5\ncached_input = 0.25\ncache_write = 3.125\noutput = 10.0\n"
        )
    out = tmp_path / "out"
    argv = command(out, backend_url, catalog, "--parallel-providers", "2", "--resume")
    argv[argv.index("alpha,beta")] = "alpha,flaky"
    env = {**env_for(tmp_path), "CAMPAIGN_TOKENIZER_CACHE": str(tokenizer_cache)}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"halted flaky: its upstream 127.0.0.1:{port} refused the connection" in done.stderr, done.stderr
    by_provider = dict(rows(backend_url, "SELECT provider, string_agg(status, ',') FROM trials GROUP BY provider" if backend_url.startswith("postgresql") else "SELECT provider, group_concat(status) FROM trials GROUP BY provider"))
    assert set(by_provider["alpha"].split(",")) == {"finished"} and set(by_provider["flaky"].split(",")) == {"scheduled"}
    assert rows(backend_url, "SELECT state, stop_reason FROM campaigns") == [("stopped", "provider_unavailable")]
    assert rows(backend_url, "SELECT provider, halted_reason FROM provider_leases WHERE halted_reason IS NOT NULL") == [("flaky", "provider_unavailable")]
    assert rows(backend_url, "SELECT count(*) FROM attempts a JOIN trials t ON t.id = a.trial_pk WHERE t.provider = 'flaky'") == [(0,)]
    # The provider is back: the same command (it has --resume) reopens it and finishes.
    dead_port.release()
    upstream = Upstream(port, tmp_path / "upstream.log").start()
    try:
        resumed = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    finally:
        upstream.stop()
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert rows(backend_url, "SELECT state, stop_reason FROM campaigns") == [("completed", None)]
    assert rows(backend_url, "SELECT count(*) FROM trials WHERE status != 'finished'") == [(0,)]
    assert rows(backend_url, "SELECT count(*) FROM provider_leases WHERE halted_reason IS NOT NULL") == [(0,)]


def test_an_outside_worker_whose_breaker_halts_its_provider_says_so_and_exits_3(tmp_path, catalog, tokenizer_cache, dead_port):
    """The halt leaves the provider's trials scheduled: the worker names it and never exits 0."""
    port = dead_port.number  # nothing listens there
    with catalog.open("a") as fh:
        fh.write(
            f'\n[providers.flaky]\nroute = "flaky"\ndefault_model = "synthetic"\nagent = "offline-wire"\nupstream = "http://127.0.0.1:{port}"\n'
            'basis = "synthetic"\nprice_source = "test"\nprice_date = "2026-12-01"\n\n[providers.flaky.prices]\n'
            "uncached_input = 2.5\ncached_input = 0.25\ncache_write = 3.125\noutput = 10.0\n"
        )
    db = str(tmp_path / "store.db")
    argv = command(tmp_path / "out", db, catalog, "--parallel-providers", "1")
    argv[argv.index("alpha,beta")] = "alpha,flaky"
    argv[argv.index("--repetitions") + 1] = "3"
    env = {**env_for(tmp_path), "CAMPAIGN_TOKENIZER_CACHE": str(tokenizer_cache)}
    runner = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        # The runner's one local worker takes alpha first (leases go in name order) and runs its
        # twelve trials: flaky is the outside worker's.
        wait_for(lambda: _started(db) and rows(db, "SELECT worker_pid IS NOT NULL FROM provider_leases WHERE provider = 'alpha'") == [(1,)], timeout=120)
        worker = subprocess.run(_worker_argv(db, catalog, "--providers", "flaky"), env=env, capture_output=True, text=True, timeout=300)
    finally:
        _, runner_err = runner.communicate(timeout=300)
    assert worker.returncode == 3, worker.stdout + worker.stderr
    assert f"halted flaky: its upstream 127.0.0.1:{port} refused the connection" in worker.stderr, worker.stderr
    assert "unfinished: the halted provider's trials are left scheduled" in worker.stderr and "--resume" in worker.stderr
    assert rows(db, "SELECT provider, halted_reason FROM provider_leases WHERE halted_reason IS NOT NULL") == [("flaky", "provider_unavailable")]
    assert runner.returncode == 3, runner_err
    assert rows(db, "SELECT DISTINCT status FROM trials WHERE provider = 'flaky'") == [("scheduled",)]


@pytest.mark.parametrize("providers", ["", " ", "alpha,,beta"])
def test_an_empty_provider_list_is_refused_before_the_store_is_opened(runner, tmp_path, providers):
    result = runner.invoke(cli, ["worker", "--providers", providers, "--db", str(tmp_path / "campaign.db")])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1].startswith("Error: empty provider name in") and "--providers" in result.output
    assert list(tmp_path.iterdir()) == []


# --- the race of issue 22: a runner, its local workers and outside workers ----------------

RACE_PROVIDERS = ("alpha", "beta", "gamma")
RACE_TASK = "semver-precedence"
# Who joins when: (local workers, the attempts started when each outside worker joins),
# from the campaign's first moment to after its last attempt (2 x 3 providers), each mix
# with one and with two local workers on PostgreSQL, the backend workers scale out on;
# SQLite, which serialises every writer on its one file lock, takes each moment with the
# busier mix (two local workers). Chosen, not drawn: twenty seeded draws repeated some
# moments and took 362 s of a worker; these cover every kind of moment once.
_JOINS = ((0,), (3,), (6,), (0, 3), (2, 6), (5, 6))
RACES = tuple(("postgresql", local, joins) for local in (1, 2) for joins in _JOINS) + tuple(("sqlite", 2, joins) for joins in _JOINS)


def race_catalog(path: Path) -> Path:
    path.write_text(offline_copies(RACE_PROVIDERS))
    return path


def race_command(out: Path, db: str, catalog: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "campaign", "coding", "--campaign", "--providers", ",".join(RACE_PROVIDERS), "--providers-catalog", str(catalog),
            "--tasks", RACE_TASK, "--repetitions", "1", "--output-dir", str(out), "--db", db, "--live", *extra]  # fmt: skip


@pytest.fixture(scope="module")
def race_reference(tmp_path_factory) -> dict:
    """The race's campaign run by one runner alone on SQLite: the report every race must equal."""
    base = tmp_path_factory.mktemp("race-reference")
    catalog = race_catalog(base / "providers.toml")
    done = subprocess.run(race_command(base / "out", str(base / "store.db"), catalog), env=env_for(base), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return _comparable(json.loads((base / "out" / "report.json").read_text()))


def _started(db: str) -> int | None:
    """Attempts started so far, or None while the runner has not made the campaign yet."""
    try:
        return rows(db, "SELECT count(*) FROM attempts")[0][0] if rows(db, "SELECT count(*) FROM campaigns")[0][0] else None
    except Exception:  # the store is not migrated yet
        return None


@pytest.mark.parametrize(("backend_url", "local", "joins"), RACES, indirect=["backend_url"],
                         ids=[f"{backend}-{local}local-joins{'-'.join(map(str, joins))}" for backend, local, joins in RACES])  # fmt: skip
def test_outside_workers_joining_at_any_moment_never_close_the_campaign_early(tmp_path, backend_url, race_reference, local, joins):
    """A runner with N local workers and M `campaign worker` processes that join when k
    attempts have started (from the campaign's first moment to after its last attempt):
    every trial one verdict, `completed` only with nothing left, the one-runner report."""
    catalog = race_catalog(tmp_path / "providers.toml")
    env = env_for(tmp_path)
    runner = subprocess.Popen(race_command(tmp_path / "out", backend_url, catalog, "--parallel-providers", str(local)), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    workers = []
    try:
        for k in joins:
            wait_for(lambda: runner.poll() is not None or (_started(backend_url) or -1) >= k, timeout=300)
            if runner.poll() is not None:
                break
            workers.append(subprocess.Popen(_worker_argv(backend_url, catalog), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        _, stderr = runner.communicate(timeout=600)
        assert runner.returncode == 0, stderr
        for w in workers:
            out, err = w.communicate(timeout=600)
            assert w.returncode == 0, (out, err)
    finally:
        for p in (runner, *workers):
            if p.poll() is None:
                p.kill()
                p.wait()
    scenario = f"{local} local, outside joining at {joins}"
    assert rows(backend_url, "SELECT state, stop_reason FROM campaigns") == [("completed", None)], scenario
    assert rows(backend_url, "SELECT status, count(*) FROM trials GROUP BY status") == [("finished", 2 * len(RACE_PROVIDERS))], scenario
    assert rows(backend_url, "SELECT status, count(*) FROM attempts GROUP BY status") == [("finished", 2 * len(RACE_PROVIDERS))], scenario
    assert rows(backend_url, "SELECT count(DISTINCT trial_pk) FROM attempts") == [(2 * len(RACE_PROVIDERS),)], scenario
    assert rows(backend_url, "SELECT count(*) FROM provider_leases WHERE worker_pid IS NOT NULL") == [(0,)], scenario
    assert _comparable(json.loads((tmp_path / "out" / "report.json").read_text())) == race_reference, scenario


# --- a campaign on a task suite (--task-suite) --------------------------------------------


def test_a_worker_needs_the_campaigns_task_suite_and_refuses_a_changed_task_by_name(runner, tmp_path, catalog):
    suite = Path(shutil.copytree(Path(__file__).parent / "suites" / "engine-example", tmp_path / "engine-example"))
    db = str(tmp_path / "store.db")
    started = runner.invoke(cli, ["coding", "--campaign", "--providers", "alpha,beta", "--providers-catalog", str(catalog), "--task-suite", str(suite),
                                  "--tasks", "py-wordcount", "--repetitions", "1", "--output-dir", str(tmp_path / "out"), "--db", db, "--live"])  # fmt: skip
    assert started.exit_code == 0, started.output
    worker = ["worker", "--db", db, "--campaign-id", "1", "--providers-catalog", str(catalog)]
    same = runner.invoke(cli, [*worker, "--task-suite", str(suite)])
    assert same.exit_code == 0, same.output
    missing = runner.invoke(cli, worker)
    assert missing.exit_code == 2 and "the campaign ran the task suite engine-example: give its directory with --task-suite DIR" in missing.output, missing.output
    verifier = suite / "py-wordcount" / "verifier" / "test_wordcount_hidden.py"
    verifier.write_bytes(verifier.read_bytes() + b" ")
    changed = runner.invoke(cli, [*worker, "--task-suite", str(suite)])
    assert changed.exit_code == 2, changed.output
    (line,) = [x for x in changed.output.splitlines() if x.startswith("Error:")]
    assert "would run a different experiment (task_suite.tasks[py-wordcount])" in line


@pytest.mark.parametrize("model", [None, "alpha:another-model"])
def test_a_worker_joins_a_campaign_of_one_provider_with_or_without_its_model_option(runner, tmp_path, catalog, model):
    # The experiment stores the PROVIDER:MODEL route; a worker once prefixed it again and
    # refused every single-provider campaign as a different experiment.
    db = str(tmp_path / "store.db")
    chosen = ["--model", model] if model else []
    started = runner.invoke(cli, ["coding", "--campaign", "--providers", "alpha", "--providers-catalog", str(catalog), *chosen,
                                  "--tasks", "semver-precedence", "--repetitions", "1", "--output-dir", str(tmp_path / "out"), "--db", db, "--live"])  # fmt: skip
    assert started.exit_code == 0, started.output
    joined = runner.invoke(cli, ["worker", "--db", db, "--campaign-id", "1", "--providers-catalog", str(catalog)])
    assert joined.exit_code == 0, joined.output
    assert "nothing left to claim" in joined.output
    (stored,) = rows(db, "SELECT experiment_json FROM campaigns")
    assert json.loads(stored[0])["model"] == (model or "alpha:synthetic")


@pytest.mark.parametrize("edited", ["not json", "[1]"])
def test_a_worker_on_a_campaign_whose_experiment_was_edited_says_so_in_one_line(tmp_path, catalog, edited):
    db = str(tmp_path / "edited.db")
    out = tmp_path / "out"
    ran = subprocess.run(command(out, db, catalog), env=env_for(tmp_path), capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    engine = make_engine(resolve_url(db))
    with engine.begin() as conn:
        conn.execute(text("UPDATE campaigns SET experiment_json = :v"), {"v": edited})
    engine.dispose()
    worker = subprocess.run([sys.executable, "-m", "campaign", "worker", "--db", db, "--campaign-id", "1", "--providers-catalog", str(catalog)], env=env_for(tmp_path), capture_output=True, text=True, timeout=120)
    assert worker.returncode == 1 and "Traceback" not in worker.stderr, worker.stderr
    assert "experiment is not the JSON object the engine writes (the row was edited outside the engine)" in worker.stderr


def test_a_provider_named_twice_is_refused(tmp_path):
    result = CliRunner().invoke(cli, ["worker", "--providers", "alpha,alpha", "--db", str(tmp_path / "none.db")])
    assert result.exit_code == 2 and "--providers: a provider is named twice in 'alpha,alpha'" in result.output, result.output
    assert list(tmp_path.iterdir()) == []
