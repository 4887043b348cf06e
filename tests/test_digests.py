"""Source, build and interpreter digests, on real git repositories and real interpreters."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from campaign.digests import (
    NotAPython,
    build_digest,
    digest_entries,
    git_revision,
    git_toplevel,
    probe_python,
    python_digest,
    source_digest,
    source_files,
    tree_digest,
)
from workspace import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    root.mkdir()
    git(root, "init", "-q")
    (root / ".gitignore").write_text("ignored/\n*.log\n")
    (root / "app.py").write_text("print('hello')\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("X = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def test_lists_tracked_and_untracked_but_not_ignored_files(repo: Path):
    (repo / "new.py").write_text("y = 2\n")
    (repo / "ignored").mkdir()
    (repo / "ignored" / "out.bin").write_bytes(b"\0")
    (repo / "debug.log").write_text("x")
    assert source_files(repo) == [".gitignore", "app.py", "new.py", "pkg/mod.py"]


def test_one_tracked_byte_changes_the_source_digest(repo: Path):
    before = source_digest(repo)
    (repo / "pkg" / "mod.py").write_text("X = 2\n")
    assert source_digest(repo) != before


def test_an_untracked_non_ignored_file_changes_the_source_digest(repo: Path):
    before = source_digest(repo)
    (repo / "notes.txt").write_text("a")
    with_new = source_digest(repo)
    assert with_new != before
    (repo / "notes.txt").write_text("b")
    assert source_digest(repo) not in (before, with_new)


def test_ignored_files_do_not_change_the_source_digest(repo: Path):
    before = source_digest(repo)
    (repo / "ignored").mkdir()
    (repo / "ignored" / "build.beam").write_bytes(b"\1\2")
    (repo / "run.log").write_text("noise")
    assert source_digest(repo) == before


def test_a_deleted_tracked_file_is_recorded_not_a_crash(repo: Path):
    before = source_digest(repo)
    (repo / "app.py").unlink()
    assert "app.py" in source_files(repo)
    assert source_digest(repo) != before


def test_the_executable_bit_is_part_of_the_identity(repo: Path):
    before = source_digest(repo)
    path = repo / "app.py"
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    assert source_digest(repo) != before


def test_symlinks_are_hashed_by_target_never_followed(repo: Path, tmp_path: Path):
    outside = tmp_path / "outside.txt"
    outside.write_text("secret v1")
    (repo / "link").symlink_to(outside)
    before = source_digest(repo)
    outside.write_text("secret v2")
    assert source_digest(repo) == before


def test_fifo_is_not_opened(repo: Path):
    os.mkfifo(repo / "pipe")
    source_digest(repo)  # would block forever if opened


def test_thread_pool_and_single_thread_agree(repo: Path):
    for i in range(300):
        (repo / "pkg" / f"f{i}.py").write_text(f"v = {i}\n" * (i % 7))
    assert source_digest(repo, workers=1) == source_digest(repo, workers=3)


def test_digest_is_over_contents_and_names_not_location_or_mtime(repo: Path, tmp_path: Path):
    before = source_digest(repo)
    os.utime(repo / "app.py", (1, 1))
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True)
    assert source_digest(repo) == before == source_digest(copy)


def test_caller_git_environment_does_not_redirect_the_listing(repo: Path, tmp_path: Path, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    expected = source_files(repo)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    assert source_files(repo) == expected


def test_revision_and_toplevel(repo: Path, tmp_path: Path):
    assert git_toplevel(repo / "pkg") == repo.resolve()
    assert len(git_revision(repo) or "") == 40
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    assert git_revision(fresh) is None
    assert git_toplevel(tmp_path / "does-not-exist") is None


def test_build_digest_binds_artifact_names_and_bytes(tmp_path: Path):
    root = tmp_path / "src"
    (root / "ebin").mkdir(parents=True)
    beam = root / "ebin" / "a.beam"
    beam.write_bytes(b"v1")
    first = build_digest(root, [beam])
    beam.write_bytes(b"v2")
    assert build_digest(root, [beam]) != first
    assert build_digest(root, []) == digest_entries([])
    with pytest.raises(ValueError, match="outside"):
        build_digest(root / "ebin", [tmp_path / "elsewhere.beam"])


def test_tree_digest_changes_with_one_fixture_byte(tmp_path: Path):
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    (fixture / "m.py").write_bytes(b"abc")
    before = tree_digest(fixture)
    (fixture / "m.py").write_bytes(b"abd")
    assert tree_digest(fixture) != before


def test_probe_reports_this_interpreter():
    info = probe_python(Path(sys.executable))
    assert info.executable == Path(os.path.realpath(sys.executable))
    assert info.version == sys.version
    assert info.version_info == tuple(sys.version_info[:3])


def test_a_program_that_is_not_python_is_refused(tmp_path: Path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho not python\nexit 0\n")
    fake.chmod(0o755)
    with pytest.raises(NotAPython):
        probe_python(fake)
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    with pytest.raises(NotAPython, match="status 3"):
        probe_python(failing)
    with pytest.raises(NotAPython, match="cannot be run"):
        probe_python(tmp_path / "missing")


def test_a_hanging_program_times_out(tmp_path: Path):
    slow = tmp_path / "slow"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    with pytest.raises(NotAPython, match="did not answer"):
        probe_python(slow, timeout=0.5)


def test_python_digest_binds_binary_bytes_version_and_tiktoken(tmp_path: Path):
    binary = tmp_path / "python3"
    binary.write_bytes(b"\x7fELF fake interpreter")
    base = python_digest(binary, "3.12.1", None)
    assert python_digest(binary, "3.12.2", None) != base
    assert python_digest(binary, "3.12.1", "0.7.0") != base
    binary.write_bytes(b"\x7fELF fake interpreteR")
    assert python_digest(binary, "3.12.1", None) != base


def test_another_real_interpreter_has_another_digest():
    others = [p for p in ("/usr/bin/python3.11", shutil.which("python3.12") or "", shutil.which("python3.13") or "") if p and os.path.exists(p)]
    mine = probe_python(Path(sys.executable))
    for other in others:
        try:
            info = probe_python(Path(other))
        except NotAPython:
            continue
        if info.executable != mine.executable:
            assert python_digest(info.executable, info.version, info.tiktoken) != python_digest(mine.executable, mine.version, mine.tiktoken)
            return
    pytest.skip("no second Python interpreter on this machine")


def test_non_utf8_file_names_are_hashed(repo: Path):
    before = source_digest(repo)
    weird = os.fsdecode(b"caf\xe9.txt")
    (repo / weird).write_text("x")
    assert source_digest(repo) != before
