"""Nothing old changes: a store written by the engine before experiments became data.

The sample (tests/samples/stores/experiment-v1/store.sql) is the README's main job
over two tasks and two repetitions (`campaign coding --campaign --providers offline
--tasks semver-precedence,config-layering --repetitions 2 --live`), interrupted after
its fifth trial, as the engine wrote it on 2026-12-06 (schema revision 0007). Whatever
shape the experiment takes in code, a store like this must keep its experiment digest
(the chain's genesis), verify, give the same report byte for byte, and resume to the
end. To re-pin the report after an intended change to reports:
`python tests/test_experiment_pinned.py --repin`, then review the diff.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from helpers.samples import restore_store

from campaign.canonical import spec_digest
from campaign.cli import cli
from campaign.report import write_report
from campaign.store.engine import make_engine, resolve_url

SAMPLE = Path(__file__).parent / "samples" / "stores" / "experiment-v1"
RESUME = ["coding", "--campaign", "--providers", "offline", "--tasks", "semver-precedence,config-layering", "--repetitions", "2", "--live", "--resume"]


def _rows(db: str, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_the_stored_experiment_keeps_its_digest_and_verifies(tmp_path, runner):
    db = restore_store(SAMPLE / "store.sql", tmp_path)
    ((experiment_json, digest, state),) = _rows(db, "SELECT experiment_json, experiment_digest, state FROM campaigns")
    experiment = json.loads(experiment_json)
    assert spec_digest(experiment) == digest and state == "interrupted"
    assert [v["name"] for v in experiment["variants"]] == ["baseline", "coding"]
    done = runner.invoke(cli, ["verify", "--db", db])
    assert done.exit_code == 0 and "chain intact: 5 rows" in done.output, done.output


def test_its_report_is_byte_for_byte_the_same(tmp_path, runner):
    db = restore_store(SAMPLE / "store.sql", tmp_path)
    out = tmp_path / "report-1.json"
    done = runner.invoke(cli, ["report", "1", "--output", str(out), "--db", db])
    assert done.exit_code == 0, done.output
    for suffix in (".json", ".md", ".svg"):
        assert out.with_suffix(suffix).read_bytes() == (SAMPLE / f"report-1{suffix}").read_bytes(), f"{suffix}: re-pin if intended (module docstring)"


def test_it_resumes_to_the_end_on_the_same_schedule(tmp_path):
    db = restore_store(SAMPLE / "store.sql", tmp_path)
    before = _rows(db, "SELECT position, pair_id, trial_id, variant, pair_order FROM trials ORDER BY position")
    done = subprocess.run([sys.executable, "-m", "campaign", *RESUME, "--output-dir", str(tmp_path / "out"), "--db", db], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ran 3 attempts now; 0 of 8 scheduled trials left" in done.stdout, done.stdout + done.stderr
    assert _rows(db, "SELECT position, pair_id, trial_id, variant, pair_order FROM trials ORDER BY position") == before
    assert _rows(db, "SELECT state FROM campaigns") == [("completed",)]
    assert _rows(db, "SELECT count(*) FROM trials WHERE status = 'finished'") == [(8,)]


if __name__ == "__main__" and sys.argv[1:] == ["--repin"]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(resolve_url(restore_store(SAMPLE / "store.sql", Path(tmp))))
        try:
            written = write_report(engine, 1, Path(tmp) / "report-1.json")
            for path in (written.json, written.markdown, written.svg):
                (SAMPLE / path.name).write_bytes(path.read_bytes())
        finally:
            engine.dispose()
    print(f"re-pinned the report in {SAMPLE}")
