"""A running attempt is stopped once the spend its wire has seen passes its ceiling.

End to end: Claude Code, installed by scripts/install_clients.sh, talks through the
recording proxy to a loopback provider that answers every turn with another tool
call and a million input tokens (about $3 a request at the catalog's prices), as a
client stuck in a loop on a real provider would be billed. Unwatched, that attempt
runs to its deadline; watched, it is stopped within a request or two of its
ceiling, gets no verdict, and the provider stops with attempt_exceeded_ceiling.
Claude Code, Codex and mini-swe-agent are each stopped the same way on the replay
provider answering a second late (``slow``), under a ceiling its first answer passes,
in the sequential lane and (Codex) in a worker of the parallel lane.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from dataclasses import replace
from types import SimpleNamespace

import pytest

from campaign import benchmark
from campaign.agents.profiles import load_profile
from campaign.agents.record import AgentRecord, unknown_record
from campaign.lanes import spend_watch
from campaign.lanes.attempt_plan import AttemptOutcome, AttemptPlan
from campaign.lanes.paired_live import after_attempt
from campaign.lanes.verdict import priced
from campaign.lanes.wire import FaultWatch, WireRoute, WireSession
from campaign.profiler import usage as wire_usage
from campaign.profiler.capture import CAPTURE_NAME, parse_capture
from campaign.profiler.summary import merge, summarize
from campaign.providers import parse_catalog
from campaign.spend import Overrun, overrun, stopped_line
from campaign.store.limits import SpendLimits
from campaign.view.source import open_readonly
from helpers.catalogs import offline_copies
from helpers.clients import env_with_clients, require, rows
from test_provider_faults import Case, flaky_case
from test_view import page
from workspace import approve_and_go_live

KEY = "LOOPING_API_KEY"
PRICES = {"uncached_input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0}
INPUT_TOKENS, OUTPUT_TOKENS = 1_000_000, 20
# What one answer of the looping provider costs at PRICES.
REQUEST_USD = Decimal(INPUT_TOKENS) * Decimal("3.0") / 1_000_000 + Decimal(OUTPUT_TOKENS) * Decimal("15.0") / 1_000_000


def catalog(port: int = 9) -> dict:
    return {"providers": {"looping": {
        "route": "looping", "default_model": "claude-sonnet-4-5", "credential_env": KEY, "agent": "claude-code",
        "upstream": f"http://127.0.0.1:{port}", "silence_s": 30, "basis": "synthetic", "price_source": "test upstream",
        "price_date": "2026-12-01", "prices": PRICES,
    }}}


# --- the decision, with plain values -----------------------------------------------------


def test_only_spend_past_the_ceiling_stops_an_attempt():
    ceiling = Decimal("1")
    assert overrun(1.5, ceiling) == Overrun(Decimal("1.5"), ceiling)
    assert overrun(Decimal("1.000001"), ceiling) is not None
    # Equal is within the ceiling, as the gate after an attempt judges it.
    assert overrun(1.0, ceiling) is None and overrun(0.3, Decimal("0.3")) is None
    assert overrun(0.0, ceiling) is None
    # Unknown spend stops nothing and is never read as 0; no ceiling: no spend limits.
    assert overrun(None, ceiling) is None and overrun(5.0, None) is None


def test_the_operators_line_names_the_spend_and_the_ceiling():
    assert Overrun(Decimal("9.0009"), Decimal("1")).line() == "the attempt was stopped at $9.0009 spent, over its $1 ceiling"
    assert stopped_line(None, Decimal("0.50")) == "the attempt was stopped at $? spent, over its $0.5 ceiling"


def _outcome(failure_class: str | None, cost: float | None, *, outcome: str = "interrupted", complete: bool = False, equivalent: float | None = None) -> AttemptOutcome:
    return AttemptOutcome(
        attempt_id=1, outcome=outcome, failure_class=failure_class, verified_pass=None, wall_seconds=1.0, record=AgentRecord(cost_usd=cost),
        spend_complete=complete, cleanup_complete=True, disposal_complete=True, finalization_failed=False, equivalent_spend_usd=equivalent,
    )


def test_a_paired_run_stops_after_an_attempt_its_ceiling_stopped_even_with_its_spend_unknown():
    approval = SimpleNamespace(limits=SpendLimits(Decimal("20"), Decimal("10")))  # only its limits are read
    assert after_attempt(_outcome("attempt_exceeded_ceiling", None), approval) == "attempt_exceeded_ceiling"
    assert after_attempt(_outcome(None, 12.0, outcome="failed", complete=True), approval) == "attempt_exceeded_ceiling"
    assert after_attempt(_outcome(None, 2.0, outcome="failed", complete=True), approval) is None


def test_the_campaign_line_for_the_operator():
    trial = SimpleNamespace(provider="looping", trial_id="looping/t/r1/coding")
    caps = SpendLimits(None, Decimal("10"), provider_max_spend_usd=Decimal("20"))
    line = spend_watch.ceiling_line(trial, _outcome("attempt_exceeded_ceiling", None, equivalent=12.0012), caps)
    # Its spend is incomplete (a request in flight at the stop was paid unseen): "+?".
    assert line == "looping looping/t/r1/coding: the attempt was stopped at $12.0012+? spent, over its $10 ceiling"
    complete = spend_watch.ceiling_line(trial, _outcome("attempt_exceeded_ceiling", 12.0012, complete=True), caps)
    assert complete == "looping looping/t/r1/coding: the attempt was stopped at $12.0012 spent, over its $10 ceiling"
    assert spend_watch.ceiling_line(trial, _outcome("interrupted", None), caps) is None
    assert spend_watch.ceiling_line(trial, _outcome("attempt_exceeded_ceiling", None), None) is None


# --- pricing what the wire saw so far, and the watch's pace ------------------------------


def _model_line(seq: int, *, usage: dict | None = None, status: int = 200) -> bytes:
    usage = usage if usage is not None else {"uncached_input": INPUT_TOKENS, "cached_input": 0, "cache_write": 0, "output": OUTPUT_TOKENS}
    record = {"kind": "model", "seq": seq, "status": status, "response_id": f"msg_{seq}", "usage": usage, "usage_complete": True,
              "terminal": True, "clean_end": True, "cache_read_observable": True, "cache_write_observable": True, "stream": True}
    return (json.dumps(record) + "\n").encode()


def _plan() -> AttemptPlan:
    provider = parse_catalog(catalog())[0]
    route = WireRoute(upstream=provider.upstream, profile_python=sys.executable, tokenizer_cache=Path("/nonexistent"))
    return AttemptPlan(task=benchmark.get_task("semver-precedence"), profile=load_profile("claude-code"), model=provider.model, seed=1,
                       timeout_s=60.0, variant="coding", provider=provider, wire=route)


def test_the_spend_seen_so_far_is_priced_as_the_attempts_row_will_be():
    plan = _plan()
    running = parse_capture(_model_line(1) + _model_line(2))  # no flush marker yet: the client runs
    assert Decimal(str(spend_watch.wire_spend(running, plan))) == 2 * REQUEST_USD
    # The row's own pricing of the same requests, once flushed, is the same figure.
    flushed = parse_capture(_model_line(1) + _model_line(2) + b'{"kind": "flush", "records": 2}\n')
    _, _, equivalent = priced(merge(unknown_record(None), summarize(flushed)), plan, True)
    assert equivalent == spend_watch.wire_spend(running, plan)
    # Nothing seen yet, or a counter the wire did not see: unknown, never 0.
    assert spend_watch.wire_spend(parse_capture(b""), plan) is None
    partial = {"uncached_input": INPUT_TOKENS, "cached_input": None, "cache_write": 0, "output": None}
    assert spend_watch.wire_spend(parse_capture(_model_line(1, usage=partial)), plan) is None


def test_cache_writes_a_priced_route_did_not_report_are_unknown_spend_not_zero():
    # Anthropic bills cache writes apart; a response without cache_creation_input_tokens
    # leaves them unknown, so even the client's own reported cost is not complete spend.
    plan = _plan()
    plan = replace(plan, provider=replace(plan.provider, prices=replace(plan.provider.prices, cache_write=3.75)))
    no_count = {"uncached_input": INPUT_TOKENS, "cached_input": 0, "cache_write": None, "output": OUTPUT_TOKENS}
    unobserved = json.loads(_model_line(1, usage=no_count))
    unobserved["cache_write_observable"] = False
    flushed = parse_capture((json.dumps(unobserved) + "\n").encode() + b'{"kind": "flush", "records": 1}\n')
    reported = AgentRecord(completed_turns=1, cache_write_tokens=0, cost_usd=0.01, cost_reported=True)
    record, gap, equivalent = priced(merge(reported, summarize(flushed)), plan, True)
    assert (record.cache_write_tokens, gap, equivalent) == (None, "cache_writes_unseen", None)
    # Reported on the wire (0 written): known, and the client's cost is complete.
    seen = parse_capture(_model_line(1) + b'{"kind": "flush", "records": 1}\n')
    assert priced(merge(reported, summarize(seen)), plan, True)[1] is None


def test_one_hour_cache_writes_are_priced_at_their_own_rate_or_left_unknown():
    """Anthropic's 1-hour cache writes cost more than its 5-minute ones: with the catalog's
    cache_write_1h they are priced at it, in the row and in the watch alike; without it a
    1-hour write seen leaves the list-price equivalent unknown (a client that reports no
    cost of its own then has no complete spend), never priced at the 5-minute rate."""
    written = {"uncached_input": 0, "cached_input": 0, "cache_write": 3_000_000, "cache_write_1h": 1_000_000, "output": 0}
    flushed = parse_capture(_model_line(1, usage=written) + b'{"kind": "flush", "records": 1}\n')
    plan = _plan()
    priced_1h = replace(plan, provider=replace(plan.provider, prices=replace(plan.provider.prices, cache_write_1h=6.0)))
    _, gap, equivalent = priced(merge(unknown_record(None), summarize(flushed)), priced_1h, True)
    assert equivalent == pytest.approx(2 * 3.75 + 1 * 6.0) and gap is None  # wire-costed: the figure is the cost
    assert spend_watch.spent_at_least(flushed, priced_1h.provider.prices) == Decimal("13.5")
    _, gap, equivalent = priced(merge(unknown_record(None), summarize(flushed)), plan, True)
    assert (equivalent, gap) == (None, "no_cost")
    assert spend_watch.spent_at_least(flushed, plan.provider.prices) == Decimal("11.25")  # a lower bound: all at 3.75
    reported = AgentRecord(completed_turns=1, cache_write_tokens=3_000_000, cost_usd=14.0, cost_reported=True)
    record, gap, equivalent = priced(merge(reported, summarize(flushed)), plan, True)
    assert (record.cost_usd, gap, equivalent) == (14.0, None, None)  # the client's own cost stands


def test_with_a_count_unknown_the_watch_stops_on_what_the_known_counts_cost():
    """A provider that leaves out its cache-read count (or a Chat endpoint without
    prompt_tokens_details) makes the row's spend unknown; what the wire did see is a
    lower bound, and once that alone is past the ceiling the attempt is stopped."""
    plan = _plan()
    no_cache_read = {"uncached_input": INPUT_TOKENS, "cached_input": None, "cache_write": None, "output": OUTPUT_TOKENS}
    capture = parse_capture(b"".join(_model_line(seq, usage=no_cache_read) for seq in (1, 2)))
    assert spend_watch.wire_spend(capture, plan) is None  # the row's spend stays unknown
    assert spend_watch.spent_at_least(capture, plan.provider.prices) == 2 * REQUEST_USD
    assert spend_watch.overrun_of(capture, plan, Decimal("5")) == Overrun(2 * REQUEST_USD, Decimal("5"), at_least=True)
    assert spend_watch.overrun_of(capture, plan, Decimal("7")) is None
    assert Overrun(Decimal("6.0006"), Decimal("5"), at_least=True).line() == "the attempt was stopped at $6.0006+? spent, over its $5 ceiling"
    # No count seen at all: nothing to stop for, and never read as 0.
    assert spend_watch.spent_at_least(parse_capture(_model_line(1, usage={})), plan.provider.prices) is None
    assert spend_watch.overrun_of(parse_capture(b""), plan, Decimal("0.01")) is None


def test_a_counter_that_is_no_number_on_the_wire_leaves_the_watch_on_the_lower_bound():
    # A provider that sends "5000" for a count: the request's usage is read as unknown there,
    # the row's spend is unknown, and the watch still stops once the known counts alone pass.
    plan = _plan()
    response = {"id": "msg_1", "usage": {"input_tokens": str(INPUT_TOKENS), "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": OUTPUT_TOKENS}}
    seen = wire_usage.observe_json("anthropic", json.dumps(response).encode())
    assert seen.uncached_input is None and not seen.complete
    counts = {"uncached_input": seen.uncached_input, "cached_input": seen.cached_input, "cache_write": seen.cache_write, "output": seen.output}
    capture = parse_capture(b"".join(_model_line(n, usage=counts) for n in range(1, 40)))
    assert spend_watch.wire_spend(capture, plan) is None
    bound = spend_watch.spent_at_least(capture, plan.provider.prices)
    assert bound is not None and bound > 0
    stop = spend_watch.overrun_of(capture, plan, bound / 2)
    assert stop is not None and stop.line().startswith(f"the attempt was stopped at ${format(bound.normalize(), 'f')}+? spent")


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def session(tmp_path):
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield WireSession(proxy=None, proxy_url="http://127.0.0.1:9", dir_fd=fd)
    os.close(fd)


def test_the_watch_stops_on_spend_past_the_ceiling_at_its_pace_and_stays_stopped(tmp_path, session):
    capture = tmp_path / CAPTURE_NAME
    capture.write_bytes(_model_line(1))
    clock, plan = _Clock(), _plan()
    watch = spend_watch.watch(session, plan, Decimal("5"), clock)
    assert watch.every == spend_watch.EVERY_S
    assert watch() is False  # $3 of $5
    capture.write_bytes(_model_line(1) + _model_line(2))
    assert watch() is False  # read again only after its interval
    clock.now += spend_watch.EVERY_S
    assert watch() is True and watch.fault is None
    assert watch.overrun == Overrun(2 * REQUEST_USD, Decimal("5"))
    capture.write_bytes(b"")
    clock.now += 10
    assert watch() is True and watch.overrun.spent_usd == 2 * REQUEST_USD  # once true, it stays


def test_without_a_ceiling_or_prices_the_watch_is_the_fault_watch_it_was(tmp_path, session):
    (tmp_path / CAPTURE_NAME).write_bytes(b"".join(_model_line(i) for i in range(1, 20)))
    clock = _Clock()
    for watch in (spend_watch.watch(session, _plan(), None, clock), FaultWatch(session, clock)):
        assert (watch.every, watch.spend) == (1.0, None)
        assert watch() is False and watch.overrun is None
    # Retrying into a failing provider is still the provider's fault, named as before.
    (tmp_path / CAPTURE_NAME).write_bytes(b"".join(_model_line(i, usage={}, status=529) for i in range(1, 4)))
    watch = spend_watch.watch(session, _plan(), Decimal("1"), clock)
    assert watch() is True and (watch.fault, watch.overrun) == ("http_529", None)


def test_the_watch_reads_the_capture_again_only_once_it_changed(tmp_path, session):
    """A read prices every line of the capture (bench/bench_spend_watch.py: about 7 ms at
    500 requests): between two requests there is nothing new to price."""
    capture, clock, priced_at = tmp_path / CAPTURE_NAME, _Clock(), []
    capture.write_bytes(_model_line(1))
    watch = FaultWatch(session, clock, spend_watch.EVERY_S, spend=lambda c: priced_at.append(len(c.model_requests)))
    for _ in range(5):
        assert watch() is False
        clock.now += spend_watch.EVERY_S
    with capture.open("ab") as fh:
        fh.write(_model_line(2))
    assert watch() is False
    assert priced_at == [1, 2]


# --- end to end through Claude Code --------------------------------------------------------


class _Looping(BaseHTTPRequestHandler):
    """Every model request: after a short think, one more Bash tool call, at a million input tokens."""

    protocol_version = "HTTP/1.1"
    served = 0
    lock = threading.Lock()
    THINK_S = 0.5
    CACHE_READ = True

    def log_message(self, *args) -> None:
        pass

    def _send(self, body: bytes, ctype: str = "application/json") -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client was stopped while this answer was in flight

    def do_HEAD(self) -> None:
        self._send(b"")

    def do_GET(self) -> None:
        self._send(b'{"data": []}')

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if "/messages" not in self.path or "count_tokens" in self.path:
            return self._send(b'{"input_tokens": 1}')
        time.sleep(self.THINK_S)
        with self.lock:
            n = type(self).served = type(self).served + 1
        usage = {"input_tokens": INPUT_TOKENS, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": OUTPUT_TOKENS}
        if not self.CACHE_READ:  # as many Anthropic-compatible endpoints answer: the row's spend is unknown
            usage = {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS}
        rid, tool = f"msg_loop_{n}", {"command": "true", "description": "noop"}
        if not request.get("stream"):
            body = {"id": rid, "type": "message", "role": "assistant", "model": request.get("model"), "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "usage": usage}
            return self._send(json.dumps(body).encode())
        events = [
            ("message_start", {"type": "message_start", "message": {"id": rid, "type": "message", "role": "assistant", "content": [], "model": request.get("model"), "usage": usage}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": f"toolu_{n:06d}", "name": "Bash", "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": json.dumps(tool)}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": OUTPUT_TOKENS}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        self._send("".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode(), "text/event-stream")


@pytest.fixture
def looping():
    _Looping.served, _Looping.CACHE_READ = 0, True
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Looping)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join(10)


def _write_catalog(path: Path, port: int) -> Path:
    entry = catalog(port)["providers"]["looping"]
    prices = entry.pop("prices")
    text = "[providers.looping]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in entry.items())
    path.write_text(text + "\n[providers.looping.prices]\n" + "".join(f"{k} = {v}\n" for k, v in prices.items()))
    return path


@pytest.mark.parametrize("cache_read", [True, False], ids=["usage-complete", "cache-read-unknown"])
def test_claude_code_looping_on_paid_calls_is_stopped_at_its_ceiling(tmp_path, tokenizer_cache, looping, cache_read):
    """Also when the provider leaves out its cache-read count: the row's spend is then
    unknown, and the watch stops on what the known counts cost (a lower bound)."""
    _Looping.CACHE_READ = cache_read
    env = env_with_clients(tokenizer_cache)
    require("claude-code", env)
    runner_tmp = tmp_path / "runner-tmp"
    runner_tmp.mkdir()
    env = {**env, KEY: "test-key-not-a-credential", "TMPDIR": str(runner_tmp)}
    out, ceiling, timeout = tmp_path / "out", Decimal("10"), 120
    argv = [sys.executable, "-m", "campaign", "coding", "--campaign", "--providers", "looping", "--providers-catalog", str(_write_catalog(tmp_path / "providers.toml", looping)),
            "--tasks", "semver-precedence", "--repetitions", "1", "--live", "--output-dir", str(out), "--timeout", str(timeout),
            "--max-spend-usd", "20", "--attempt-ceiling-usd", str(ceiling)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 3, done.stdout + done.stderr
    (attempt,) = rows(out / "campaign.db", "SELECT * FROM attempts")
    assert (attempt["status"], attempt["outcome"], attempt["failure_class"], attempt["verified_pass"]) == ("interrupted", "interrupted", "attempt_exceeded_ceiling", None), attempt
    if not cache_read:  # unknown stays unknown in the row; the wire's counts are kept
        assert (attempt["cost_usd"], attempt["equivalent_spend_usd"], attempt["spend_complete"], attempt["cached_input_tokens"]) == (None, None, 0, None), attempt
        attempt["equivalent_spend_usd"] = float(attempt["uncached_input_tokens"] // INPUT_TOKENS * REQUEST_USD)
    spent = Decimal(str(attempt["cost_usd"] if attempt["spend_complete"] else attempt["equivalent_spend_usd"]))
    # Past the ceiling (that is what stopped it), by at most a request or two in flight;
    # its counters are the wire's, never zeroed.
    print(f"claude-code looping at ${REQUEST_USD} a request: stopped at ${spent} of a ${ceiling} ceiling after {attempt['wall_seconds']:.1f} s, {_Looping.served} requests answered")
    assert ceiling < spent <= ceiling + 2 * REQUEST_USD, attempt
    assert attempt["uncached_input_tokens"] == int(spent / REQUEST_USD) * INPUT_TOKENS
    # Unwatched, it would have looped until its deadline: about timeout / THINK_S requests.
    assert _Looping.served <= int(ceiling / REQUEST_USD) + 3 and attempt["wall_seconds"] < timeout / 4, (_Looping.served, attempt)
    assert rows(out / "campaign.db", "SELECT state, stop_reason FROM campaigns") == [{"state": "stopped", "stop_reason": "attempt_exceeded_ceiling"}]
    assert [r["not_attempted_reason"] for r in rows(out / "campaign.db", "SELECT not_attempted_reason FROM trials")] == ["attempt_exceeded_ceiling"] * 2
    shown = "?" if not cache_read else format(spent.normalize(), "f") + ("" if attempt["spend_complete"] else "+?")
    assert f"the attempt was stopped at ${shown} spent, over its $10 ceiling" in done.stderr, done.stderr
    assert "not attempted: 2 attempt_exceeded_ceiling (stopped: attempt_exceeded_ceiling)" in done.stderr


def test_a_paired_live_attempt_is_stopped_at_its_approved_ceiling(tmp_path, tokenizer_cache, looping, ws, monkeypatch):
    env = env_with_clients(tokenizer_cache)
    require("claude-code", env)
    for name, value in (("PATH", env["PATH"]), ("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache)), (KEY, "test-key-not-a-credential")):
        monkeypatch.setenv(name, value)
    catalog_path = _write_catalog(tmp_path / "providers.toml", looping)
    args = ws.args("--agent", "claude-code", "--repetitions", "1", "--model", "looping:claude-sonnet-4-5", "--providers-catalog", str(catalog_path), tasks="semver-precedence")
    result, plan, _ = approve_and_go_live(ws, args, KEY)  # approves a $1 ceiling under a $10 maximum
    ceiling = Decimal(str(plan["per_attempt_spend_ceiling_usd"]))
    assert result.exit_code == 3, result.output
    (attempt,) = rows(ws.db_path, "SELECT a.* FROM attempts a JOIN campaigns c ON c.id = a.campaign_id WHERE c.live = 1")
    assert (attempt["status"], attempt["outcome"], attempt["failure_class"], attempt["verified_pass"]) == ("interrupted", "interrupted", "attempt_exceeded_ceiling", None), attempt
    spent = Decimal(str(attempt["cost_usd"] if attempt["spend_complete"] else attempt["equivalent_spend_usd"]))
    assert ceiling < spent <= ceiling + 2 * REQUEST_USD, attempt
    shown = format(spent.normalize(), "f") + ("" if attempt["spend_complete"] else "+?")
    assert f"the attempt was stopped at ${shown} spent, over its $1 ceiling" in result.output
    assert rows(ws.db_path, "SELECT stop_reason FROM campaigns WHERE live = 1") == [{"stop_reason": "attempt_exceeded_ceiling"}]


# --- every client, and the parallel lane, through the replay provider -------------------


# One replay answer costs about $0.001 at test_provider_faults' prices: this ceiling is
# passed by the first, and the next comes a second later (``slow``), several sweeps apart.
TINY_CEILING = Decimal("0.0005")


@pytest.fixture
def flaky(request, tmp_path, tokenizer_cache):
    """test_provider_faults' case: the agent, and the replay as a provider named flaky."""
    with flaky_case(request.param, tmp_path, tokenizer_cache) as made:
        yield made


def _stopped_early(case: Case, *extra: str, providers: str = "flaky") -> tuple[dict, str]:
    """The campaign through the slow replay under TINY_CEILING: its flaky attempt, and what it printed."""
    case.upstream.start("slow:*")
    try:
        done = case.campaign("--max-spend-usd", "1", "--attempt-ceiling-usd", format(TINY_CEILING, "f"), *extra, providers=providers)
    finally:
        case.upstream.stop()
    assert done.returncode == 3, done.stdout + done.stderr
    (attempt,) = [a for a in rows(case.out / "campaign.db", "SELECT t.trial_id, t.provider, a.* FROM attempts a JOIN trials t ON t.id = a.trial_pk") if a["provider"] == "flaky"]
    return attempt, done.stderr


def _stopped_at_its_ceiling(attempt: dict, stderr: str) -> None:
    """No verdict; spent past the ceiling by what one slow request in flight can add; the
    operator told what it spent; counters the wire's, never zeroed."""
    assert (attempt["status"], attempt["outcome"], attempt["failure_class"], attempt["verified_pass"]) == ("interrupted", "interrupted", "attempt_exceeded_ceiling", None), attempt
    spent = Decimal(str(attempt["cost_usd"] if attempt["spend_complete"] else attempt["equivalent_spend_usd"]))
    # The answer that passed it and at most one more in flight (about $0.001 each).
    assert TINY_CEILING < spent < 6 * TINY_CEILING, attempt
    assert attempt["uncached_input_tokens"] and attempt["output_tokens"], attempt
    shown = format(spent.normalize(), "f") + ("" if attempt["spend_complete"] else "+?")
    assert f"flaky {attempt['trial_id']}: the attempt was stopped at ${shown} spent, over its ${TINY_CEILING} ceiling" in stderr, stderr


@pytest.mark.parametrize("flaky", ["claude-code", "codex", "mini-swe-agent"], indirect=True)
def test_every_client_is_stopped_at_its_ceiling_by_what_its_wire_saw(flaky: Case):
    """Codex and mini-swe-agent report no cost the watch could read: it prices their wire."""
    attempt, stderr = _stopped_early(flaky)
    _stopped_at_its_ceiling(attempt, stderr)
    assert flaky.campaign_row() == ("stopped", "attempt_exceeded_ceiling")
    # The report says what happened: a real client on a synthetic-price route, a trial the
    # ceiling stopped that only a raised ceiling runs again, and spend measured with no result.
    md = (flaky.out / "report.md").read_text()
    assert "A route with synthetic prices" in md and "offline agent produced" not in md
    assert "except a trial recorded `attempt_exceeded_ceiling`, which runs again only under a raised per-attempt ceiling" in md
    assert "No trial has a result, so no outcome or usage counter is reported; the spend of the 1 attempt(s) paid for is in measured spend." in md
    engine = open_readonly(str(flaky.out / "campaign.db"))
    try:
        assert "Synthetic figures: a route with synthetic prices" in page(engine, "/campaigns/1")
    finally:
        engine.dispose()


@pytest.mark.parametrize("flaky", ["codex"], indirect=True)
def test_a_worker_stops_an_attempt_at_its_ceiling_and_the_runner_says_so(flaky: Case):
    """The parallel lane: the attempt ran in a worker process, the line is the runner's."""
    flaky.catalog.write_text(flaky.catalog.read_text() + "\n" + offline_copies(("alpha",)))
    attempt, stderr = _stopped_early(flaky, "--parallel-providers", "2", providers="flaky,alpha")
    _stopped_at_its_ceiling(attempt, stderr)
    assert f"{attempt['trial_id']} coding interrupted (attempt_exceeded_ceiling)" in stderr, stderr
