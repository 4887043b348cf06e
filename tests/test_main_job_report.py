"""The main job's report, pinned.

The README's first command (every task, two repetitions, the offline agent
through the recording proxy) is
deterministic apart from wall times and timestamps, so its report.json is
pinned byte for byte once those are masked: a restructuring that changes one
figure, word or key of the report fails here. When a change to the report is
intended, re-pin from a checkout with that change and review the diff:

    python tests/test_main_job_report.py --repin
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PINNED = Path(__file__).parent / "samples" / "main-job" / "report.json"
README = Path(__file__).parents[1] / "README.md"
MAIN_JOB = ("coding", "--campaign", "--providers", "offline", "--agent", "offline-wire", "--repetitions", "2", "--live", "--resume", "--output-dir")


def masked(value: Any, key: str = "") -> Any:
    """Wall times (and everything computed from them) and timestamps masked, and the chain
    heads (the attempt rows' hashes cover both); nothing else."""
    if "wall_seconds" in key:
        return "<wall>"
    if key == "head":
        return "<chain head>"
    if isinstance(value, dict):
        return {k: masked(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, key) for v in value]
    if key.endswith("_at") and value is not None:
        return "<timestamp>"
    return value


def pinned_text(report: Path) -> str:
    return json.dumps(masked(json.loads(report.read_text())), indent=2, sort_keys=True) + "\n"


def run_main_job(where: Path) -> Path:
    out = where / "campaign-out"
    subprocess.run([sys.executable, "-m", "campaign", *MAIN_JOB, str(out)], cwd=where, check=True, capture_output=True, text=True)
    return out / "report.json"


def test_the_pinned_command_is_the_readmes_main_job():
    assert "campaign " + " ".join(MAIN_JOB) + " campaign-out" in README.read_text()


@pytest.mark.slow  # the README's whole main job: about 70 s
def test_the_main_jobs_report_is_the_pinned_one(tmp_path):
    got = pinned_text(run_main_job(tmp_path))
    assert got == PINNED.read_text(), "the main job's report changed: if intended, re-pin (see this module's docstring)"


if __name__ == "__main__" and sys.argv[1:] == ["--repin"]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        PINNED.write_text(pinned_text(run_main_job(Path(tmp))))
    print(f"re-pinned {PINNED}")
