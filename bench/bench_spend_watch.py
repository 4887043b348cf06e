"""Benchmark: what the spend watch costs while a client runs.

With a ceiling, the attempt's watch reads the recording proxy's capture every
``spend_watch.EVERY_S`` (0.25 s) and prices it (``spend_watch.wire_spend``), as
well as checking it for faults (``faults.gave_out``). This times one such read
over captures of 10 to 2,000 model requests (each line as the proxy writes it),
against a baseline measured in the same run: reading the same file's bytes and
splitting its lines. It prints each as milliseconds, as a ratio to the
baseline, and as the share of one core the watch would take at its pace if
every read parsed the capture; then what a read costs while the capture has not
changed since the last one (the watch's common case between two requests: it
only stats the file).

    python bench/bench_spend_watch.py [--runs 20]

A benchmark script, not a test: it asserts nothing and makes no network calls.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from campaign import benchmark
from campaign.agents.profiles import load_profile
from campaign.lanes import spend_watch
from campaign.lanes.attempt_plan import AttemptPlan
from campaign.lanes.wire import FaultWatch, WireRoute, WireSession
from campaign.profiler import faults
from campaign.profiler.capture import CAPTURE_NAME, read_capture
from campaign.providers import parse_catalog
from campaign.spend import overrun

PRICES = {"uncached_input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0}
DIGEST = "ab" * 32
NEVER = Decimal(10**9)  # a ceiling no bench capture reaches: the watch keeps reading


def _plan() -> AttemptPlan:
    provider = parse_catalog({"providers": {"bench": {
        "route": "bench", "default_model": "claude-sonnet-4-5", "credential_env": "BENCH_API_KEY", "agent": "claude-code",
        "upstream": "http://127.0.0.1:9", "basis": "synthetic", "price_source": "bench", "price_date": "2026-12-01", "prices": PRICES,
    }}})[0]  # fmt: skip
    route = WireRoute(upstream=provider.upstream, profile_python=sys.executable, tokenizer_cache=Path("/nonexistent"))
    return AttemptPlan(task=benchmark.get_task("semver-precedence"), profile=load_profile("claude-code"), model=provider.model, seed=1,
                       timeout_s=660.0, variant="coding", provider=provider, wire=route)  # fmt: skip


def _line(seq: int) -> bytes:
    record = {
        "kind": "model", "seq": seq, "format": "anthropic", "path": "/v1/messages", "model": "claude-sonnet-4-5", "stream": True,
        "tool_count": 18, "catalog_digest": DIGEST, "tool_digests": [DIGEST] * 18, "schema_tokens": 9000, "failed_tool_results": 0,
        "status": 200, "upstream_error": None, "error_event": None, "response_id": f"msg_{seq:06d}",
        "usage": {"uncached_input": 1200 + seq, "cached_input": 40000, "cache_write": 800, "output": 600}, "usage_complete": True,
        "cache_read_observable": True, "cache_write_observable": True, "terminal": True, "clean_end": True, "idle_s": 0.4, "silence_s": 300,
    }  # fmt: skip
    return (json.dumps(record) + "\n").encode()


def _best(runs: int, fn) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    plan = _plan()
    with tempfile.TemporaryDirectory() as tmp:
        dir_fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
        try:
            print(f"{'requests':>9} {'baseline ms':>12} {'watch read ms':>14} {'ratio':>7} {'core share':>11} {'unchanged us':>13} {'ratio':>7}")
            for n in (10, 100, 500, 2000):
                (Path(tmp) / CAPTURE_NAME).write_bytes(b"".join(_line(seq) for seq in range(1, n + 1)))

                def baseline() -> None:
                    (Path(tmp) / CAPTURE_NAME).read_bytes().splitlines()

                def watch_read() -> None:
                    capture = read_capture(Path(CAPTURE_NAME), dir_fd=dir_fd)
                    faults.gave_out(capture.model_requests)
                    spend_watch.wire_spend(capture, plan)

                ticks = iter(range(10**9))
                watch = FaultWatch(WireSession(None, "", dir_fd), lambda: float(next(ticks)), spend=lambda c: overrun(spend_watch.wire_spend(c, plan), NEVER))
                watch()  # the first read parses it; the rest find it unchanged
                if watch.tripped:
                    sys.exit("the watch stopped reading: the bench measures nothing")

                base, read, again = _best(args.runs, baseline), _best(args.runs, watch_read), _best(args.runs, watch)
                share = read / spend_watch.EVERY_S
                print(f"{n:>9} {base * 1e3:>12.3f} {read * 1e3:>14.3f} {read / base:>6.1f}x {share:>10.2%} {again * 1e6:>13.1f} {again / base:>6.2f}x")
        finally:
            os.close(dir_fd)


if __name__ == "__main__":
    main()
