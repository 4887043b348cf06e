"""Descriptor-relative access: no link followed, no mount crossed, no read that can block.

Every refusal is checked both through ``openat2`` and through the
component-wise fallback used where the kernel lacks it.
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from campaign.supervise import pinned
from campaign.supervise.gate import spawn_gated


@pytest.fixture(params=["openat2", "walk"])
def resolver(request, monkeypatch):
    if request.param == "openat2":
        try:
            fd = pinned._openat2(os.open("/", pinned.DIR_FLAGS), ".", pinned.DIR_FLAGS, 0)
        except OSError as exc:
            pytest.skip(f"no openat2 here ({exc.strerror})")
        os.close(fd)
    monkeypatch.setattr(pinned, "_openat2_works", None if request.param == "openat2" else False)
    return request.param


@pytest.fixture
def tree(tmp_path: Path):
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    (inside / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("outside")
    (inside / "sub" / "file.txt").write_text("inside")
    (inside / "link").symlink_to(outside)
    (inside / "sub" / "link.txt").symlink_to(outside / "secret.txt")
    os.mkfifo(inside / "fifo")
    fd = os.open(inside, pinned.DIR_FLAGS)
    yield inside, outside, fd
    os.close(fd)


def _refused(fd: int, path: str, flags: int = os.O_RDONLY) -> int:
    with pytest.raises(OSError) as caught:
        os.close(pinned.open_beneath(fd, path, flags))
    return caught.value.errno


def test_open_beneath_reaches_plain_files(resolver, tree):
    _, _, fd = tree
    got = pinned.open_beneath(fd, "sub/file.txt", os.O_RDONLY)
    try:
        assert os.read(got, 10) == b"inside"
    finally:
        os.close(got)


def test_open_beneath_follows_no_link_anywhere_and_never_climbs(resolver, tree):
    _, _, fd = tree
    assert _refused(fd, "link/secret.txt") in (errno.ELOOP, errno.ENOTDIR)
    assert _refused(fd, "sub/link.txt") == errno.ELOOP
    assert _refused(fd, "../outside/secret.txt") == errno.EXDEV
    assert _refused(fd, "/etc/hostname") == errno.EXDEV
    # Creating through a planted link is refused just the same.
    assert _refused(fd, "link/new.txt", os.O_WRONLY | os.O_CREAT) in (errno.ELOOP, errno.ENOTDIR)


def test_read_regular_refuses_everything_but_the_expected_file(resolver, tree):
    inside, _, fd = tree
    for name, reason in (("fifo", "not_a_regular_file"), ("link", "not_a_regular_file"), ("sub", "not_a_regular_file"),
                         ("sub/link.txt", "not_a_regular_file"), ("missing", "missing")):
        with pytest.raises(pinned.NotOurs) as caught:
            pinned.read_regular(fd, name, expected=None, limit=100)
        assert caught.value.reason == reason, name
    assert pinned.read_regular(fd, "sub/file.txt", expected=None, limit=6) == b"inside"
    with pytest.raises(pinned.NotOurs, match="too_large"):
        pinned.read_regular(fd, "sub/file.txt", expected=None, limit=5)
    other = pinned.identity(os.stat(inside / "sub"))
    with pytest.raises(pinned.NotOurs, match="replaced"):
        pinned.read_regular(fd, "sub/file.txt", expected=other, limit=100)


def test_create_exclusive_never_reuses_a_name(resolver, tree):
    inside, _, fd = tree
    out, ident = pinned.create_exclusive(fd, "client.out")
    os.write(out, b"ok")
    os.close(out)
    assert pinned.read_regular(fd, "client.out", expected=ident, limit=10) == b"ok"
    assert oct(os.stat(inside / "client.out").st_mode & 0o777) == "0o600"
    for taken in ("client.out", "fifo", "link"):
        with pytest.raises(FileExistsError):
            pinned.create_exclusive(fd, taken)


def test_a_swapped_file_is_told_apart_from_the_one_created(resolver, tree):
    inside, _, fd = tree
    out, ident = pinned.create_exclusive(fd, "client.out")
    os.close(out)
    os.rename(inside / "client.out", inside / "client.old")
    (inside / "client.out").write_text("forged")
    with pytest.raises(pinned.NotOurs, match="replaced"):
        pinned.read_regular(fd, "client.out", expected=ident, limit=10)
    assert pinned.entry_is(fd, "client.old", ident) and not pinned.entry_is(fd, "client.out", ident)


def _bind(source: Path, target: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("bind mounts need root")
    done = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mount refused here: {done.stderr.strip()}")


def test_a_bind_mount_on_the_same_filesystem_is_a_different_mount(resolver, tree):
    inside, outside, fd = tree
    (inside / "mnt").mkdir()
    _bind(outside, inside / "mnt")
    try:
        assert os.stat(inside / "mnt").st_dev == os.stat(inside).st_dev  # st_dev cannot tell
        held = os.open(inside / "mnt", pinned.DIR_FLAGS)
        try:
            assert pinned.mount_id(held) != pinned.mount_id(fd)
        finally:
            os.close(held)
        assert _refused(fd, "mnt", pinned.DIR_FLAGS) == errno.EXDEV
        assert _refused(fd, "mnt/secret.txt") == errno.EXDEV
    finally:
        subprocess.run(["umount", str(inside / "mnt")], check=True)


def test_a_child_started_in_a_pinned_directory_runs_there_after_a_swap(tmp_path):
    work, moved, outside = tmp_path / "work", tmp_path / "work.real", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    fd = os.open(work, pinned.DIR_FLAGS)
    try:
        work.rename(moved)
        work.symlink_to(outside)
        pid = spawn_gated(["sh", "-c", "touch here"], cwd_fd=fd, env={"PATH": os.environ["PATH"]}, on_forked=lambda pid: None)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        os.close(fd)
    assert (moved / "here").exists() and list(outside.iterdir()) == []
