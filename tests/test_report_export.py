"""The report's JSON writer: orjson for the row lists, byte for byte what the json module writes."""

from __future__ import annotations

import json
import os
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from campaign.report.export import dumps, iter_json

# Texts a row may hold, the tricky ones included: substrings the writer looks for, the
# word null, non-ASCII, DEL and control characters (json escapes them, orjson may not).
texts = st.one_of(
    st.sampled_from(["claude-sonnet-4-5", "e-5", "x:0.00001", "null", "task-000/r1/baseline", "modèle", "a\x7fb", "tab\there", "quote\"d"]),
    st.text(max_size=12),
)
floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e-05, 1.234e-07, 2.5e-09, 1e-10, 0.0001, 1e16, 1e22, -0.0, 5e-324, 0.30000000000000004]),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1), floats, texts)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "trial_id"]), inner, max_size=3)), max_leaves=6)
rows = st.lists(st.builds(lambda t, n, x, c: {"trial_id": t, "n": n, "x": x, "cost_usd": c}, texts, scalars, values, floats), max_size=6)


def _reference(report: dict) -> str:
    """The writer's format, with the json module only."""
    parts = []
    for key, value in report.items():
        if key == "trials" and value:
            body = ",\n    ".join(json.dumps(row, separators=(",", ":"), ensure_ascii=True, allow_nan=False) for row in value)
            parts.append(f"  {json.dumps(key)}: [\n    {body}\n  ]")
        else:
            parts.append(f"  {json.dumps(key)}: " + json.dumps(value, indent=2, ensure_ascii=True, allow_nan=False).replace("\n", "\n  "))
    return "{\n" + ",\n".join(parts) + "\n}\n"


@settings(max_examples=300, deadline=None)
@given(rows)
def test_row_lists_are_written_exactly_as_the_json_module_writes_them(trials):
    report = {"schema_version": 3, "trials": trials, "redaction": {"dropped_keys": 0}}
    assert dumps(report) == _reference(report)
    assert b"".join(iter_json(report)).decode("ascii") == _reference(report)


def test_rows_not_starting_with_the_same_key_are_still_separated_one_per_line():
    report = {"trials": [{"trial_id": "a", "n": 1}, {"n": 2, "trial_id": "b"}, {"trial_id": "c", "x": {"trial_id": "d"}}]}
    assert dumps(report) == _reference(report)


def test_a_list_of_many_rows_is_written_in_chunks_with_the_same_separators():
    trials = [{"trial_id": f"t{i}", "wall_seconds": i / 7, "schema_diagnostics": {"a": [1, {"b": None}]}} for i in range(20_000)]
    report = {"trials": trials, "not_attempted_trials": []}
    assert dumps(report) == _reference(report)


def test_a_write_removes_what_a_killed_writer_of_the_same_file_left_and_nothing_else(tmp_path):
    import subprocess

    from campaign.report.export import DEAD_WRITER_S, STALE_TEMP_S, _atomic_write

    gone = subprocess.Popen(["true"])
    gone.wait()
    target = tmp_path / "report.json"
    names = {
        "dead": f".report.json.{gone.pid}.ab12cd_9",  # its writer was killed: removed
        "stale": ".report.json.zz99yy00",  # an hour old, from before the pid was in the name: removed
        "live": f".report.json.{os.getpid()}.qq11ww22",  # a live writer's, however old: kept
        "fresh": f".report.json.{gone.pid}.rr33tt44",  # too fresh to judge from here: kept
        "other": f".report.md.{gone.pid}.ab12cd_9",  # another file's: kept
        "unlike": ".report.json.kept-it",  # not a name a write makes: kept
    }
    for name in names.values():
        (tmp_path / name).write_bytes(b"{half")
    ages = {"dead": DEAD_WRITER_S + 5, "stale": STALE_TEMP_S + 60, "live": STALE_TEMP_S - 60, "fresh": 1, "other": STALE_TEMP_S + 60, "unlike": STALE_TEMP_S + 60}
    for key, age in ages.items():
        then = time.time() - age
        os.utime(tmp_path / names[key], (then, then))
    _atomic_write(target, [b"{}"])
    assert target.read_bytes() == b"{}"
    kept = {"report.json", *(names[k] for k in ("live", "fresh", "other", "unlike"))}
    assert {p.name for p in tmp_path.iterdir()} == kept
