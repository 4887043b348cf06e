"""What one attempt's recording proxy costs before its client's first answer: start, first
tools request, stop, with the schema-token memo against without it, same run.

Every attempt that talks through the proxy starts a fresh proxy process. Before the
memo (campaign/profiler/schema_tokens.py) each one built the o200k_base tokenizer
(about a second of CPU here) to count a catalog an earlier attempt had already
counted. Each round here starts a real proxy (``python -I -m campaign.profiler``)
in front of a loopback stub provider, sends one Claude-Code-sized tools request,
stops the proxy and waits for its flush: once with the memo blocked (a file where
its directory would be: the proxy counts, as every proxy did before) and once with
it warm. The two alternate, so machine noise falls on both alike; prints the
medians of wall and CPU seconds (the proxy's own, from the kernel's accounting)
and their ratios.

    python bench/bench_proxy_start.py [--runs 9]

A benchmark script, not a test: it asserts nothing and makes no network calls.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench_profiler_proxy import claude_sized_tools, timed_post  # noqa: E402
from helpers.stub_upstream import StubUpstream  # noqa: E402

from campaign.profiler.schema_tokens import MEMO_DIR  # noqa: E402
from campaign.profiler.tokenizer import CACHE_FILE_NAME, prepare_cache  # noqa: E402


def one_attempt(upstream: str, cache: Path, where: Path, body: bytes) -> tuple[float, float]:
    """(wall, CPU) seconds of one proxy from its start to its exit after one request."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = where / "proxy.out"
    with open(out, "wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-m", "campaign.profiler", "--upstream", upstream, "--capture", str(where / "capture.jsonl"), "--tokenizer-cache", str(cache)],
            stdout=sink, stderr=subprocess.DEVNULL,
        )
    while not (match := re.search(r":(\d+)", out.read_text())):
        if proc.poll() is not None:
            raise SystemExit("the proxy exited before announcing its port")
        time.sleep(0.005)
    timed_post(int(match.group(1)), body)
    proc.terminate()
    proc.wait(30)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="timed rounds of each; the median is printed")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-proxy-start-"))
    warm, blocked = tmp / "warm", tmp / "blocked"
    prepare_cache(warm)
    blocked.mkdir(mode=0o700)
    shutil.copy(warm / CACHE_FILE_NAME, blocked / CACHE_FILE_NAME)
    (blocked / MEMO_DIR).write_text("a file where the memo's directory would be: every proxy counts")
    body = json.dumps({"model": "m", "stream": True, "tools": claude_sized_tools(), "messages": [{"role": "user", "content": "hi"}]}).encode()
    stub = StubUpstream().start()
    figures: dict[str, list[tuple[float, float]]] = {"without memo": [], "with memo": []}
    try:
        for cache, name in ((blocked, "without memo"), (warm, "with memo")):  # warm-up; fills the memo
            one_attempt(stub.url, cache, Path(tempfile.mkdtemp(dir=tmp)), body)
        for _ in range(args.runs):
            for cache, name in ((blocked, "without memo"), (warm, "with memo")):
                figures[name].append(one_attempt(stub.url, cache, Path(tempfile.mkdtemp(dir=tmp)), body))
    finally:
        stub.stop()
    medians = {name: (statistics.median(w for w, _ in rows), statistics.median(c for _, c in rows)) for name, rows in figures.items()}
    for name, (wall, cpu) in medians.items():
        print(f"{name:13s} proxy start + one tools request + stop: wall {wall:.3f} s, CPU {cpu:.3f} s (median of {args.runs})")
    (w0, c0), (w1, c1) = medians["without memo"], medians["with memo"]
    print(f"with/without: wall {w1 / w0:.2f}x ({w0 - w1:.3f} s saved per attempt), CPU {c1 / c0:.2f}x ({c0 - c1:.3f} s saved)")
    if os.environ.get("KEEP_BENCH_TMP") is None:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
