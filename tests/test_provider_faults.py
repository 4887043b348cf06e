"""A provider's bad day, end to end through the real clients.

The upstream is an independent loopback server (``campaign replay-server`` with
injected faults), listed as a custom provider in ``--providers-catalog`` with a
real ``upstream`` URL and its own credential variable, exactly as an operator
would add a provider. It fails the way real providers do: one HTTP 429, 529 or
500 and then healthy, a stream cut mid-response, every request hanging, or
nothing listening at all. What the store must say (DESIGN.md §9): a fault the
client recovered from leaves the agent's verdict standing, with spend still
complete (an unbilled error response is not an unmatched request); a fault that
ended the attempt is ``provider_error`` with no verdict, its spend kept and never
0, and the trial runs again; a provider that keeps failing or is down is halted
within seconds, the run exits 3 and says why, and ``--resume`` once the upstream
is healthy finishes every trial.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from campaign.replay.steps import usage_for_step
from campaign.view.source import open_readonly
from campaign.vocabulary import PROVIDER_FAULT_WORDS
from helpers.clients import env_with_clients, require, rows
from test_view import page
from workspace import approve_and_go_live

TASK = "semver-precedence"
# --agent -> its model; the upstream answers any.
MODELS = {"claude-code": "claude-sonnet-4-5", "codex": "gpt-5-codex", "mini-swe-agent": "gpt-5-mini"}
SILENCE_S = 2
# A silent upstream is recognised within this bound: the rule, not the wall clock, is tested.
HANG_SILENCE_S = 1
# Anthropic bills cache writes apart; an OpenAI-format route has no such category (0.0).
CACHE_WRITE = {"claude-code": 3.75, "codex": 0.0, "mini-swe-agent": 0.0}
KEY = "FLAKY_API_KEY"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Upstream:
    """``campaign replay-server`` on a fixed loopback port, with or without faults."""

    port: int
    log: Path
    proc: subprocess.Popen | None = None

    def start(self, *faults: str) -> Upstream:
        argv = [sys.executable, "-m", "campaign", "replay-server", "--port", str(self.port), *(f"--fault={f}" for f in faults)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=open(self.log, "ab"), text=True)
        line = self.proc.stdout.readline()  # blocks until the server announces itself (or dies)
        assert re.match(r"replay listening on 127\.0\.0\.1:\d+", line), (line, self.log.read_text())
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)  # a hanging handler would hold a graceful stop
            self.proc.wait(30)
        self.proc = None


def write_catalog(path: Path, agent: str, port: int, silence_s: float = SILENCE_S) -> Path:
    path.write_text(
        f"""[providers.flaky]
route = "flaky"
default_model = "{MODELS[agent]}"
credential_env = "{KEY}"
agent = "{agent}"
upstream = "http://127.0.0.1:{port}"
silence_s = {silence_s}
basis = "synthetic"
price_source = "test upstream"
price_date = "2026-12-01"

[providers.flaky.prices]
uncached_input = 3.0
cached_input = 0.3
cache_write = {CACHE_WRITE[agent]}
output = 15.0
"""
    )
    return path


@dataclass
class Case:
    tmp: Path
    agent: str
    env: dict[str, str]
    catalog: Path
    upstream: Upstream

    @property
    def out(self) -> Path:
        return self.tmp / "out"

    def campaign(self, *extra: str, providers: str = "flaky") -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "campaign", "coding", "--campaign", "--providers", providers, "--providers-catalog", str(self.catalog),
                "--tasks", TASK, "--repetitions", "1", "--live", "--output-dir", str(self.out), "--timeout", "300", *extra]
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=900)

    def attempts(self) -> list[dict]:
        return rows(self.out / "campaign.db", "SELECT t.variant, a.* FROM attempts a JOIN trials t ON t.id = a.trial_pk ORDER BY a.id")

    def campaign_row(self) -> tuple[str, str | None]:
        ((row,),) = [rows(self.out / "campaign.db", "SELECT state, stop_reason FROM campaigns")]
        return row["state"], row["stop_reason"]

    def trial_statuses(self) -> list[str]:
        return [r["status"] for r in rows(self.out / "campaign.db", "SELECT status FROM trials ORDER BY position")]


@contextmanager
def flaky_case(agent: str, tmp_path: Path, tokenizer_cache: Path) -> Iterator[Case]:
    """``agent`` (skipped where not installed) and an upstream not yet started; stopped after."""
    env = env_with_clients(tokenizer_cache)
    require(agent, env)
    runner_tmp = tmp_path / "runner-tmp"
    runner_tmp.mkdir()
    env = {**env, KEY: "test-key-not-a-credential", "TMPDIR": str(runner_tmp)}
    port = free_port()
    upstream = Upstream(port, tmp_path / "upstream.log")
    try:
        yield Case(tmp_path, agent, env, write_catalog(tmp_path / "providers.toml", agent, port), upstream)
    finally:
        upstream.stop()


@pytest.fixture
def case(request, tmp_path, tokenizer_cache):
    with flaky_case(request.param, tmp_path, tokenizer_cache) as made:
        yield made


def diagnostics(attempt: dict) -> dict:
    return json.loads(attempt["schema_diagnostics"] or "{}")


def assert_resume_finishes(case: Case) -> None:
    """With the upstream healthy, --resume (the printed line) finishes every trial."""
    case.upstream.stop()
    case.upstream.start()
    resumed = case.campaign("--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert case.campaign_row() == ("completed", None)
    assert set(case.trial_statuses()) == {"finished"}
    verdicts = [a for a in case.attempts() if a["status"] == "finished"]
    assert len(verdicts) == 2 and all(a["verified_pass"] == 1 for a in verdicts), verdicts


BOTH = ["claude-code", "codex"]


# One real client per way of reacting to an error response (Claude Code retries, Codex gives
# up); that each injected error is recorded as its kind is checked client-free, through the
# real proxy (tests/test_profiler_proxy.py::test_a_replay_servers_fault_then_health_...).
ONE_ERROR = [("claude-code", "http-529", "http_529"), ("codex", "http-500", "http_5xx")]


@pytest.mark.parametrize(("case", "fault", "kind"), [pytest.param(*c, id=f"{c[1]}-{c[0]}") for c in ONE_ERROR], indirect=["case"])
def test_one_error_response_then_healthy(case: Case, fault: str, kind: str):
    """Under a spend cap, which admits nothing after an attempt of unknown spend: the error
    response was not billed, so no attempt's spend is unknown and the campaign finishes."""
    case.upstream.start(f"{fault}:1")
    done = case.campaign("--max-spend-usd", "5", "--attempt-ceiling-usd", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    attempts = case.attempts()
    faulted = [a for a in attempts if diagnostics(a).get("provider_faults", {}).get(kind)]
    assert len(faulted) == 1, attempts
    (hit,) = faulted
    assert diagnostics(hit)["unbilled_error_responses"] == 1
    if case.agent == "claude-code":
        # Claude Code retries: the agent's verdict stands, and the unbilled 429/5xx is no
        # unmatched request, so spend is complete.
        assert len(attempts) == 2
        assert (hit["status"], hit["outcome"], hit["verified_pass"]) == ("finished", "passed", 1)
        assert hit["spend_complete"] == 1 and diagnostics(hit)["unmatched_requests"] == 0
    else:
        # Codex (retries off in its profile) gives up: the provider ended the attempt. No
        # verdict; the trial ran again in the same run and passed.
        assert (hit["status"], hit["outcome"], hit["failure_class"], hit["verified_pass"]) == ("faulted", "provider_error", kind, None)
        assert len(attempts) == 3
        # Its one request was refused without usage: the wire proves a zero spend.
        assert (hit["spend_complete"], hit["cost_usd"], hit["output_tokens"], hit["completed_turns"]) == (1, 0.0, 0, 0), hit
        shows_the_fault(case, hit["variant"], kind)
    assert case.campaign_row() == ("completed", None)
    assert set(case.trial_statuses()) == {"finished"}
    assert_resume_finishes(case)


@pytest.mark.parametrize("case", ["claude-code"], indirect=True)
def test_under_a_cap_an_attempt_whose_spend_the_wire_did_not_see_whole_stops_its_provider(case: Case):
    """Claude Code recovers from the cut stream and passes, but what the cut request cost
    is unknown: its list-price equivalent is a lower bound, and a cap counting it could be
    passed unseen. The provider stops (the spec: incomplete spend stops later live calls);
    ``--resume``, the operator's decision, finishes the campaign."""
    case.upstream.start("cut-stream:1")
    caps = ("--max-spend-usd", "5", "--attempt-ceiling-usd", "1")
    done = case.campaign(*caps)
    assert done.returncode == 3, done.stdout + done.stderr
    (cut,) = case.attempts()
    assert (cut["outcome"], cut["spend_complete"]) == ("passed", 0) and cut["equivalent_spend_usd"] > 0, cut
    assert case.campaign_row() == ("stopped", "spend_incomplete")
    assert "not attempted: 1 spend_incomplete" in done.stderr and "--resume" in done.stderr, done.stderr
    case.upstream.stop()
    case.upstream.start()
    resumed = case.campaign("--resume", *caps)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert case.campaign_row() == ("completed", None) and set(case.trial_statuses()) == {"finished"}


@pytest.mark.parametrize("case", ["mini-swe-agent"], indirect=True)
def test_under_a_cap_a_healthy_run_of_a_client_whose_cost_the_wire_proves_completes(case: Case):
    case.upstream.start()
    done = case.campaign("--max-spend-usd", "5", "--attempt-ceiling-usd", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [a["spend_complete"] for a in case.attempts()] == [1, 1]
    assert case.campaign_row() == ("completed", None)


@pytest.mark.parametrize("case", BOTH, indirect=True)
def test_a_cut_stream_keeps_what_the_wire_saw_and_never_reads_as_free(case: Case):
    case.upstream.start("cut-stream:1")
    done = case.campaign()
    assert done.returncode == 0, done.stdout + done.stderr
    attempts = case.attempts()
    (cut,) = [a for a in attempts if diagnostics(a).get("provider_faults", {}).get("stream_cut")]
    # Whatever happened next, the cut request's spend is not fully seen: never complete,
    # never "reported" as the client's whole cost.
    assert cut["spend_complete"] == 0 and cut["cost_reported"] in (0, None), cut
    if case.agent == "claude-code":
        # Claude Code retries a cut stream and goes on: the agent's verdict stands, and the
        # input message_start showed before the cut is counted on top of the scripted turns.
        requests = diagnostics(cut)["request_count"]
        assert (cut["status"], cut["outcome"], cut["verified_pass"]) == ("finished", "passed", 1), cut
        expected = sum(usage_for_step(i).uncached_input for i in range(requests - 1)) + usage_for_step(0).uncached_input
        assert cut["uncached_input_tokens"] == expected
        assert cut["equivalent_spend_usd"] and cut["equivalent_spend_usd"] > 0
        assert len(attempts) == 2
    else:
        # Codex gives up on it: the provider ended the attempt, no verdict, the trial ran again.
        assert (cut["status"], cut["outcome"], cut["failure_class"], cut["verified_pass"]) == ("faulted", "provider_error", "stream_cut", None), cut
        # The Responses stream was cut before any usage: unknown, never 0.
        assert cut["uncached_input_tokens"] is None and cut["equivalent_spend_usd"] is None
        assert len(attempts) == 3
    assert set(case.trial_statuses()) == {"finished"}
    assert_resume_finishes(case)


# One client per behaviour (a hang halts the provider; a deadline inside a hang is the
# provider's): Claude Code here, whose retries after each silence the bound must end, and
# Codex for the deadline below. The rule itself is checked client-free through the real
# proxy (tests/test_profiler_faults_hang.py); a second client here cost 11-46 s a run.
@pytest.mark.parametrize("case", ["claude-code"], indirect=True)
def test_an_upstream_that_never_answers_is_halted_not_waited_out(case: Case):
    write_catalog(case.catalog, case.agent, case.upstream.port, HANG_SILENCE_S)
    case.upstream.start("hang:*")
    started = time.monotonic()
    done = case.campaign()
    took = time.monotonic() - started
    assert done.returncode == 3, done.stdout + done.stderr
    assert re.search(r"halted flaky: 3 attempts in a row ended on provider errors \(silent upstream x\d+\)", done.stderr), done.stderr
    assert "to continue once the provider recovers:" in done.stderr and "--resume" in done.stderr
    attempts = case.attempts()
    assert len(attempts) == 3
    for a in attempts:
        assert (a["status"], a["outcome"], a["failure_class"], a["verified_pass"]) == ("faulted", "provider_error", "upstream_silent", None), a
        assert a["spend_complete"] == 0
    assert case.campaign_row() == ("stopped", "provider_unavailable")
    assert case.trial_statuses() == ["scheduled", "scheduled"]  # schedulable, not given up
    print(f"{case.agent}: every request hangs: 3 attempts halted in {took:.1f} s")
    assert_resume_finishes(case)


# The attempt's deadline lands inside a hang, before the proxy's silence bound: Codex,
# under a bound longer than its deadline, never heard from its model at all (waited past
# the rule's floor, a tenth of the bound: 2 s). The retrying client (Claude Code) meets the
# bound in the test above; here it took 46 s a run, paced by its own retry back-off.
DEADLINE_IN_A_HANG = {"codex": (20, 6)}


@pytest.mark.parametrize("case", sorted(DEADLINE_IN_A_HANG), indirect=True)
def test_a_deadline_that_lands_in_a_hang_is_the_providers_not_a_timeout(case: Case):
    silence_s, timeout = DEADLINE_IN_A_HANG[case.agent]
    write_catalog(case.catalog, case.agent, case.upstream.port, silence_s)
    case.upstream.start("hang:*")
    done = case.campaign("--timeout", str(timeout))
    assert done.returncode == 3, done.stdout + done.stderr
    assert re.search(r"halted flaky: 3 attempts in a row ended on provider errors \(silent upstream x\d+\)", done.stderr), done.stderr
    attempts = case.attempts()
    assert len(attempts) == 3
    for a in attempts:
        assert (a["status"], a["outcome"], a["failure_class"], a["verified_pass"]) == ("faulted", "provider_error", "upstream_silent", None), a
        assert diagnostics(a)["ending_fault"] == "upstream_silent"
        assert a["wall_seconds"] < timeout + 3  # the deadline ended it (for Codex, well inside the bound)
    assert case.campaign_row() == ("stopped", "provider_unavailable")
    assert case.trial_statuses() == ["scheduled", "scheduled"]


@pytest.mark.parametrize("case", BOTH, indirect=True)
def test_nothing_listening_halts_the_provider_in_seconds(case: Case):
    started = time.monotonic()
    done = case.campaign()
    took = time.monotonic() - started
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"halted flaky: its upstream 127.0.0.1:{case.upstream.port} refused the connection" in done.stderr, done.stderr
    assert case.attempts() == []  # nothing was paid for, no deadline was burnt
    assert case.campaign_row() == ("stopped", "provider_unavailable")
    assert case.trial_statuses() == ["scheduled", "scheduled"]
    print(f"{case.agent}: nothing listening: halted in {took:.1f} s (the probe included)")
    assert_resume_finishes(case)


@pytest.mark.parametrize("case", ["claude-code"], indirect=True)
def test_a_paired_live_run_through_one_retried_429_completes_with_complete_spend(case: Case, ws, monkeypatch):
    # The paired lane takes the same custom catalog; the provider's own credential variable
    # (FLAKY_API_KEY) reaches Claude Code as the ANTHROPIC_API_KEY it reads, and only so.
    case.upstream.start("http-429:1")
    for name in ("PATH", "CAMPAIGN_TOKENIZER_CACHE", KEY):
        monkeypatch.setenv(name, case.env[name])
    args = ws.args("--agent", "claude-code", "--repetitions", "1", "--model", f"flaky:{MODELS['claude-code']}", "--providers-catalog", str(case.catalog), tasks=TASK)
    result, _, report = approve_and_go_live(ws, args, KEY)
    assert result.exit_code == 0, result.output
    attempts = rows(ws.db_path, "SELECT status, outcome, verified_pass, spend_complete, schema_diagnostics FROM attempts WHERE campaign_id = 2")
    assert [(a["status"], a["outcome"], a["verified_pass"], a["spend_complete"]) for a in attempts] == [("finished", "passed", 1, 1)] * 2
    retried = [diagnostics(a) for a in attempts if diagnostics(a)["provider_faults"]["http_429"]]
    assert len(retried) == 1 and retried[0]["unbilled_error_responses"] == 1 and retried[0]["unmatched_requests"] == 0
    assert json.loads(report.read_text())["campaign"]["stop_reason"] is None


def shows_the_fault(case: Case, variant: str, fault: str) -> None:
    """The report JSON, its Markdown and the view page count the attempt the provider
    ended, for its provider and variant, and leave it out of success."""
    word = PROVIDER_FAULT_WORDS[fault]
    report = json.loads((case.out / "report.json").read_text())
    assert report["provider_faults"] == [{"provider": "flaky", "variant": variant, "attempts": 1, "by_fault": {fault: 1}}]
    by_variant = {v["variant"]: v for v in report["variants"]}
    assert by_variant[variant]["provider_error_attempts"] == 1 and by_variant[variant]["attempts"] == 1
    assert f"| flaky | {variant} | 1 | {word} x1 |" in (case.out / "report.md").read_text()
    engine = open_readonly(str(case.out / "campaign.db"))
    try:
        text = page(engine, "/campaigns/1")
    finally:
        engine.dispose()
    assert 'id="provider-faults"' in text and f"{word} x1" in text


@pytest.mark.parametrize("case", ["codex"], indirect=True)
def test_a_paired_live_run_through_codex_completes_with_spend_known_from_the_wire(case: Case, ws, monkeypatch):
    # Codex reports no cost: its spend is the wire's proven usage at the catalog's prices,
    # so the paired lane's spend gate is satisfied and every trial runs.
    case.upstream.start()
    for name in ("PATH", "CAMPAIGN_TOKENIZER_CACHE", KEY):
        monkeypatch.setenv(name, case.env[name])
    args = ws.args("--agent", "codex", "--repetitions", "1", "--model", f"flaky:{MODELS['codex']}", "--providers-catalog", str(case.catalog), tasks=TASK)
    result, _, _ = approve_and_go_live(ws, args, KEY)
    assert result.exit_code == 0, result.output
    attempts = rows(ws.db_path, "SELECT outcome, spend_complete, cost_usd, cost_reported, equivalent_spend_usd, schema_diagnostics FROM attempts WHERE campaign_id = 2")
    assert [(a["outcome"], a["spend_complete"], a["cost_reported"]) for a in attempts] == [("passed", 1, 0)] * 2
    for a in attempts:
        # Never called billed: the basis says it is wire usage x catalog price.
        assert a["cost_usd"] == a["equivalent_spend_usd"] and diagnostics(a)["cost_basis"] == "wire_usage_x_catalog_price"
