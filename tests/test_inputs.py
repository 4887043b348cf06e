"""campaign.inputs: the one reader of the operator's files refuses what is not a regular file."""

from __future__ import annotations

import os

import pytest

from campaign.errors import UsageProblem
from campaign.inputs import check_regular, decode_text, read_bytes, read_text


def _refusal(call, *args) -> str:
    with pytest.raises(UsageProblem) as raised:
        call(*args)
    assert raised.value.option == "--config"
    return str(raised.value)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "base.toml"
    os.mkfifo(fifo)
    assert "is a FIFO (named pipe), not a file; give the base config file" in _refusal(read_bytes, fifo, "--config", "base config")


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: p.symlink_to(p.name), "is a symlink loop"),
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: None, "does not exist"),
        (lambda p: p.symlink_to("nowhere"), "does not exist"),
    ],
    ids=["symlink loop", "directory", "missing", "dangling link"],
)
def test_what_is_not_a_regular_file_is_named(tmp_path, make, words):
    path = tmp_path / "base.toml"
    make(path)
    assert words in _refusal(check_regular, path, "--config", "base config")


def test_a_path_through_a_file_is_unreachable(tmp_path):
    (tmp_path / "plain").write_text("x")
    assert "a part of it is not a directory" in _refusal(read_text, tmp_path / "plain" / "base.toml", "--config", "base config")


def test_a_device_is_refused(tmp_path):
    assert "/dev/zero is a character device" in _refusal(read_bytes, "/dev/zero", "--config", "base config")


@pytest.mark.parametrize("raw", [b"\xff\xfe binary", b"valid utf-8 \x00 but a NUL"], ids=["invalid UTF-8", "NUL byte"])
def test_binary_where_text_belongs_is_refused_by_name(tmp_path, raw):
    path = tmp_path / "base.toml"
    path.write_bytes(raw)
    assert read_bytes(path, "--config", "base config") == raw  # bytes are bytes
    assert "is binary, not UTF-8 text" in _refusal(read_text, path, "--config", "base config")
    assert "is binary, not UTF-8 text" in _refusal(decode_text, raw, path, "--config", "base config")


def test_text_and_a_bounded_read(tmp_path):
    path = tmp_path / "base.toml"
    path.write_text("[agent]\nname = \"é\"\n", encoding="utf-8")
    assert read_text(path, "--config", "base config") == "[agent]\nname = \"é\"\n"
    assert read_bytes(path, "--config", "base config", limit=7) == b"[agent]"
    link = tmp_path / "link.toml"
    link.symlink_to(path)
    assert read_text(link, "--config", "base config").startswith("[agent]")  # a link to a file is that file


def test_a_what_that_already_says_file_is_not_said_twice(tmp_path):
    (tmp_path / "task.toml").mkdir()
    assert str(_refusal(check_regular, tmp_path / "task.toml", "--config", "task file")).endswith("not a file; give the task file")
