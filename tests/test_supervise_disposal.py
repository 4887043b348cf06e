"""Disposal through pinned descriptors: no symlink followed, no replaced root removed."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from campaign import isolation
from campaign.store import repository
from campaign.supervise import disposal

NOBODY = 65534


def _fixture(root: isolation.PrivateRoot, files: int = 20) -> None:
    for i in range(files):
        d = root.cwd / f"pkg{i % 4}" / "sub"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i}.py").write_text(f"x = {i}\n")


def test_disposes_a_verified_root(tmp_path):
    root = isolation.create_private_root(tmp_path)
    _fixture(root)
    os.mkfifo(root.tmpdir / "fifo")
    result = disposal.dispose(root, finalization_ok=True, cleanup_complete=True)
    assert result == disposal.DisposalResult(True, "disposed", False)
    assert not root.path.exists()


def test_symlinks_are_unlinked_never_followed(tmp_path):
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "keep.txt").write_text("precious")
    (outside / "deep" / "also.txt").write_text("precious too")
    root = isolation.create_private_root(tmp_path)
    (root.cwd / "link_dir").symlink_to(outside)
    (root.cwd / "nested").mkdir()
    (root.cwd / "nested" / "link_file").symlink_to(outside / "keep.txt")
    (root.cwd / "dangling").symlink_to(tmp_path / "nowhere")
    os.link(outside / "keep.txt", root.cwd / "hardlink.txt")
    result = disposal.dispose(root, finalization_ok=True, cleanup_complete=True)
    assert result.disposal_complete
    assert not root.path.exists()
    assert (outside / "keep.txt").read_text() == "precious"
    assert (outside / "deep" / "also.txt").read_text() == "precious too"
    assert sorted(p.name for p in outside.iterdir()) == ["deep", "keep.txt"]


def test_a_replaced_root_is_refused(tmp_path):
    root = isolation.create_private_root(tmp_path)
    _fixture(root)
    moved = root.path.with_name(root.path.name + "-original")
    root.path.rename(moved)
    root.path.mkdir(mode=0o700)
    (root.path / "someone-elses.txt").write_text("not ours")
    result = disposal.dispose(root, finalization_ok=True, cleanup_complete=True)
    assert (result.disposal_complete, result.reason) == (False, "root_replaced")
    assert (root.path / "someone-elses.txt").read_text() == "not ours"
    assert (moved / "work").is_dir()


def test_a_root_swapped_for_a_symlink_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious")
    root = isolation.create_private_root(tmp_path)
    shutil.rmtree(root.path)
    root.path.symlink_to(outside)
    result = disposal.dispose(root, finalization_ok=True, cleanup_complete=True)
    assert (result.disposal_complete, result.reason) == (False, "root_replaced")
    assert (outside / "keep.txt").read_text() == "precious"


def test_missing_root(tmp_path):
    root = isolation.create_private_root(tmp_path)
    shutil.rmtree(root.path)
    assert disposal.dispose(root, finalization_ok=True, cleanup_complete=True).reason == "root_missing"


def test_failed_finalization_or_cleanup_keeps_the_root_and_records_separate_facts(engine, make_attempt, tmp_path):
    attempt_id, _ = make_attempt()
    root = isolation.create_private_root(tmp_path)
    kept = disposal.dispose(root, finalization_ok=False, cleanup_complete=True)
    assert (kept.disposal_complete, kept.finalization_failed, kept.reason) == (False, True, "finalization_failed")
    assert root.path.is_dir()
    disposal.record(engine, attempt_id, kept)
    row = repository.get_attempt(engine, attempt_id)
    assert (row.disposal_complete, row.finalization_failed) == (False, True)
    unverified = disposal.dispose(root, finalization_ok=True, cleanup_complete=False)
    assert (unverified.disposal_complete, unverified.finalization_failed, unverified.reason) == (False, False, "cleanup_unverified")
    assert root.path.is_dir()


def _unprivileged_disposal(base: Path) -> dict:
    """In a forked child that drops to ``nobody``: build a tree of read-only and
    unsearchable directories, show a pathname-based rmtree cannot remove it, then
    dispose of it. The child inherits every loaded module, so it needs no access
    to the interpreter or the checkout (which may be private to root)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        status = 1
        try:
            os.close(read_fd)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            root = isolation.create_private_root(base)
            work = root.cwd
            for d in ("ro/b/c", "sealed/inner", "locked/deeper"):
                os.makedirs(work / d)
            for f in ("ro/f.txt", "ro/b/g.txt", "ro/b/c/h.txt", "sealed/inner/x", "locked/deeper/y"):
                (work / f).write_text("x")
                os.chmod(work / f, 0o400)
            for d, mode in (("ro/b/c", 0o500), ("ro/b", 0o500), ("ro", 0o555), ("sealed/inner", 0o000), ("sealed", 0o500), ("locked/deeper", 0o100), ("locked", 0o000)):
                os.chmod(work / d, mode)  # "locked": no read, no search
            os.chmod(root.home, 0o500)
            try:
                shutil.rmtree(work / "locked")  # a pathname-based removal cannot do it
                naive = "removed"
            except PermissionError:
                naive = "refused"
            result = disposal.dispose(root, finalization_ok=True, cleanup_complete=True)
            report = {"uid": os.getuid(), "naive": naive, "complete": result.disposal_complete, "reason": result.reason, "exists": os.path.exists(root.path)}
            os.write(write_fd, json.dumps(report).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return json.loads(data)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged user")
def test_read_only_nested_directories_as_an_unprivileged_owner():
    base = Path(tempfile.mkdtemp(prefix="campaign-disposal-test-", dir="/tmp"))
    try:
        os.chown(base, NOBODY, NOBODY)
        report = _unprivileged_disposal(base)
        assert report == {"uid": NOBODY, "naive": "refused", "complete": True, "reason": "disposed", "exists": False}
        assert list(base.iterdir()) == []
    finally:
        shutil.rmtree(base)


def _bind_or_skip(source: Path, target: Path) -> None:
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("bind mounts need root")
    done = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mount refused here: {done.stderr.strip()}")


@pytest.mark.parametrize("where", ["mnt", "deep/er/mnt"])
def test_a_bind_mount_inside_the_root_is_never_entered(tmp_path, where):
    """Same filesystem, same st_dev: only the mount id tells the mounted directory apart."""
    import subprocess

    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "keep.txt").write_text("precious")
    root = isolation.create_private_root(tmp_path)
    _fixture(root)
    point = root.cwd / where
    point.mkdir(parents=True)
    _bind_or_skip(outside, point)
    try:
        result = disposal.dispose(root, finalization_ok=True, cleanup_complete=True)
        assert (result.disposal_complete, result.reason) == (False, "mount_point")
        assert root.path.is_dir()
    finally:
        subprocess.run(["umount", str(point)], check=True)
    assert (outside / "keep.txt").read_text() == "precious" and (outside / "deep").is_dir()
    assert disposal.dispose(root, finalization_ok=True, cleanup_complete=True).disposal_complete  # once unmounted


def test_remove_entry_removes_a_tree_without_following_its_links(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious")
    work = tmp_path / "work"
    (work / "planted" / "sub").mkdir(parents=True)
    (work / "planted" / "sub" / "link").symlink_to(outside)
    (work / "planted" / "file").write_text("x")
    (work / "file-link").symlink_to(outside / "keep.txt")
    fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
    try:
        disposal.remove_entry(fd, "planted")
        disposal.remove_entry(fd, "file-link")
        with pytest.raises(FileNotFoundError):
            disposal.remove_entry(fd, "missing")
    finally:
        os.close(fd)
    assert list(work.iterdir()) == [] and (outside / "keep.txt").read_text() == "precious"
