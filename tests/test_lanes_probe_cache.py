"""A wire probe's measurement reused where everything that decides it is the same (campaign.lanes.probe_cache)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from campaign import benchmark
from campaign.agents.profiles import load_profile
from campaign.lanes.probe import probe_catalogs
from campaign.lanes.probe_cache import ENV, ProbeCache
from campaign.lanes.wire import WireRoute

OFFLINE_WIRE = Path(__file__).resolve().parents[1] / "campaign" / "agents" / "profiles" / "offline-wire.toml"
TASK = "semver-precedence"


@pytest.fixture
def counted(tmp_path: Path, monkeypatch, tokenizer_cache) -> Path:
    """The offline agent through the proxy, with a version command and a line in a log for
    every client run, and a cache of its own."""
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache))
    monkeypatch.setenv(ENV, str(tmp_path / "cache"))
    log = tmp_path / "runs.log"
    version = tmp_path / "bin" / "offline-version"
    version.parent.mkdir()
    version.write_text("#!/bin/sh\necho 'offline 1.0.0'\n")
    version.chmod(0o755)
    monkeypatch.setenv("PATH", f"{version.parent}{os.pathsep}{os.environ['PATH']}")
    text = OFFLINE_WIRE.read_text().replace('client = [\n  "{python}",', f'client = [\n  "sh", "-c", \'echo run >> {log}; exec "$0" "$@"\', "{{python}}",', 1)
    assert text != OFFLINE_WIRE.read_text()
    profile = tmp_path / "counted.toml"
    profile.write_text(text + '\nclient_version = ["offline-version"]\n')
    return profile


def probe(profile: Path, model: str = "replay:scripted") -> dict[str, list[str]]:
    route = WireRoute("replay", sys.executable, Path(os.environ["CAMPAIGN_TOKENIZER_CACHE"]))
    return probe_catalogs(load_profile(str(profile)), model=model, task=benchmark.get_task(TASK), route=route, runner_python=sys.executable)


def runs(profile: Path) -> int:
    log = profile.parent / "runs.log"
    return log.read_text().count("run") if log.exists() else 0


def test_the_same_probe_again_is_read_back_without_running_the_client(counted):
    first = probe(counted)
    assert runs(counted) == 2 and first["baseline"] != first["coding"]
    assert probe(counted) == first and runs(counted) == 2
    (entry,) = (counted.parent / "cache").glob("*.json")
    assert set(json.loads(entry.read_text())["measured"]) == {"baseline", "coding"}


def test_another_model_profile_or_client_is_probed_afresh(counted):
    first = probe(counted)
    assert probe(counted, model="replay:another") == first and runs(counted) == 4
    counted.write_text(counted.read_text().replace("Offline synthetic agent", "The offline agent"))
    probe(counted)
    assert runs(counted) == 6
    version = counted.parent / "bin" / "offline-version"
    version.write_text(version.read_text() + "# rebuilt, same version\n")
    probe(counted)
    assert runs(counted) == 8
    version.write_text("#!/bin/sh\necho 'offline 1.0.1'\n")
    probe(counted)
    assert runs(counted) == 10
    assert len(list((counted.parent / "cache").glob("*.json"))) == 5


def test_an_entry_that_does_not_read_back_is_probed_again_and_replaced(counted):
    first = probe(counted)
    (entry,) = (counted.parent / "cache").glob("*.json")
    for broken in ("{not json", json.dumps({"format": 1, "measured": {"baseline": "x"}}), json.dumps({"format": 0, "measured": {}})):
        entry.write_text(broken)
        assert probe(counted) == first
    assert runs(counted) == 8 and json.loads(entry.read_text())["format"] == 1


def test_unset_every_probe_runs_and_nothing_is_kept(counted, monkeypatch):
    monkeypatch.delenv(ENV)
    assert ProbeCache.from_environ(os.environ) is None
    probe(counted)
    probe(counted)
    assert runs(counted) == 4 and not (counted.parent / "cache").exists()
