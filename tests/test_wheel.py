"""An installed (non-editable) wheel carries its migrations and benchmark."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def unpacked_wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy: setuptools writes build/ and campaign.egg-info into the tree it
    # builds, where another worker's build, or a test reading the checkout, would meet them.
    source = out / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "campaign-out", ".clients"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--wheel-dir", str(out), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = out.glob("campaign-*.whl")
    site = out / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    return site


def _run(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, "-m", "campaign", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_wheel_contains_migrations_and_tasks(unpacked_wheel):
    versions = {p.name for p in (unpacked_wheel / "campaign" / "migrations" / "versions").glob("*.py")}
    assert "0001_initial_schema.py" in versions
    assert (unpacked_wheel / "campaign" / "migrations" / "env.py").is_file()
    assert list((unpacked_wheel / "campaign" / "benchmark" / "tasks").glob("*/task.toml"))


def test_installed_copy_upgrades_a_store_and_lists_tasks(unpacked_wheel, tmp_path):
    probe = _run(unpacked_wheel, tmp_path, "--version")
    assert probe.returncode == 0, probe.stderr
    where = subprocess.run(
        [sys.executable, "-c", "import campaign.store.migrate as m; print(m.migrations_dir())"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(unpacked_wheel)}, capture_output=True, text=True, check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(unpacked_wheel)
    up = _run(unpacked_wheel, tmp_path, "db", "upgrade", "--db", f"sqlite:///{tmp_path / 'x.db'}")
    assert up.returncode == 0, up.stderr
    listed = _run(unpacked_wheel, tmp_path, "tasks", "list")
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == 12
