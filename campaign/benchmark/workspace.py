"""What a task puts in an attempt's working copy: the fixture, the reference solution,
the hidden verifier and the command whose verdict decides.

The engine installs a verifier only after the agent ended, beneath directory
descriptors pinned before the agent ran: whatever the agent left at that name is
removed first, no link is followed and no mount crossed, so a working copy the
agent swapped for a link cannot send a single write elsewhere (VerifierRefused).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from campaign.benchmark.task import SOLVE_SCRIPT, VERIFIER_DIRNAME, Task
from campaign.digests import tree_digest
from campaign.errors import CampaignError
from campaign.supervise import disposal, pinned

#: The runner installed next to a unittest suite (not matched by ``test_*.py``).
RUNNER_NAME = "_run_hidden_suite.py"
_RUNNER_SOURCE = Path(__file__).resolve().parent / "verifier_runner.py"
#: Harbor: where the engine installs ``tests/`` and collects ``/logs/verifier`` in the
#: private root (the verifier sees them at /tests and /logs/verifier).
HARBOR_TESTS = "verifier-tests"
HARBOR_LOGS = "verifier-logs"
REWARD_FILES = ("reward.txt", "reward.json")
_REWARD_LIMIT = 64 * 1024
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")


class VerifierRefused(CampaignError):
    """The hidden verifier could not be installed without following or crossing something
    the agent left in the working copy (a link, a mount, an unremovable tree)."""


def fixture_digest(task: Task) -> str:
    """Content identity of the fixture, bound into the experiment before any paid call."""
    return tree_digest(task.fixture_dir) if task.fixture_dir.is_dir() else tree_digest_of_nothing()


def tree_digest_of_nothing() -> str:
    with tempfile.TemporaryDirectory(prefix="campaign-empty-") as empty:
        return tree_digest(Path(empty))


def copy_fixture(task: Task, dest: Path) -> None:
    """Put a fresh working copy at ``dest``, which must not exist or be empty.

    Refusing a non-empty ``dest`` guarantees no leftover from an earlier attempt can
    mix into this one. Symlinks are copied as links, never followed. A Harbor task's
    working copy is what its Dockerfile copies into /app."""
    dest = Path(dest)
    if dest.is_symlink() or (dest.exists() and (not dest.is_dir() or any(dest.iterdir()))):
        raise FileExistsError(f"fixture destination is not empty: {dest}")
    if not task.harbor:
        shutil.copytree(task.fixture_dir, dest, symlinks=True, ignore=_IGNORED, dirs_exist_ok=True)
        return
    dest.mkdir(exist_ok=True)
    for source, target in task.workspace:
        where = dest / target if target else dest
        if source.endswith("/"):
            shutil.copytree(task.fixture_dir / source, where, symlinks=True, ignore=_IGNORED, dirs_exist_ok=True)
        else:
            where.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(task.fixture_dir / source, where, follow_symlinks=False)


def fixture_files(task: Task) -> list[str]:
    """The working copy's files as sorted relative posix paths (caches excluded, like the digest)."""
    with tempfile.TemporaryDirectory(prefix="campaign-fixture-") as scratch:
        work = Path(scratch) / "work"
        copy_fixture(task, work)
        found = []
        for dirpath, dirnames, filenames in os.walk(work):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            found += [(Path(dirpath) / n).relative_to(work).as_posix() for n in filenames if not n.endswith(".pyc")]
    return sorted(found)


def apply_solution(task: Task, workdir: Path) -> int:
    """Solve the task in the working copy ``workdir``: overlay ``solution/``, or run its
    ``solve.sh`` there (its output goes to stderr). Returns the script's exit status (0 for
    an overlay). A Harbor script finds its files at /solution, as Harbor's oracle does,
    when the working copy is the mapped /app; otherwise in a private copy."""
    script = task.solution_script
    if script is None:
        shutil.copytree(task.solution_dir, Path(workdir), symlinks=True, ignore=_IGNORED, dirs_exist_ok=True)
        return 0
    with tempfile.TemporaryDirectory(prefix="campaign-solution-") as scratch:
        where = Path(scratch) / "solution"
        if task.harbor and _is_mapped_app(workdir):
            where = Path("/solution")  # the attempt's own root (a tmpfs), never the host's
        shutil.copytree(task.solution_dir, where, symlinks=True, ignore=_IGNORED, dirs_exist_ok=True)
        done = subprocess.run(["bash", str(where / SOLVE_SCRIPT)], cwd=workdir, stdin=subprocess.DEVNULL, stdout=sys.stderr, check=False)
    return done.returncode


def _is_mapped_app(workdir: Path) -> bool:
    try:
        return Path(workdir).resolve() == Path("/app") and os.path.samefile(workdir, "/app")
    except OSError:
        return False


# --- the verifier ---------------------------------------------------------------------


def install_verifier(task: Task, workdir: Path | int) -> Path:
    """Install an engine-format task's hidden verifier (and, for ``unittest``, its runner)
    in ``workdir``; return that directory (relative to the descriptor when ``workdir`` is
    a directory descriptor: pass the one the engine pinned before the agent ran)."""
    sources = _sources(task.verifier_dir)
    if task.verifier.kind == "unittest":
        sources.append((RUNNER_NAME, _RUNNER_SOURCE.read_bytes()))
    _install(workdir, VERIFIER_DIRNAME, sources)
    return Path(VERIFIER_DIRNAME) if isinstance(workdir, int) else Path(workdir) / VERIFIER_DIRNAME


def install_harbor_tests(task: Task, root_fd: int) -> None:
    """A Harbor task's ``tests/`` and an empty logs directory, fresh, in the pinned private root."""
    _install(root_fd, HARBOR_TESTS, _sources(task.verifier_dir))
    _install(root_fd, HARBOR_LOGS, [])


def _install(where: Path | int, dirname: str, sources: list[tuple[str, bytes | None]]) -> None:
    if isinstance(where, int):
        _install_at(where, dirname, sources)
        return
    fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _install_at(fd, dirname, sources)
    finally:
        os.close(fd)


def _install_at(parent_fd: int, dirname: str, sources: list[tuple[str, bytes | None]]) -> None:
    try:
        try:
            disposal.remove_entry(parent_fd, dirname)
        except FileNotFoundError:
            pass
        os.mkdir(dirname, 0o700, dir_fd=parent_fd)
        dest = pinned.open_dir(parent_fd, dirname)
        try:
            for relative, content in sources:
                if content is None:
                    parent, _, leaf = relative.rpartition("/")
                    where = pinned.open_dir(dest, parent) if parent else dest
                    try:
                        os.mkdir(leaf, 0o700, dir_fd=where)
                    finally:
                        if where != dest:
                            os.close(where)
                    continue
                fd = pinned.open_beneath(dest, relative, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(content)
        finally:
            os.close(dest)
    except disposal.Refused as exc:
        raise VerifierRefused(f"the working copy's {dirname} cannot be replaced safely ({exc.reason})") from None
    except OSError as exc:
        raise VerifierRefused(f"the hidden verifier cannot be installed ({os.strerror(exc.errno or 0)})") from None


def _sources(root: Path) -> list[tuple[str, bytes | None]]:
    """(relative path, content, or None for a directory), parents first; read before
    anything in the working copy is touched, so a packaging problem is never blamed on the agent."""
    found: list[tuple[str, bytes | None]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        base = Path(dirpath).relative_to(root)
        found += [((base / d).as_posix(), None) for d in dirnames]
        found += [((base / f).as_posix(), (Path(dirpath) / f).read_bytes()) for f in sorted(filenames) if not f.endswith(".pyc")]
    return found


def verifier_argv(task: Task, python: str, workdir: Path | None = None) -> list[str]:
    """The command, run with the working copy as cwd (a Harbor task's: /app), whose exit
    status is the verdict (0 == pass) unless a Harbor reward file says otherwise.

    The unittest runner: ``-I`` keeps the working copy, ``PYTHON*`` variables and user
    site out of the interpreter's startup (an agent's ``sitecustomize.py`` or ``json.py``
    cannot shadow the standard library); the runner then puts the working copy on the
    path after the standard library. ``-B`` leaves no bytecode in the working copy.
    Without ``workdir`` the runner is named relative to the cwd, for a verifier started
    in a pinned directory whose path may no longer lead to it.
    """
    if task.verifier.kind != "unittest":
        return list(task.verifier.argv)
    runner = Path(VERIFIER_DIRNAME) / RUNNER_NAME
    return [python, "-I", "-B", str(Path(workdir) / runner if workdir is not None else runner)]


def read_reward(logs_fd: int) -> bool | None:
    """A Harbor verifier's verdict from its reward file: full reward (1) passes, anything
    else fails, an unreadable or malformed file fails; None when it wrote none (then the
    exit code decides). Read as the regular file it must be, bounded, never followed."""
    for name in REWARD_FILES:
        try:
            raw = pinned.read_regular(logs_fd, name, expected=None, limit=_REWARD_LIMIT)
        except pinned.NotOurs as exc:
            if exc.reason == "missing":
                continue
            return False
        return _full_reward(raw, name)
    return None


def _full_reward(raw: bytes, name: str) -> bool:
    try:
        text = raw.decode("utf-8").strip()
        value = json.loads(text).get("reward") if name.endswith(".json") else float(text)
    except (UnicodeDecodeError, ValueError, AttributeError):
        return False
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 1
