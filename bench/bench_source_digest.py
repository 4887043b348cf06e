"""Benchmark: the source digest against `git ls-files -z | xargs -0 sha256sum`.

Generates a git work tree of 20,000 files (mostly small source-like files, a few
larger ones, nested directories, an ignored build directory and some untracked
files), then times ``campaign.digests.source_digest`` and the shell pipeline on
the same tree, warm cache, best of N runs each, and prints the ratio
(ours / shell; below 1.0 means the digest is faster).

    python bench/bench_source_digest.py [--files 20000] [--runs 5] [--keep DIR]

A benchmark script, not a test: it asserts nothing and makes no network calls.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from campaign.digests import source_digest, source_files

GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def generate(root: Path, files: int, seed: int = 20000) -> None:
    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=GIT_ENV)
    (root / ".gitignore").write_text("_build/\n*.log\n")
    for i in range(files - 1):
        directory = root / f"pkg{i % 40:02d}" / f"mod{(i // 40) % 25:02d}"
        directory.mkdir(parents=True, exist_ok=True)
        # Source-like sizes: mostly 200 B - 8 KiB, one in 200 up to 256 KiB.
        size = rng.randint(200, 8192) if i % 200 else rng.randint(32_768, 262_144)
        (directory / f"file{i:05d}.py").write_bytes(rng.randbytes(size))
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=GIT_ENV)
    subprocess.run(["git", "commit", "-q", "-m", "bench tree"], cwd=root, check=True, env=GIT_ENV)
    # Noise the digest must walk past or include: ignored build output, untracked files.
    (root / "_build").mkdir()
    for i in range(200):
        (root / "_build" / f"artifact{i}.beam").write_bytes(rng.randbytes(1024))
    for i in range(10):
        (root / f"untracked{i}.txt").write_text(f"untracked {i}\n")


def best_of(runs: int, fn) -> float:
    fn()  # warm the page cache and git's index stat data
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def shell_baseline(root: Path) -> None:
    subprocess.run(
        "git ls-files -z | xargs -0 sha256sum > /dev/null",
        shell=True,
        cwd=root,
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="generate the tree here and keep it")
    args = parser.parse_args()
    if not shutil.which("sha256sum") or not shutil.which("git"):
        print("needs git and sha256sum on PATH", file=sys.stderr)
        return 2

    tmp = None
    if args.keep:
        root = args.keep.resolve()
        root.mkdir(parents=True, exist_ok=False)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="campaign-bench-")
        root = Path(tmp.name) / "tree"
    try:
        generate(root, args.files)
        listed = len(source_files(root))
        ours = best_of(args.runs, lambda: source_digest(root))
        single = best_of(args.runs, lambda: source_digest(root, workers=1))
        shell = best_of(args.runs, lambda: shell_baseline(root))
        print(f"tree: {args.files} tracked files, {listed} listed by the digest (incl. untracked, excl. ignored)")
        print(f"source_digest (thread pool): {ours:.3f} s")
        print(f"source_digest (one thread):  {single:.3f} s")
        print(f"git ls-files -z | xargs -0 sha256sum: {shell:.3f} s")
        print(f"ratio (source_digest / shell): {ours / shell:.2f}")
        print(f"ratio (one thread / shell):    {single / shell:.2f}")
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
