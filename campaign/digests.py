"""Content digests that bind an experiment's identity.

Every digest here is over file *contents* and relative names, never over mtimes or
absolute paths, so the same tree hashes the same on any machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from campaign.canonical import spec_digest

_CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def digest_entries(entries: list[tuple[str, str]]) -> str:
    """Digest of (relative posix name, content sha256) pairs, order-independent."""
    h = hashlib.sha256()
    for name, content in sorted(entries):
        h.update(name.encode("utf-8"))
        h.update(b"\0")
        h.update(content.encode("ascii"))
        h.update(b"\n")
    return h.hexdigest()


def tree_digest(root: Path) -> str:
    """Digest of every regular file and symlink under ``root`` (names + contents).

    Symlinks are hashed by their target text, never followed, so a fixture cannot
    pull outside content into its identity.
    """
    root = Path(root)
    entries: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        # os.walk lists a link to a directory among the directories and does not follow
        # it: hashed here by its target, or retargeting it would leave the digest as it was.
        linked_dirs = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in filenames + linked_dirs:
            if name.endswith(".pyc"):
                continue
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                target = os.readlink(full)
                entries.append((rel, "symlink:" + hashlib.sha256(target.encode()).hexdigest()))
            elif full.is_file():
                entries.append((rel, file_sha256(full)))
    return digest_entries(entries)


# --- experiment identity digests -------------------------------------------

def bytes_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class GitProblem(RuntimeError):
    """A git query about a source checkout failed (not a checkout, git missing, ...)."""


def _git_env() -> dict[str, str]:
    # GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE ... from the caller's shell would point
    # git at another repository than the one we name with -C.
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            env=_git_env(),
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
    except FileNotFoundError:
        raise GitProblem("git is not installed or not on PATH") from None
    except subprocess.TimeoutExpired:
        raise GitProblem(f"git {args[0]} did not finish within 120 s") from None


def _git_failure(proc: subprocess.CompletedProcess[bytes]) -> str:
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else f"git exited with status {proc.returncode}"


def git_toplevel(path: Path) -> Path | None:
    """The root of the git work tree that holds ``path``; None when there is none."""
    proc = _git(Path(path), "rev-parse", "--show-toplevel")
    if proc.returncode != 0:
        return None
    return Path(os.fsdecode(proc.stdout.rstrip(b"\n")))


def git_revision(root: Path) -> str | None:
    """``HEAD``'s commit id, or None for a repository without commits."""
    proc = _git(Path(root), "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("ascii").strip()


def source_files(root: Path) -> list[str]:
    """Tracked plus untracked-but-not-ignored paths under ``root``, sorted, deduplicated."""
    proc = _git(Path(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if proc.returncode != 0:
        raise GitProblem(_git_failure(proc))
    # An unmerged path is listed once per stage; the set removes the repeats.
    return sorted({os.fsdecode(name) for name in proc.stdout.split(b"\0") if name})


def _source_entry(root: str, name: str) -> tuple[str, str]:
    """(name, content tag) for one listed path, never following a symlink.

    A tracked file deleted from the work tree is ``missing`` (a dirty checkout
    differs from its HEAD); a submodule or nested repository is ``directory``; a
    FIFO or socket is ``special`` and is never opened. A name that is not UTF-8
    enters the digest with its odd bytes backslash-escaped.
    """
    label = os.fsencode(name).decode("utf-8", "backslashreplace")
    full = os.path.join(root, name)
    try:
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            return label, "symlink:" + bytes_sha256(os.fsencode(os.readlink(full)))
        if stat.S_ISDIR(st.st_mode):
            return label, "directory"
        if not stat.S_ISREG(st.st_mode):
            return label, "special"
        fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return label, "missing"
    h = hashlib.sha256()
    try:
        while chunk := os.read(fd, _CHUNK):
            h.update(chunk)
    finally:
        os.close(fd)
    mode = "x" if st.st_mode & 0o111 else "f"
    return label, f"{mode}:{h.hexdigest()}"


def source_digest(root: Path, *, workers: int | None = None) -> str:
    """Digest of the contents of every tracked and non-ignored untracked file.

    The file list comes from ``git ls-files --cached --others --exclude-standard``,
    so a dirty or extended checkout differs from its HEAD revision, while ignored
    build output does not count. The executable bit is part of a file's identity
    (git tracks it too). The files are split into a few interleaved batches read
    on threads: reads and the hashing of large buffers release the GIL, and one
    task per batch (not per file) keeps the pool's own overhead out of the way.
    """
    root = Path(root)
    names = source_files(root)
    base = str(root)
    workers = workers or min(4, os.cpu_count() or 1)

    def batch(part: list[str]) -> list[tuple[str, str]]:
        return [_source_entry(base, name) for name in part]

    if workers <= 1 or len(names) < 256:
        return digest_entries(batch(names))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        parts = pool.map(batch, [names[i::workers] for i in range(workers)])
        return digest_entries([entry for part in parts for entry in part])


def build_digest(root: Path, artifacts: Sequence[Path]) -> str:
    """``compiled_build_digest``: names (relative to ``root``) and contents of the artifacts.

    The analogue of hashing every ``ebin/*.beam``: the bytes the agent actually
    loads, so symlinked artifacts are hashed by content. The caller selects the
    files (the agent profile's globs); an empty selection has the fixed digest of
    no entries.
    """
    root = Path(root).resolve()
    entries = []
    for path in artifacts:
        path = Path(path).resolve()
        if not path.is_relative_to(root):
            raise ValueError(f"build artifact {path} is outside {root}")
        entries.append((path.relative_to(root).as_posix(), file_sha256(path)))
    return digest_entries(entries)


# --- the profiler's interpreter ---------------------------------------------

MIN_PROFILE_PYTHON = (3, 11)

_PROBE = """\
import json, sys
def installed(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return None
print(json.dumps({"executable": sys.executable, "version": sys.version,
                  "version_info": list(sys.version_info[:3]), "tiktoken": installed("tiktoken"),
                  "aiohttp": installed("aiohttp")}))
"""


@dataclass(frozen=True)
class PythonInfo:
    executable: Path  # the resolved interpreter binary
    version: str  # sys.version
    version_info: tuple[int, int, int]
    tiktoken: str | None  # the installed tiktoken distribution's version, if any
    # The recording proxy's HTTP library (not part of the digest: the proxy records, it does not count).
    aiohttp: str | None = None


class NotAPython(ValueError):
    """The given program is not a usable Python interpreter."""


def probe_python(path: Path, timeout: float = 15.0) -> PythonInfo:
    """Run ``path`` in isolated mode (``-I``) and ask it who it is.

    Raises NotAPython when it does not run, times out, or does not answer like
    a Python 3 interpreter.
    """
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    try:
        proc = subprocess.run(
            [str(path), "-I", "-c", _PROBE],
            capture_output=True,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise NotAPython(f"{path} did not answer within {timeout:g} s") from None
    except OSError as exc:
        raise NotAPython(f"{path} cannot be run ({exc.strerror or exc.__class__.__name__})") from None
    if proc.returncode != 0:
        raise NotAPython(f"{path} is not a Python 3 interpreter (it exited with status {proc.returncode})")
    try:
        answer = json.loads(proc.stdout.decode("utf-8").strip().splitlines()[-1])
        info = PythonInfo(
            executable=Path(os.path.realpath(answer["executable"] or path)),
            version=str(answer["version"]),
            version_info=tuple(int(v) for v in answer["version_info"]),  # type: ignore[arg-type]
            tiktoken=answer["tiktoken"] if isinstance(answer["tiktoken"], str) else None,
            aiohttp=answer.get("aiohttp") if isinstance(answer.get("aiohttp"), str) else None,
        )
    except (ValueError, KeyError, IndexError, TypeError):
        raise NotAPython(f"{path} did not answer like a Python 3 interpreter") from None
    if len(info.version_info) != 3:
        raise NotAPython(f"{path} did not answer like a Python 3 interpreter")
    return info


def python_digest(binary: Path, version: str, tiktoken: str | None = None) -> str:
    """Identity of the profiler's interpreter: its binary's bytes, version and tiktoken."""
    identity = {"binary_sha256": file_sha256(Path(binary)), "version": version, "tiktoken": tiktoken}
    return spec_digest(identity)
