"""Per-attempt isolation: a private root, an allowlisted environment, loopback ports.

Every attempt gets a fresh ``campaign-paired-runtime-*`` directory (mode 0700)
under the runner's temporary directory, holding the agent's HOME, TMPDIR, cwd
(where the fixture copy goes), private store, captures, an operator token and a
secret key. The token and key are random, live only in 0600 files and are never
put in a repr, a log line or the environment.

The child environment is built from an allowlist: PATH, LANG, LC_ALL, the SDK
path variables the agent profile names (fixed *before* HOME is replaced) and
the approved credential variables. Nothing else from the parent reaches it: no
proxies, no dotenv, no ambient agent settings.
"""

from __future__ import annotations

import ipaddress
import os
import re
import secrets
import socket
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from campaign.errors import UsageProblem

ROOT_PREFIX = "campaign-paired-runtime-"
MINIMAL_VARS = ("PATH", "LANG", "LC_ALL")
LOOPBACK = "127.0.0.1"
_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


@dataclass(frozen=True)
class PrivateRoot:
    """One attempt's private state. ``dev``/``ino`` pin the directory created here;
    disposal refuses a root whose identity no longer matches."""

    path: Path
    dev: int
    ino: int
    uid: int
    home: Path
    tmpdir: Path
    cwd: Path
    store_path: Path
    captures: Path
    operator_token_path: Path = field(repr=False)
    secret_key_path: Path = field(repr=False)

    @property
    def cleanup_log(self) -> Path:
        return self.path / "cleanup.log"

    @property
    def lock_path(self) -> Path:
        return self.path / "supervisor.lock"

    def operator_token(self) -> str:
        return self.operator_token_path.read_text(encoding="ascii")

    def secret_key(self) -> str:
        return self.secret_key_path.read_text(encoding="ascii")

    def capture(self, name: str) -> Path:
        """A path for a stdout/stderr capture file inside the root. Once agent code may
        run, the engine opens captures only through ``campaign.lanes.pinned_root``: this
        path may by then lead anywhere the agent pointed it."""
        if "/" in name or name in ("", ".", ".."):
            raise ValueError(f"capture name must be a plain file name, not {name!r}")
        return self.captures / name


def _write_secret(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, secrets.token_hex(32).encode("ascii"))
    finally:
        os.close(fd)


def new_root_path(tmp_base: str | os.PathLike[str] | None = None) -> Path:
    """A fresh, unused private root path under ``tmp_base`` (default: the runner's temp
    dir), not yet created: the store records it first, so no root exists unnamed."""
    base = Path(tmp_base) if tmp_base is not None else Path(tempfile.gettempdir())
    return base.absolute() / f"{ROOT_PREFIX}{secrets.token_hex(6)}"


def create_private_root(tmp_base: str | os.PathLike[str] | None = None, *, path: Path | None = None) -> PrivateRoot:
    """Create a fresh private root at ``path`` (from ``new_root_path``) or under ``tmp_base``."""
    if path is None:
        base = Path(tmp_base) if tmp_base is not None else Path(tempfile.gettempdir())
        path = Path(tempfile.mkdtemp(prefix=ROOT_PREFIX, dir=base))  # mkdtemp: mode 0700, O_EXCL
    else:
        os.mkdir(path, 0o700)  # fails if it exists, as mkdtemp's O_EXCL does
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or stat.S_IMODE(st.st_mode) != 0o700 or st.st_uid != os.geteuid():
        raise UsageProblem(f"the private root {path} was not created as a private 0700 directory; check the temp dir")
    home, tmpdir, cwd, store, captures, secret_dir = (path / n for n in ("home", "tmp", "work", "store", "captures", "secrets"))
    for d in (home, tmpdir, cwd, store, captures, secret_dir):
        d.mkdir(mode=0o700)
    token, key = secret_dir / "operator_token", secret_dir / "secret_key"
    _write_secret(token)
    _write_secret(key)
    return PrivateRoot(
        path=path,
        dev=st.st_dev,
        ino=st.st_ino,
        uid=st.st_uid,
        home=home,
        tmpdir=tmpdir,
        cwd=cwd,
        store_path=store / "agent-store",
        captures=captures,
        operator_token_path=token,
        secret_key_path=key,
    )


def _original_home(parent_env: Mapping[str, str]) -> Path:
    home = parent_env.get("HOME")
    if home:
        return Path(home)
    try:
        import pwd

        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError):
        return Path.home()


def _resolve(value: str, home: Path, cwd: Path) -> str:
    if value == "~" or value.startswith("~/"):
        value = str(home) + value[1:]
    p = Path(value)
    return str(p if p.is_absolute() else (cwd / p))


def resolve_sdk_paths(
    sdk_path_vars: Mapping[str, str | None],
    parent_env: Mapping[str, str],
    original_cwd: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """Fix SDK locations before HOME is replaced.

    ``sdk_path_vars`` maps a variable name to its default relative to the
    original home (e.g. ``{"MIX_HOME": ".mix"}``) or None for "explicit only".
    An explicit value in ``parent_env`` wins; ``~`` and relative paths resolve
    against the original home and cwd.
    """
    home = _original_home(parent_env)
    cwd = Path(original_cwd) if original_cwd is not None else Path.cwd()
    out: dict[str, str] = {}
    for name, default in sdk_path_vars.items():
        _check_name(name, "SDK path variable")
        explicit = parent_env.get(name)
        if explicit:
            out[name] = _resolve(explicit, home, cwd)
        elif default is not None:
            out[name] = _resolve(default, home, home)
    return out


def _check_name(name: str, what: str) -> None:
    if not _NAME.match(name):
        raise UsageProblem(f"{what} {name!r} is not an upper-case environment variable name")


def build_env(
    root: PrivateRoot,
    parent_env: Mapping[str, str] | None = None,
    *,
    sdk_path_vars: Mapping[str, str | None] | None = None,
    credential_names: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
    original_cwd: str | os.PathLike[str] | None = None,
    home: Path | None = None,
) -> dict[str, str]:
    """The child's whole environment, built from an allowlist.

    Every approved credential must be present in ``parent_env`` (a missing one is
    an error, never a silent omission). ``extra`` carries engine-chosen values
    (usually paths inside the root) and wins over everything but HOME/TMPDIR.
    HOME is the root's own unless ``home`` names another directory of the root.
    """
    parent = os.environ if parent_env is None else parent_env
    env = {name: parent[name] for name in MINIMAL_VARS if name in parent}
    env.update(resolve_sdk_paths(sdk_path_vars or {}, parent, original_cwd))
    missing = []
    for name in credential_names:
        _check_name(name, "credential variable")
        if parent.get(name):
            env[name] = parent[name]
        else:
            missing.append(name)
    if missing:
        raise UsageProblem(f"approved credential variable(s) not set: {', '.join(sorted(missing))}; export them before launching")
    for name, value in (extra or {}).items():
        _check_name(name, "environment variable")
        env[name] = str(value)
    env["HOME"] = str(home if home is not None else root.home)
    env["TMPDIR"] = str(root.tmpdir)
    return env


def listen_address(fixed_port: int | None = None) -> tuple[str, int]:
    """Where a runtime listener binds: loopback, port 0 (OS-chosen) unless fixed."""
    if fixed_port is None:
        return LOOPBACK, 0
    if not isinstance(fixed_port, int) or isinstance(fixed_port, bool) or not 1 <= fixed_port <= 65535:
        raise UsageProblem(f"port must be an integer in 1..65535, not {fixed_port!r}", option="--control-plane-port")
    return LOOPBACK, fixed_port


def free_loopback_port() -> int:
    """An OS-chosen free loopback port, for agents that need a number up front.

    The port is free when returned, not reserved; prefer passing 0 to the agent.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


__all__ = ["PrivateRoot", "build_env", "create_private_root", "new_root_path", "free_loopback_port", "listen_address", "resolve_sdk_paths"]


def as_loopback(host: str) -> str | None:
    """The loopback address ``host`` names ("localhost" is 127.0.0.1), or None when it
    is not one: what the local servers (replay provider, view) may bind without asking."""
    if host == "localhost":
        return LOOPBACK
    try:
        return host if ipaddress.ip_address(host).is_loopback else None
    except ValueError:
        return None
