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
    return probe_catalogs(load_profile(str(profile)), model=model, task=benchmark.get_task(TASK), route=route, runner_python=sys.executable).catalogs


def key(profile: Path, model: str = "replay:scripted", task: str = TASK, configs: dict[str, str] | None = None) -> str:
    cache = ProbeCache.from_environ(os.environ)
    assert cache is not None
    return cache.key(load_profile(str(profile)), model=model, task=benchmark.get_task(task), runner_python=sys.executable, environ=os.environ, configs=configs)


def runs(profile: Path) -> int:
    log = profile.parent / "runs.log"
    return log.read_text().count("run") if log.exists() else 0


def test_the_same_probe_again_is_read_back_without_running_the_client(counted):
    first = probe(counted)
    assert runs(counted) == 2 and first["baseline"] != first["coding"]
    assert probe(counted) == first and runs(counted) == 2
    (entry,) = (counted.parent / "cache").glob("*.json")
    assert entry.name == f"{key(counted)}.json"
    assert set(json.loads(entry.read_text())["measured"]) == {"baseline", "coding"}


def test_another_model_task_profile_client_or_path_is_another_key(counted, monkeypatch):
    keys = [key(counted), key(counted, model="replay:another"), key(counted, task="invoice-rounding")]
    # Other variants, or the same ones in another order or with another config.
    keys += [key(counted, configs={"coding": "", "baseline": ""}), key(counted, configs={"baseline": "", "coding": ""}), key(counted, configs={"baseline": "", "coding": "x"})]
    counted.write_text(counted.read_text().replace("Offline synthetic agent", "The offline agent"))
    keys.append(key(counted))
    version = counted.parent / "bin" / "offline-version"
    version.write_text(version.read_text() + "# rebuilt, same version\n")
    keys.append(key(counted))
    version.write_text("#!/bin/sh\necho 'offline 1.0.1'\n")
    keys.append(key(counted))
    monkeypatch.setenv("PATH", os.environ["PATH"] + os.pathsep + str(counted.parent))
    keys.append(key(counted))
    assert len(set(keys)) == len(keys)
    assert key(counted) == keys[-1]  # ... and the same inputs, the same key


@pytest.mark.parametrize("broken", ["{not json", json.dumps({"format": 1, "measured": {"baseline": "x"}}), json.dumps({"format": 0, "measured": {}}), "[]"])
def test_an_entry_that_does_not_read_back_is_a_miss(tmp_path, broken):
    cache = ProbeCache(tmp_path / "cache")
    measured = {"baseline": {"catalog_digests": ["a" * 64]}, "coding": {"catalog_digests": ["b" * 64]}}
    cache.store("k", measured)
    assert cache.load("k") == measured and cache.load("other") is None
    (tmp_path / "cache" / "k.json").write_text(broken)
    assert cache.load("k") is None
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["k.json"]  # no temporary left behind


def test_unset_the_probe_runs_and_nothing_is_kept(counted, monkeypatch):
    monkeypatch.delenv(ENV)
    assert ProbeCache.from_environ(os.environ) is None
    probe(counted)
    assert runs(counted) == 2 and not (counted.parent / "cache").exists()


def test_a_version_the_caller_already_read_gives_the_same_key(counted):
    cache = ProbeCache.from_environ(os.environ)
    assert cache is not None
    given = cache.key(load_profile(str(counted)), model="replay:scripted", task=benchmark.get_task(TASK), runner_python=sys.executable, environ=os.environ, client_version="1.0.0")
    assert given == key(counted)


def test_a_place_that_cannot_keep_entries_only_costs_the_next_probe(tmp_path):
    taken = tmp_path / "a-file"
    taken.write_text("not a directory")
    cache = ProbeCache(taken)
    cache.store("k", {"baseline": {}, "coding": {}})  # no error: the measurement stands
    assert cache.load("k") is None and taken.read_text() == "not a directory"
