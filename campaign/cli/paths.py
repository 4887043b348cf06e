"""The parameter types of every file and directory a command takes, checked while parsing.

A bad path is refused by click itself (exit 2, "Invalid value for '--config'"),
before any other option is looked at and before anything is read, written or
started. Each type says what the command will do with the path:

- ``InputFile``: a file it reads (text must be UTF-8: read once here to know);
- ``InputDir``: a directory it reads;
- ``OutputFile`` / ``OutputDir``: a file it (re)writes, a directory it writes into;
- ``StoreTarget`` (``--db``) and ``AgentProfileRef`` (``--agent NAME|FILE.toml``).

The engine's readers check again as they open (``campaign.inputs``); these
types only make every refusal happen first, in the same words. A FIFO, a
device, a directory given for a file, a symlink loop and a binary file are
all refused by name. A path with nothing there passes: whether that is a
mistake depends on the mode (``--config`` without ``--paired`` is refused for
that first), so the command that would read it says so.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import click

from campaign import inputs
from campaign.agents.profiles import names_a_file
from campaign.errors import UsageProblem


@contextlib.contextmanager
def _refused_as(param_type: click.ParamType, param: click.Parameter | None, ctx: click.Context | None) -> Iterator[None]:
    """A UsageProblem from a check becomes click's own refusal of this parameter."""
    try:
        yield
    except UsageProblem as exc:
        param_type.fail(exc.reason, param, ctx)


def _stat(path: Path) -> os.stat_result | None:
    """``os.stat`` following symlinks; None when nothing is there; a loop is refused."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageProblem(f"{path} {inputs.stat_problem(exc)}") from None


def _writable_place(path: Path) -> None:
    """The nearest existing ancestor of ``path`` must be a directory this process may write into.

    Permission bits stop nothing for root, so a path under a regular file, or in
    a place such as /proc/self, is what is refused there.
    """
    probe = path.absolute()
    st = _stat(probe)
    while st is None and probe != probe.parent:
        probe = probe.parent
        st = _stat(probe)
    if st is None or not stat.S_ISDIR(st.st_mode):
        raise UsageProblem(f"{probe} is not a directory, so {path} cannot be created; choose a directory you can write to")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UsageProblem(f"{probe} is not writable; choose a directory you can write to")


def _check_input_file(path: Path, what: str, *, text: bool) -> None:
    if _stat(path) is None:
        return
    if text:
        inputs.read_text(path, None, what)
    else:
        inputs.check_regular(path, None, what)


class InputFile(click.Path):
    """An existing regular file the command reads; with ``text``, UTF-8 text."""

    def __init__(self, what: str, *, text: bool = True) -> None:
        super().__init__(dir_okay=False, path_type=Path)
        self.what = what
        self.text = text

    def convert(self, value, param, ctx):
        with _refused_as(self, param, ctx):
            _check_input_file(Path(value).expanduser(), self.what, text=self.text)
        return Path(value)


class InputDir(click.Path):
    """A directory the command reads."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value, param, ctx):
        with _refused_as(self, param, ctx):
            st = _stat(Path(value).expanduser())
            if st is not None and not stat.S_ISDIR(st.st_mode):
                raise UsageProblem(f"{value} is {inputs.kind_of(st.st_mode) or 'a file'}, not a directory")
        return Path(value)


class _Output(click.Path):
    """What a command writes: nothing there yet or the kind it writes, in a place it may write in."""

    directory: bool

    def __init__(self) -> None:
        super().__init__(file_okay=not self.directory, dir_okay=self.directory, path_type=Path)

    def convert(self, value, param, ctx):
        path = Path(value).expanduser()
        with _refused_as(self, param, ctx):
            if not str(value).strip():
                # Path("") is ".": an empty value would write into the current directory unasked.
                raise UsageProblem("is empty; give the path to write to (an empty value is never the current directory)")
            st = _stat(path)
            kind = inputs.kind_of(st.st_mode) if st is not None else None  # None: a regular file, or nothing
            if st is not None and self.directory and not stat.S_ISDIR(st.st_mode):
                raise UsageProblem(f"{value} is {kind or 'a file'}, not a directory; choose a directory you can write to")
            if not self.directory and kind is not None:
                raise UsageProblem(f"{value} is {kind}; give the path of a file to write")
            _writable_place(path if self.directory else path.parent)
        return Path(value)


class OutputFile(_Output):
    """A file the command writes or replaces: absent or a regular file."""

    directory = False


class OutputDir(_Output):
    """A directory the command creates or writes into."""

    directory = True


class StoreTarget(click.ParamType):
    """``--db``: a SQLAlchemy URL (checked when the store is opened) or a SQLite file path.

    A path must be nothing yet (a new store) or a regular SQLite file: never a
    FIFO the header read would wait on, nor a device a new store would be
    written into.
    """

    name = "URL|PATH"

    def convert(self, value, param, ctx):
        if "://" not in value:
            # Here, not at the top: every command's options are built at import, and
            # SQLAlchemy (which the store's module needs) costs a fifth of a second.
            from campaign.store.engine import check_sqlite_path

            with _refused_as(self, param, ctx):
                check_sqlite_path(Path(os.path.abspath(Path(value).expanduser())), value, must_exist=False)
        return value


class AgentProfileRef(click.ParamType):
    """``--agent``: a built-in profile name (checked when loaded) or a profile FILE.toml."""

    name = "NAME|FILE.toml"

    def convert(self, value, param, ctx):
        if names_a_file(value):
            with _refused_as(self, param, ctx):
                _check_input_file(Path(value).expanduser(), "agent profile", text=True)
        return value
