"""The operator's files, read one way: regular files only, never blocking, one line naming the option.

Every file the operator names (a base config, a plan or template, a providers
catalog, an agent profile, a store) is checked here before anything reads it.
What is not a regular file is refused *before* it is opened for reading: a FIFO
would block the open until some writer appears, a device such as ``/dev/zero``
never ends, and a directory or a symlink loop is an ``OSError`` (or, from
``Path.resolve``, a ``RuntimeError``) whose text names no option. The open is
``O_NONBLOCK`` and checked again with ``fstat``, so a path swapped for a FIFO
between the two is refused too, never waited on. Text inputs must be UTF-8
without NUL bytes: a binary file is named as such, not left to a parser's
traceback.

Example::

    raw = read_bytes(path, "--config", "base config")       # bytes, for a digest
    text = read_text(path, "--plan", "plan")                  # UTF-8 text

Every refusal is a ``UsageProblem`` on ``option`` (exit 2); ``option=None``
leaves the naming to the caller (click prefixes the option itself).
"""

from __future__ import annotations

import errno
import os
import stat
import tomllib
from pathlib import Path

from campaign.errors import UsageProblem

_CHUNK = 1 << 20
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _the(what: str) -> str:
    """``the task file``, ``the plan file``: ``what`` may already say it is a file."""
    return f"the {what}" if what.endswith("file") else f"the {what} file"


def kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


def stat_problem(exc: OSError) -> str:
    """Why ``os.stat`` failed on a path, in words to follow it ("PATH is a symlink loop")."""
    if exc.errno == errno.ENOENT:
        return "does not exist"
    if exc.errno == errno.ELOOP:
        return "is a symlink loop"
    if exc.errno == errno.ENOTDIR:
        return "cannot be reached: a part of it is not a directory"
    return f"cannot be reached ({exc.strerror or exc})"


def check_regular(path: Path, option: str | None, what: str) -> os.stat_result:
    """The stat of ``path``, which must be an existing, readable regular file (symlinks followed)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise UsageProblem(f"{path} {stat_problem(exc)}", option=option) from None
    kind = kind_of(st.st_mode)
    if kind is not None:
        raise UsageProblem(f"{path} is {kind}, not a file; give {_the(what)}", option=option)
    if not os.access(path, os.R_OK):
        raise UsageProblem(f"{path} is not readable", option=option)
    return st


def read_bytes(path: Path, option: str | None, what: str, *, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit`` of them, when given)."""
    path = Path(path)
    check_regular(path, option, what)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise UsageProblem(f"cannot read {path}: {exc.strerror or exc}", option=option) from None
    try:
        kind = kind_of(os.fstat(fd).st_mode)
        if kind is not None:  # replaced between the check and the open
            raise UsageProblem(f"{path} is {kind}, not a file; give {_the(what)}", option=option)
        return _read_all(fd, path, option, limit)
    finally:
        os.close(fd)


def read_text(path: Path, option: str | None, what: str) -> str:
    """The UTF-8 text of the regular file ``path``; a binary file is refused by name."""
    raw = read_bytes(path, option, what)
    return decode_text(raw, path, option, what)


def decode_text(raw: bytes, path: Path | str, option: str | None, what: str) -> str:
    """``raw`` as UTF-8 text; NUL bytes or invalid UTF-8 mean a binary file, not a {what}."""
    try:
        if b"\0" not in raw:
            return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    raise UsageProblem(f"{path} is binary, not UTF-8 text; give {_the(what)}", option=option)


def _read_all(fd: int, path: Path, option: str | None, limit: int | None) -> bytes:
    chunks: list[bytes] = []
    left = limit
    try:
        while left is None or left > 0:
            chunk = os.read(fd, _CHUNK if left is None else min(_CHUNK, left))
            if not chunk:
                break
            chunks.append(chunk)
            left = None if left is None else left - len(chunk)
    except OSError as exc:
        raise UsageProblem(f"cannot read {path}: {exc.strerror or exc}", option=option) from None
    return b"".join(chunks)


# How deep an operator's TOML or JSON may nest. Every file the engine reads nests a
# handful of levels; tomllib, json and each walk of the parsed tree recurse, so a
# file nested a few hundred levels deep would end in a RecursionError traceback.
MAX_NESTING = 64


def too_deep(value: object, limit: int = MAX_NESTING) -> bool:
    """``value`` (parsed JSON or TOML) nests containers deeper than ``limit``; walked
    without recursion, so the check cannot fail the way the files it guards would."""
    level = [value]
    for _ in range(limit + 1):
        level = [c for v in level for c in (v.values() if isinstance(v, dict) else v if isinstance(v, list) else ())]
        if not level:
            return False
    return True


def toml_loads(text: str) -> dict:
    """``tomllib.loads`` with its nesting bounded (``MAX_NESTING``): a file nested deeper
    is a ``TOMLDecodeError``, so each reader refuses it in its own words."""
    try:
        data = tomllib.loads(text)
        deep = too_deep(data)
    except RecursionError:
        deep = True
    if deep:
        raise tomllib.TOMLDecodeError(f"nested deeper than {MAX_NESTING} levels")
    return data
