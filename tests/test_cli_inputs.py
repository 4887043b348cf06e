"""Every file or directory any command takes, tried with what is not one.

A FIFO, a symlink loop, a directory, a device and a binary file are given to
each file-taking parameter of every command, found by walking the click
command tree: a parameter added tomorrow is tried the day it appears. Each is
refused in one line naming the parameter, exit 2, no traceback, nothing written
and nothing left waiting on the FIFO. What a parameter legitimately takes (a
directory for a directory, any regular file for a file it replaces or runs) is
accepted by its type.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from workspace import make_workspace

from campaign.cli import cli, paths

BAD_KINDS = ("FIFO", "symlink loop", "directory", "device", "binary file")
# What each refusal must say about the thing it was given.
SAYS = {
    "FIFO": ("FIFO",),
    "symlink loop": ("symlink loop",),
    "directory": ("is a directory",),
    "device": ("character device",),
    "binary file": ("binary, not UTF-8 text", "not a SQLite database", "is a file, not a directory"),
}
PLACE_TYPES = (paths.InputFile, paths.InputDir, paths.OutputFile, paths.OutputDir, paths.StoreTarget, paths.AgentProfileRef)
# A binary file, and invalid UTF-8 besides (PNG's signature, then every byte value).
BINARY = b"\x89PNG\r\n\x1a\n\x00\xff\xfe" + bytes(range(256))


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    # Through get_command: the commands are imported on first use, so group.commands
    # is empty until some other test has run each one.
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))
        else:
            yield (*prefix, name), command


def _names_a_place(param: click.Parameter) -> bool:
    """A file or directory parameter: by its type, or by what its metavar or help promises."""
    words = f"{param.metavar or ''} {getattr(param, 'help', None) or ''}"
    return isinstance(param.type, (click.Path, click.File, *PLACE_TYPES)) or any(w in words for w in ("FILE", "PATH", "DIR"))


PLACES = [(path, command, param) for path, command in _commands(cli) for param in command.params if _names_a_place(param)]


def _id(place) -> str:
    path, _, param = place
    return " ".join(path) + " " + (param.opts[0] if isinstance(param, click.Option) else param.human_readable_name)


def _accepts(param_type: click.ParamType, kind: str) -> bool:
    """The one bad kind a parameter type takes as valid."""
    if isinstance(param_type, (paths.InputDir, paths.OutputDir)):
        return kind == "directory"
    if isinstance(param_type, paths.OutputFile) or (isinstance(param_type, paths.InputFile) and not param_type.text):
        return kind == "binary file"  # replaced, or run: any regular file will do
    return False


def _make(kind: str, tmp: Path) -> Path:
    """The bad thing, at an absolute path ending in .toml (so --agent reads it as a file)."""
    place = tmp / "given" / f"{kind.replace(' ', '-')}.toml"
    place.parent.mkdir(exist_ok=True)
    if kind == "FIFO":
        os.mkfifo(place)
    elif kind == "symlink loop":
        place.symlink_to(place.name)
    elif kind == "directory":
        place.mkdir()
    elif kind == "device":
        _null_device(place)
    else:
        place.write_bytes(BINARY)
    return place


def _null_device(place: Path) -> None:
    """A character device of our own (the null device's numbers), never the machine's /dev/null.

    A command that wrongly replaces what --output names would replace this node
    only; without CAP_MKNOD, /dev/null is used, which such a user cannot replace.
    """
    try:
        os.mknod(place, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        place.symlink_to("/dev/null")


@contextlib.contextmanager
def _fifo_never_hangs_the_suite(fifo: Path, seconds: float = 10) -> Iterator[None]:
    """Open the FIFO's other end, again and again, while the command is still running after a while.

    Only code that blocks on the FIFO (the bug) is ever released this way: it
    then fails the assertions instead of hanging the test run.
    """
    done = threading.Event()

    def release() -> None:
        while not done.wait(seconds):
            for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
                with contextlib.suppress(OSError):
                    os.close(os.open(fifo, flags))

    watchdog = threading.Thread(target=release, daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        done.set()
        watchdog.join()


def _snapshot(tmp: Path) -> dict[str, object]:
    def content(p: Path) -> object:
        st = os.lstat(p)
        return p.read_bytes() if stat.S_ISREG(st.st_mode) else stat.S_IFMT(st.st_mode)

    return {str(p): content(p) for p in sorted(tmp.rglob("*"))}


def _filler(param: click.Parameter, tmp: Path) -> str:
    """A harmless value for another required argument of the same command."""
    if isinstance(param.type, PLACE_TYPES):
        filler = tmp / "filler.json"
        filler.write_text("{}\n")
        return str(filler)
    return "1"


def _argv(path: tuple[str, ...], command: click.Command, param: click.Parameter, value: str, tmp: Path) -> list[str]:
    if isinstance(param, click.Option):
        return [*path, param.opts[0], value]
    arguments = [p for p in command.params if isinstance(p, click.Argument) and (p.required or p is param)]
    return [*path, *(value if p is param else _filler(p, tmp) for p in arguments)]


@pytest.fixture
def quiet_home(tmp_path, monkeypatch):
    """Defaults (store, tokenizer cache) inside tmp_path, so 'nothing written' covers them too."""
    for name in ("HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "CAMPAIGN_TOKENIZER_CACHE"):
        monkeypatch.setenv(name, str(tmp_path / "home" / name.lower()))
    monkeypatch.delenv("CAMPAIGN_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _one_error_line(result) -> str:
    assert isinstance(result.exception, SystemExit), result.exception  # never a traceback
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    return errors[0]


def test_every_file_parameter_has_a_type_that_checks_it():
    assert len(PLACES) >= 39, [_id(p) for p in PLACES]  # the walk found the tree (39 on the day it was written)
    untyped = [_id(p) for p in PLACES if not isinstance(p[2].type, PLACE_TYPES)]
    assert not untyped, f"give these a campaign.cli.paths type: {untyped}"


@pytest.mark.parametrize("kind", BAD_KINDS)
@pytest.mark.parametrize("place", PLACES, ids=_id)
def test_what_is_not_a_file_is_refused_in_one_line_naming_the_parameter(runner, quiet_home, place, kind):
    path, command, param = place
    given = _make(kind, quiet_home)
    if _accepts(param.type, kind):
        assert param.type.convert(str(given), param, click.Context(command)) is not None
        return
    argv = _argv(path, command, param, str(given), quiet_home)
    before = _snapshot(quiet_home)
    with _fifo_never_hangs_the_suite(given) if kind == "FIFO" else contextlib.nullcontext():
        result = runner.invoke(cli, argv)
    assert result.exit_code == 2, result.output
    line = _one_error_line(result)
    name = param.opts[0] if isinstance(param, click.Option) else param.human_readable_name
    assert f"'{name}'" in line, line
    assert any(words in line for words in SAYS[kind]), line
    assert _snapshot(quiet_home) == before


# --- the invocations issue 26 reported, in the modes they were found in --------------------


def _swap(args: list[str], option: str, value: Path) -> list[str]:
    at = args.index(option)
    return [*args[: at + 1], str(value), *args[at + 2 :]]


def _campaign(*args: object) -> list[str]:
    return ["coding", "--campaign", "--tasks", "semver-precedence", *map(str, args), "--output-dir", "campaign-out"]


# Case -> argv, given the workspace and the bad files by kind.
REPORTED = {
    "paired plan --config FIFO": lambda ws, bad: _swap(ws.args(), "--config", bad["FIFO"]),
    "campaign --config FIFO": lambda ws, bad: _campaign("--config", bad["FIFO"]),
    "live run --plan FIFO": lambda ws, bad: ws.args("--live", "--approve-plan-digest", "0" * 64, "--plan", str(bad["FIFO"])),
    "plan digest PLAN FIFO": lambda ws, bad: ["plan", "digest", str(bad["FIFO"])],
    "campaign --providers-catalog FIFO": lambda ws, bad: _campaign("--providers-catalog", bad["FIFO"]),
    "paired plan --config LOOP": lambda ws, bad: _swap(ws.args(), "--config", bad["symlink loop"]),
    "campaign --providers-catalog LOOP": lambda ws, bad: _campaign("--providers-catalog", bad["symlink loop"]),
    "nonpaired --agent BINARY": lambda ws, bad: ["coding", "--agent", str(bad["binary file"]), "--tasks", "semver-precedence", "--output", "r.json", "--db", str(ws.db_path)],
}


@pytest.mark.parametrize("case", list(REPORTED))
def test_the_reported_invocations_are_refused_in_one_line(runner, quiet_home, case):
    ws = make_workspace(quiet_home)
    bad = {kind: _make(kind, quiet_home) for kind in ("FIFO", "symlink loop", "binary file")}
    args = REPORTED[case](ws, bad)
    before = _snapshot(quiet_home)
    with _fifo_never_hangs_the_suite(bad["FIFO"]):
        result = runner.invoke(cli, args)
    assert result.exit_code == 2, result.output
    line = _one_error_line(result)
    assert f"'{case.split()[-2]}'" in line, line
    assert any(word in line for word in ("FIFO", "symlink loop", "binary")), line
    assert _snapshot(quiet_home) == before
    assert ws.nothing_written()


# --- numbers no store, clock or machine can hold -------------------------------------------

HUGE = "9" * 23
OUT_OF_RANGE = {
    "verify CAMPAIGN_ID": (["verify", HUGE], "CAMPAIGN_ID"),
    "report CAMPAIGN_ID": (["report", HUGE, "--output", "r.json"], "CAMPAIGN_ID"),
    "export CAMPAIGN_ID": (["export", HUGE, "--output-dir", "shared"], "CAMPAIGN_ID"),
    "recover ATTEMPT_ID": (["recover", HUGE], "ATTEMPT_ID"),
    "worker --campaign-id": (["worker", "--campaign-id", HUGE], "--campaign-id"),
    "power --campaign": (["power", "--campaign", HUGE, "--effect", "0.1"], "--campaign"),
    "view --campaign": (["view", "--campaign", HUGE], "--campaign"),
    "campaign --seed": (_campaign("--providers", "offline", "--live", "--seed", 2**63), "--seed"),
    "campaign --timeout": (_campaign("--providers", "offline", "--live", "--timeout", HUGE), "--timeout"),
    "campaign --parallel-providers": (_campaign("--providers", "offline", "--live", "--parallel-providers", 10**9), "--parallel-providers"),
    "power --tasks": (["power", "--baseline-rate", "0.5", "--tasks", 10**11, "--effect", "0.1"], "--tasks"),
    "power --effect past 1": (["power", "--baseline-rate", "1", "--tasks", "12", "--effect", "0.1"], "--effect"),
    "power --effect below 0": (["power", "--baseline-rate", "0", "--tasks", "12", "--effect", "-0.3"], "--effect"),
}


@pytest.mark.parametrize("case", list(OUT_OF_RANGE))
def test_numbers_out_of_range_are_refused_in_one_line_naming_the_parameter(runner, quiet_home, case):
    """Past a store's 64-bit integers, a sane deadline or worker count, or a success rate's
    [0, 1]: exit 2 naming the parameter, nothing written (never an OverflowError traceback,
    a store left behind, or a plan made from a rate that cannot be)."""
    args, named = OUT_OF_RANGE[case]
    before = _snapshot(quiet_home)
    result = runner.invoke(cli, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    assert named in _one_error_line(result)
    assert _snapshot(quiet_home) == before
