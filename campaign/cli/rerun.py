"""This very command line, to print as the next step (lean: the entry imports it before click)."""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Sequence


def program() -> list[str]:
    """How this process was started, so printed next steps run as typed."""
    return [sys.executable, "-m", "campaign"] if sys.argv[0].endswith("__main__.py") else [sys.argv[0]]


# The password of a URL (a --db postgresql://user:PASSWORD@host/db), up to its last "@".
_PASSWORD = re.compile(r"(://[^/:@\s]*:)[^\s]*@(?=[^@]*$)")


def shown(arg: str) -> str:
    """An argument as a printed line may show it: a URL's password is a credential, shown
    as ``***`` (as ``describe`` shows a store), so the operator puts it back, or leaves it
    out for libpq to take from PGPASSWORD or ~/.pgpass."""
    return _PASSWORD.sub(r"\1***@", arg)


def rerun_command(*extra: str, drop: Sequence[str] = ()) -> str:
    """This command line with the flags ``extra`` added (once) and the flags ``drop`` removed."""
    args = [a for a in sys.argv[1:] if a not in drop]
    return shlex.join([*program(), *(shown(a) for a in args), *(flag for flag in extra if flag not in args)])


def continue_command() -> str:
    """What continues this command after a stop: a campaign resumes (``--resume`` on an
    empty --output-dir starts it, so adding it is always right); anything else runs again."""
    return rerun_command("--resume") if "--campaign" in sys.argv[1:] else rerun_command()
