"""The recording proxy as a real process between a client and a loopback stub provider."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from campaign.profiler import faults
from campaign.profiler.capture import read_capture
from campaign.profiler.summary import summarize
from campaign.profiler.tokenizer import load_encoding, tool_schema_tokens
from helpers import stub_upstream as stub

TOOLS = {
    "/v1/messages": [
        {"name": "Read", "description": "Read a file", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}},
        {"name": "Bash", "description": "Run a command ü", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}},
    ],
    "/v1/chat/completions": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}],
    "/v1/responses": [
        {"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}}}},
        {"type": "function", "name": "update_plan", "parameters": {"type": "object"}},
        {"type": "web_search"},
    ],
}
CANARY = "CANARY-PROMPT-7f3a9d"
FORMATS = {"/v1/messages": "anthropic", "/v1/chat/completions": "chat", "/v1/responses": "responses"}


@pytest.fixture
def upstream():
    server = stub.StubUpstream().start()
    yield server
    server.stop()


class Proxy:
    def __init__(self, upstream_url: str, capture: Path, cache: Path, tmp: Path, *extra: str) -> None:
        self.capture = capture
        self.out = tmp / "proxy.out"
        self.err = tmp / "proxy.err"
        env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-m", "campaign.profiler", "--upstream", upstream_url, "--capture", str(capture), "--tokenizer-cache", str(cache), *extra],
            stdout=open(self.out, "wb"), stderr=open(self.err, "wb"), env=env,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            match = re.search(r"profiler listening on 127\.0\.0\.1:(\d+)", self.out.read_text())
            if match:
                self.url = f"http://127.0.0.1:{match.group(1)}"
                return
            assert self.proc.poll() is None, self.err.read_text()
            time.sleep(0.02)  # polling a file the proxy writes: there is no event to wait on
        raise AssertionError("the proxy never announced its port")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(15)


@pytest.fixture
def proxy_for(tmp_path, tokenizer_cache):
    started: list[Proxy] = []

    def make(upstream_url: str, *extra: str) -> Proxy:
        p = Proxy(upstream_url, tmp_path / "capture.jsonl", tokenizer_cache, tmp_path, *extra)
        started.append(p)
        return p

    yield make
    for p in started:
        if p.proc.poll() is None:
            p.proc.kill()
            p.proc.wait(10)


def post(base: str, path: str, body: dict, headers: dict | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json", "x-api-key": "sk-secret-header-value", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


# What each format's request asks of the model's reasoning, and the setting recorded for it.
REASONING = {
    "/v1/messages": ({"thinking": {"type": "enabled", "budget_tokens": 2048}}, "budget_tokens=2048,thinking=enabled"),
    "/v1/chat/completions": ({"reasoning_effort": "low"}, "effort=low"),
    "/v1/responses": ({"reasoning": {"effort": "high", "summary": "auto"}}, "effort=high"),
}


def body_for(path: str, stream: bool) -> dict:
    body = {"model": "model-x", "stream": stream, "tools": TOOLS[path], "messages": [{"role": "user", "content": CANARY}], **REASONING[path][0]}
    if path == "/v1/chat/completions" and stream:
        body["stream_options"] = {"include_usage": True}
    return body


def sha(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()


EXPECTED_USAGE = {
    "/v1/messages": {"uncached_input": 1200, "cached_input": 800, "cache_write": 300, "output": stub.ANTHROPIC_FINAL_OUTPUT},
    "/v1/chat/completions": {"uncached_input": 500, "cached_input": 1500, "cache_write": None, "output": 55},
    "/v1/responses": {"uncached_input": 1976, "cached_input": 1024, "cache_write": None, "output": 99},
}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("path", list(FORMATS))
def test_each_format_is_forwarded_unchanged_and_recorded(upstream, proxy_for, tokenizer_cache, path, stream):
    proxy = proxy_for(upstream.url)
    status, via_proxy = post(proxy.url, path, body_for(path, stream))
    status_direct, direct = post(upstream.url, path, body_for(path, stream))
    assert status == status_direct == 200
    # The ids differ per request (n), everything else is byte for byte the provider's.
    assert via_proxy.replace(b"stub_1", b"stub_N").replace(b"stub1", b"stubN") == direct.replace(b"stub_2", b"stub_N").replace(b"stub2", b"stubN")
    assert proxy.stop() == 0

    capture = read_capture(proxy.capture)
    assert capture.flush_complete and capture.problem is None
    (record,) = capture.model_requests
    tools = TOOLS[path]
    assert record["format"] == FORMATS[path]
    assert record["path"] == path and record["model"] == "model-x" and record["stream"] is stream
    assert record["tool_count"] == len(tools)
    assert record["reasoning"] == REASONING[path][1]
    assert record["catalog_digest"] == sha(tools)
    assert record["tool_digests"] == [sha(t) for t in tools]
    assert record["schema_tokens"] == tool_schema_tokens(load_encoding(tokenizer_cache), tools)
    assert record["status"] == 200 and record["response_id"].endswith("1")
    assert record["usage"] == EXPECTED_USAGE[path]
    assert record["terminal"] and record["clean_end"] and record["usage_complete"]
    assert record["cache_read_observable"] is True
    assert record["cache_write_observable"] is (path == "/v1/messages")
    # What reached the upstream carried the client's headers; nothing of them or the prompt is kept.
    assert upstream.requests[0]["headers"]["x-api-key"] == "sk-secret-header-value"
    kept = proxy.capture.read_bytes() + proxy.out.read_bytes() + proxy.err.read_bytes()
    assert CANARY.encode() not in kept and b"sk-secret" not in kept and b"gAAAA" not in kept


def test_schema_tokens_equal_tiktokens_own_count(tokenizer_cache):
    tools = TOOLS["/v1/messages"] + TOOLS["/v1/responses"]
    canonical = json.dumps(tools, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    code = "import sys, tiktoken; print(len(tiktoken.get_encoding('o200k_base').encode(sys.stdin.read())))"
    env = {"PATH": os.environ.get("PATH", ""), "TIKTOKEN_CACHE_DIR": str(tokenizer_cache)}
    theirs = subprocess.run([sys.executable, "-I", "-c", code], input=canonical, capture_output=True, text=True, env=env, check=True, timeout=60)
    assert tool_schema_tokens(load_encoding(tokenizer_cache), tools) == int(theirs.stdout)


@pytest.mark.parametrize("path", list(FORMATS))
def test_an_interrupted_stream_leaves_usage_incomplete(upstream, proxy_for, path):
    proxy = proxy_for(upstream.url)
    try:
        post(proxy.url, path, body_for(path, True), {"x-stub-mode": "cut"})
    except Exception:
        pass  # the client may see the cut as an error; the proxy must not
    assert proxy.stop() == 0
    capture = read_capture(proxy.capture)
    (record,) = capture.model_requests
    assert record["clean_end"] is False and record["usage_complete"] is False
    summary = summarize(capture)
    assert summary.flush_complete and not summary.usage_matched
    assert summary.counters["completed_turns"] == 0


def test_an_error_response_before_a_healthy_retry_is_unbilled_not_unmatched(upstream, proxy_for):
    proxy = proxy_for(upstream.url)
    status, _ = post(proxy.url, "/v1/messages", body_for("/v1/messages", True), {"x-stub-mode": "500"})
    assert status == 529
    assert post(proxy.url, "/v1/messages", body_for("/v1/messages", True))[0] == 200
    assert proxy.stop() == 0
    summary = summarize(read_capture(proxy.capture))
    assert summary.model_requests == 2
    assert summary.counters["completed_turns"] == 1
    # The 529 carried no usage and was not billed: the one billed request is matched.
    assert summary.usage_matched and not summary.spend_unseen
    assert [t.usage_id for t in summary.turn_usage] == ["msg_stub_2"]
    assert summary.diagnostics["unbilled_error_responses"] == 1 and summary.diagnostics["unmatched_requests"] == 0
    assert summary.diagnostics["provider_faults"]["http_529"] == 1
    assert summary.ending_fault is None  # the client recovered: the provider ended nothing


def _faulted(proxy, mode: str, path: str = "/v1/messages", stream: bool = True) -> tuple[int | None, dict]:
    try:
        status, _ = post(proxy.url, path, body_for(path, stream), {"x-stub-mode": mode})
    except Exception:
        status = None  # the client may see the fault as a dropped connection
    assert proxy.stop() == 0
    (record,) = read_capture(proxy.capture).model_requests
    return status, record


@pytest.mark.parametrize(
    "mode, client_status, fault, billing",
    [
        ("429", 429, "http_429", "unbilled"),
        ("500", 529, "http_529", "unbilled"),
        ("reset", 502, "connection_reset", "unseen"),
        ("cut", None, "stream_cut", "partial"),
        ("error-event", 200, "http_529", "partial"),
    ],
)
def test_each_provider_fault_is_recorded_with_its_billing(upstream, proxy_for, mode, client_status, fault, billing):
    status, record = _faulted(proxy_for(upstream.url), mode)
    if client_status is not None:
        assert status == client_status
    assert faults.request_fault(record) == fault, record
    assert faults.billing(record) == billing, record


@pytest.fixture
def replay_server(tmp_path):
    """``campaign replay-server`` with faults, as a real process on a port the OS picked."""
    started: list[subprocess.Popen] = []

    def start(*fault_specs: str) -> str:
        argv = [sys.executable, "-m", "campaign", "replay-server", "--port", "0", *(f"--fault={f}" for f in fault_specs)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=open(tmp_path / "replay.err", "wb"), text=True)
        started.append(proc)
        line = proc.stdout.readline()  # blocks until the server announces itself (or dies)
        match = re.match(r"replay listening on (127\.0\.0\.1:\d+)", line)
        assert match, (line, (tmp_path / "replay.err").read_text())
        return f"http://{match.group(1)}"

    yield start
    for proc in started:
        proc.kill()
        proc.wait(10)


# Each error the replay server injects, in the wire format a client of that kind speaks.
# The end-to-end fault tests (tests/test_provider_faults.py) run one real client per way of
# reacting to a fault; this joins every injected fault to its recorded kind, client-free.
REPLAY_FAULTS = [
    ("http-429", "/v1/messages", 429, "http_429"),
    ("http-529", "/v1/messages", 529, "http_529"),
    ("http-500", "/v1/messages", 500, "http_5xx"),
    ("http-429", "/v1/responses", 429, "http_429"),
    ("http-500", "/v1/responses", 500, "http_5xx"),
    ("error-200", "/v1/chat/completions", 200, "http_5xx"),
]


@pytest.mark.parametrize(("fault", "path", "status", "kind"), REPLAY_FAULTS)
def test_a_replay_servers_fault_then_health_is_recorded_as_its_kind(replay_server, proxy_for, fault, path, status, kind):
    proxy = proxy_for(replay_server(f"{fault}:1"))
    assert post(proxy.url, path, body_for(path, False))[0] == status
    assert post(proxy.url, path, body_for(path, False))[0] == 200  # then healthy
    assert proxy.stop() == 0
    faulted, healthy = read_capture(proxy.capture).model_requests
    assert faults.request_fault(faulted) == kind and faults.request_fault(healthy) is None, (faulted, healthy)
    # An HTTP error without usage was not billed; a 200 that is only an error may have been.
    assert faults.billing(faulted) == ("unseen" if status == 200 else "unbilled"), faulted
    summary = summarize(read_capture(proxy.capture))
    assert {k: n for k, n in summary.diagnostics["provider_faults"].items() if n} == {kind: 1} and summary.ending_fault is None


def test_a_cut_stream_keeps_the_input_the_wire_saw(upstream, proxy_for):
    proxy = proxy_for(upstream.url)
    _, record = _faulted(proxy, "cut")
    # message_start's usage crossed the wire before the cut: billed input, never read as zero.
    assert record["usage"]["uncached_input"] == 1200 and record["usage"]["cached_input"] == 800
    assert record["terminal"] is False and record["usage_complete"] is False
    summary = summarize(read_capture(proxy.capture))
    assert summary.counters["uncached_input_tokens"] == 1200 and summary.counters["completed_turns"] == 0
    assert summary.spend_unseen and not summary.usage_matched and summary.ending_fault == "stream_cut"


@pytest.mark.parametrize("mode", ["hang", "stall"])
def test_a_silent_upstream_is_given_up_on_at_the_silence_bound(upstream, proxy_for, mode):
    proxy = proxy_for(upstream.url, "--silence-s", "1")
    started = time.monotonic()
    status, record = _faulted(proxy, mode)
    assert time.monotonic() - started < 20
    if mode == "hang":
        assert status == 504  # the client gets an answer, not a hang
    assert faults.request_fault(record) == "upstream_silent", record
    assert faults.billing(record) == ("unseen" if mode == "hang" else "partial")


@pytest.mark.parametrize("mode", ["hang", "stall"])
def test_a_request_in_flight_when_the_proxy_stops_is_aborted_not_the_upstreams_fault(upstream, proxy_for, mode):
    """The attempt ran out of time while the upstream was still within its silence bound:
    the proxy, stopped at the attempt's end, ended the request itself, and what the wire saw
    is kept, unfinished. The request alone is no fault of the provider, and a wait of a
    second, a sixtieth of the bound, proves no hang either (``faults.hung_at_end``): the
    agent's timeout stands."""
    proxy = proxy_for(upstream.url, "--silence-s", "60")
    with pytest.raises(OSError):  # the client gives up first (a timeout is an OSError)
        request = urllib.request.Request(proxy.url + "/v1/messages", data=json.dumps(body_for("/v1/messages", True)).encode(), method="POST",
                                         headers={"content-type": "application/json", "x-stub-mode": mode})  # fmt: skip
        with urllib.request.urlopen(request, timeout=1) as response:
            response.read()
    assert proxy.stop() == 0
    (record,) = read_capture(proxy.capture).model_requests
    assert record["upstream_error"] == "aborted" and faults.request_fault(record) is None, record
    assert faults.billing(record) == ("unseen" if mode == "hang" else "partial")
    assert summarize(read_capture(proxy.capture)).ending_fault is None


def test_matched_requests_and_their_identities(upstream, proxy_for):
    proxy = proxy_for(upstream.url)
    for stream in (False, True, True):
        assert post(proxy.url, "/v1/messages", body_for("/v1/messages", stream))[0] == 200
    assert post(proxy.url, "/v1/models", {})[0] == 200  # not a model request: recorded apart
    assert proxy.stop() == 0
    capture = read_capture(proxy.capture)
    summary = summarize(capture)
    assert summary.usage_matched and summary.model_requests == 3
    assert summary.counters == {"completed_turns": 3, "uncached_input_tokens": 3600, "cached_input_tokens": 2400, "cache_write_tokens": 900, "output_tokens": 3 * stub.ANTHROPIC_FINAL_OUTPUT}
    assert summary.diagnostics["catalog_digests"] == [sha(TOOLS["/v1/messages"])]
    assert [r["kind"] for r in capture.records].count("other") == 1


def test_a_killed_proxy_leaves_no_flush_marker(upstream, proxy_for):
    proxy = proxy_for(upstream.url)
    assert post(proxy.url, "/v1/messages", body_for("/v1/messages", False))[0] == 200
    deadline = time.monotonic() + 10
    while not proxy.capture.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.01)
    proxy.stop(signal.SIGKILL)
    capture = read_capture(proxy.capture)
    assert len(capture.model_requests) == 1
    assert capture.flush_complete is False  # incomplete, never read as zero activity
    assert summarize(capture).usage_matched is False


def test_an_unreachable_upstream_is_a_recorded_failure(proxy_for, tmp_path, dead_port):
    proxy = proxy_for(f"http://127.0.0.1:{dead_port.number}")
    assert post(proxy.url, "/v1/messages", body_for("/v1/messages", False))[0] == 502
    assert proxy.stop() == 0
    capture = read_capture(proxy.capture)
    (record,) = capture.model_requests
    assert record["status"] is None and record["usage"] is None and record["upstream_error"] == "unreachable"
    summary = summarize(capture)
    assert summary.ending_fault == "unreachable" and summary.diagnostics["unbilled_error_responses"] == 1


def test_a_missing_tokenizer_cache_stops_the_proxy_with_one_line(upstream, tmp_path):
    done = subprocess.run(
        [sys.executable, "-I", "-m", "campaign.profiler", "--upstream", upstream.url, "--capture", str(tmp_path / "c.jsonl"), "--tokenizer-cache", str(tmp_path / "nothing")],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    assert "prepare-cache" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "c.jsonl").exists()


@pytest.mark.parametrize("path", list(FORMATS))
def test_a_client_that_hangs_up_after_the_terminal_event_still_has_its_usage(upstream, proxy_for, path):
    import socket

    proxy = proxy_for(upstream.url)
    port = int(proxy.url.rsplit(":", 1)[1])
    body = json.dumps(body_for(path, True)).encode()
    terminal = {"/v1/messages": b"message_stop", "/v1/chat/completions": b"[DONE]", "/v1/responses": b"response.completed"}[path]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-stub-mode: linger\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
        )
        seen = b""
        while terminal not in seen:
            chunk = sock.recv(65536)
            assert chunk, "the proxy closed before the terminal event"
            seen += chunk
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # hang up hard (RST)
    # Stop the proxy only once the stub has sent its trailing bytes into the closed client.
    deadline = time.monotonic() + 10
    while upstream.finished < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert upstream.finished == 1
    assert proxy.stop() == 0
    (record,) = read_capture(proxy.capture).model_requests
    assert record["terminal"] and record["clean_end"] and record["usage_complete"], record
