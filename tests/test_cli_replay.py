"""`campaign replay-server` / `python -m campaign.replay`: validation, announce line, SIGTERM."""

from __future__ import annotations

import re
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import anthropic
import pytest

from campaign import benchmark
from campaign.cli import cli
from campaign.replay import ANNOUNCE_PATTERN
from campaign.replay.scripts import script_for
from campaign.replay.steps import usage_for_step


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "example.com", "::"])
def test_non_loopback_host_is_refused(runner, host):
    result = runner.invoke(cli, ["replay-server", "--host", host])
    assert result.exit_code == 2
    assert "--host" in result.output and "loopback" in result.output


def test_unknown_task_and_bad_fault_are_usage_errors(runner):
    result = runner.invoke(cli, ["replay-server", "--task", "no-such-task"])
    assert result.exit_code == 2 and "--task" in result.output and "unit-table-regen" in result.output
    result = runner.invoke(cli, ["replay-server", "--fault", "http-500:0"])
    assert result.exit_code == 2 and "--fault" in result.output


def _read_line(proc: subprocess.Popen, timeout: float = 20.0) -> str:
    """The first stdout line, waiting at most ``timeout`` seconds (polling, no fixed sleep)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.1)
        if ready:
            return proc.stdout.readline()
        if proc.poll() is not None:
            break
    raise AssertionError(f"no announce line; exit={proc.poll()} stderr={proc.stderr.read() if proc.poll() is not None else ''}")


@pytest.fixture
def start():
    """Start replay processes; whatever a failed test leaves is killed by its own pid."""
    started: list[subprocess.Popen] = []

    def _start(*argv: str, stdin=None) -> tuple[subprocess.Popen, str, int]:
        proc = subprocess.Popen([sys.executable, *argv], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(proc)
        line = _read_line(proc)
        match = re.match(ANNOUNCE_PATTERN, line.rstrip("\n"))
        assert match, line
        return proc, match.group(1), int(match.group(2))

    yield _start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_module_process_announces_serves_and_exits_zero_on_sigterm(start):
    proc, host, port = start("-m", "campaign.replay", "--task", "unit-table-regen")
    assert host == "127.0.0.1" and port > 0
    head = urllib.request.Request(f"http://{host}:{port}/", method="HEAD")
    with urllib.request.urlopen(head, timeout=10) as response:
        assert response.status == 200
    client = anthropic.Anthropic(base_url=f"http://{host}:{port}", api_key="dummy", max_retries=0)
    message = client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "go"}],
                                     tools=[{"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}])
    assert message.stop_reason == "tool_use" and message.content[-1].input == {"command": "cat unitconv/__init__.py"}
    assert message.usage.output_tokens == usage_for_step(0).output
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0
    rest, _ = proc.communicate(timeout=10)
    assert rest == ""  # exactly one line on stdout


def test_a_socket_handed_over_as_stdin_is_served(start):
    """How the engine starts a replay per attempt: it binds the socket (the port is known
    at once, so the recording proxy starts alongside) and the replay serves on it."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        proc, host, port = start("-m", "campaign.replay", "--task", "unit-table-regen", "--listen-stdin", stdin=listener.fileno())
        assert (host, port) == ("127.0.0.1", listener.getsockname()[1])
    head = urllib.request.Request(f"http://{host}:{port}/", method="HEAD")
    with urllib.request.urlopen(head, timeout=10) as response:
        assert response.status == 200
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0


@pytest.mark.parametrize("given", ["devnull", "connected", "remote-bound"])
def test_a_stdin_that_is_no_listening_loopback_socket_is_one_line(tmp_path, given):
    if given == "devnull":
        stdin, keep = subprocess.DEVNULL, None
    elif given == "connected":
        keep = socket.socketpair()
        stdin = keep[0].fileno()
    else:
        keep = socket.socket()
        keep.bind(("0.0.0.0", 0))
        keep.listen()
        stdin = keep.fileno()
    try:
        done = subprocess.run([sys.executable, "-m", "campaign.replay", "--listen-stdin"], stdin=stdin, capture_output=True, text=True, timeout=60)
    finally:
        for sock in keep if isinstance(keep, tuple) else [keep] if keep else []:
            sock.close()
    assert done.returncode == 2 and done.stdout == "", done
    (line,) = done.stderr.splitlines()
    assert line.startswith("Error: ") and ("socket" in line or "loopback" in line), line


def test_campaign_command_stops_on_sigint_too(start):
    proc, _, port = start("-m", "campaign", "replay-server", "--port", "0")
    assert port > 0
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) == 0


def test_every_task_script_is_available_to_the_server():
    assert all(script_for(name) for name in benchmark.task_names())


def test_a_port_in_use_is_an_engine_error(runner):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = runner.invoke(cli, ["replay-server", "--port", str(port)])
    assert result.exit_code == 1 and f"127.0.0.1:{port}" in result.output
