"""The container runtime for tasks that ship their own environment (a Harbor Dockerfile).

The runtime is the machine's own (podman first, docker if that is what there is); it is
only ever asked to build from a local context and to start a local image with no network:
nothing is pulled. An image is tagged by the digest of its build context, so the same
context is the same tag and a changed one is a new image, never a rebuilt old one.

Every failure is one line: which task, which build step, and the runtime's own last line.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from campaign.digests import tree_digest
from campaign.errors import CampaignError, UsageProblem

RUNTIMES = ("podman", "docker")
OPTION = "--container-runtime"
# podman prints each step as "STEP 2/4: RUN make"; docker's BuildKit as "#6 [2/4] RUN make".
_STEP = re.compile(r"^(?:STEP \d+/\d+: |#\d+ \[[^\]]*\d+/\d+\] )(?P<step>.+)$")
_TAG_NAME = re.compile(r"[^a-z0-9._-]+")


class ContainerProblem(CampaignError):
    """The runtime could not build or run what it was asked to (one line: what, and why)."""


@dataclass(frozen=True)
class Runtime:
    name: str  # podman or docker
    executable: str


def find_runtime(choice: str | None = None, which: Callable[[str], str | None] = shutil.which) -> Runtime:
    """The runtime asked for, or the first of RUNTIMES found on PATH."""
    if choice is not None and choice not in RUNTIMES:
        raise UsageProblem(f"{choice!r} is not a container runtime this engine drives; choose {' or '.join(RUNTIMES)}", option=OPTION)
    for name in (choice,) if choice else RUNTIMES:
        path = which(name)
        if path:
            return Runtime(name, path)
    if choice:
        raise UsageProblem(f"{choice} is not installed here (not on PATH); install it or choose another runtime", option=OPTION)
    raise UsageProblem(f"a selected task needs a container image, and no container runtime ({', '.join(RUNTIMES)}) is on PATH; install podman", option=OPTION)


def image_tag(task: str, context: Path) -> str:
    """``localhost/campaign-task-NAME:DIGEST``: the same build context, the same tag."""
    name = _TAG_NAME.sub("-", task.lower()).strip("-._") or "task"
    return f"localhost/campaign-task-{name[:100]}:{tree_digest(context)[:32]}"


def build_image(runtime: Runtime, context: Path, tag: str, *, task: str, timeout: float = 1800.0) -> str:
    """Build ``context`` (its Dockerfile) as ``tag`` with no network; the image's ID."""
    # podman never pulls (a missing FROM image fails at once instead of waiting on a
    # registry this machine may not reach) and keeps no layer of its own steps (a failed
    # build leaves nothing behind).
    layers = ["--pull=never", "--layers=false"] if runtime.name == "podman" else []
    argv = [runtime.executable, "build", *layers, "--network", "none", "--tag", tag, "--file", str(context / "Dockerfile"), str(context)]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ContainerProblem(f"task {task}: its image did not build within {timeout:.0f} s") from None
    if done.returncode != 0:
        step = _last_step(done.stdout + "\n" + done.stderr)
        where = f" at {step}" if step else ""
        why = last_line(done.stderr or done.stdout)
        if step and step.upper().startswith("FROM "):
            why += "; nothing is pulled: build or load that image on this machine first"
        raise ContainerProblem(f"task {task}: its image failed to build{where}: {why}")
    return image_id(runtime, tag)


def image_id(runtime: Runtime, ref: str) -> str:
    done = _run(runtime, ["image", "inspect", "--format", "{{.Id}}", ref])
    if done.returncode != 0 or not done.stdout.strip():
        raise ContainerProblem(f"image {ref} is not in {runtime.name}'s store: {last_line(done.stderr)}")
    return done.stdout.strip().removeprefix("sha256:")


@dataclass(frozen=True)
class Exited:
    """How a command run in a container ended: its status, or None when it ran past its time."""

    returncode: int | None
    stderr: str = ""

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


# --- the commands, as argv ----------------------------------------------------------
# An attempt runs each of these as a supervised member (the runner starts no child of its
# own while its supervisor is active); the check runs them as plain subprocesses.

# The label every container the engine starts carries: ``campaign.attempt=NAME``.
ATTEMPT_LABEL = "campaign.attempt"


def attempt_container_name(cgroup_name: str) -> str:
    """An attempt's container is named from its stored row (as its cgroup is), so a
    recovery that has only the store finds it, even one whose runner died before it
    learned the container's ID; the runtime refuses a second container of one name."""
    return f"campaign-{cgroup_name}"


@dataclass(frozen=True)
class Mount:
    """A host directory in the container (read-only unless said otherwise)."""

    source: Path
    target: str
    writable: bool = False

    def args(self) -> list[str]:
        return ["--volume", f"{self.source}:{self.target}:{'rw' if self.writable else 'ro'}"]


def run_argv(
    runtime: Runtime,
    image: str,
    *,
    name: str | None = None,
    labels: Mapping[str, str] | None = None,
    cgroup_parent: str | None = None,
    mounts: Sequence[Mount] = (),
    tmpfs: Sequence[str] = (),
) -> list[str]:
    """A fresh detached container of ``image``, no network, idle until commands are run in
    it. ``cgroup_parent``: the cgroup its processes live under (an attempt's own, so the
    attempt's proof of teardown covers them); ``tmpfs``: private directories (mode 0700)."""
    argv = [runtime.executable, "run", "--detach", "--network", "none"]
    argv += ["--name", name] if name else []
    for key, value in (labels or {}).items():
        argv += ["--label", f"{key}={value}"]
    argv += ["--cgroup-parent", cgroup_parent] if cgroup_parent else []
    for mount in mounts:
        argv += mount.args()
    for target in tmpfs:
        argv += ["--tmpfs", f"{target}:mode=0700"]
    return [*argv, image, "sleep", "infinity"]


def exec_argv(
    runtime: Runtime, container: str, argv: Sequence[str], *, workdir: str | None = None, env: Mapping[str, str] | None = None, passed: Sequence[str] = ()
) -> list[str]:
    """``passed``: variables named without a value, which the runtime's client copies from
    its own environment: a credential never appears on a command line (``/proc/*/cmdline``)."""
    where = ["--workdir", workdir] if workdir else []
    for key, value in (env or {}).items():
        where += ["--env", f"{key}={value}"]
    for key in passed:
        where += ["--env", key]
    return [runtime.executable, "exec", *where, container, *argv]


def pid_argv(runtime: Runtime, container: str) -> list[str]:
    """Prints the host's pid of the running container's first process."""
    return [runtime.executable, "inspect", "--format", "{{.State.Pid}}", container]


def cp_argv(runtime: Runtime, source: str, target: str) -> list[str]:
    """``podman cp``: one side is ``CONTAINER:PATH``."""
    return [runtime.executable, "cp", source, target]


def stop_argv(runtime: Runtime, container: str) -> list[str]:
    """Everything in the container ended at once; its filesystem kept (``start_argv``)."""
    return [runtime.executable, "stop", "--time", "0", container]


def start_argv(runtime: Runtime, container: str) -> list[str]:
    return [runtime.executable, "start", container]


def rm_argv(runtime: Runtime, container: str) -> list[str]:
    return [runtime.executable, "rm", "--force", "--time", "0", container]


def exists_argv(runtime: Runtime, container: str) -> list[str]:
    """Exits 0 while the runtime has the container, 1 once it has not."""
    return [runtime.executable, "container", "exists", container]


# What the runtime's own client needs of the caller's environment.
_CLI_ENV = ("PATH", "LANG", "CONTAINERS_CONF", "XDG_RUNTIME_DIR")


def cli_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The runtime client's environment: its configuration, never a credential."""
    return {key: environ[key] for key in _CLI_ENV if key in environ}


def exists(runtime: Runtime, container: str) -> bool | None:
    """Whether the runtime still has the container; None when it cannot say."""
    done = _run(runtime, exists_argv(runtime, container)[1:])
    return {0: True, 1: False}.get(done.returncode)


# --- run directly (the check, which has no supervisor) -----------------------------


def start(runtime: Runtime, image: str, *, labels: Mapping[str, str] | None = None) -> str:
    """A fresh container of ``image`` with no network, idle until commands are run in it
    (``exec_in``); its ID. The caller removes it (``remove``), whatever happens."""
    done = _run(runtime, run_argv(runtime, image, labels=labels)[1:])
    if done.returncode != 0 or not done.stdout.strip():
        raise ContainerProblem(f"{runtime.name} cannot start a container of {image}: {hint(last_line(done.stderr))}")
    return done.stdout.strip()


def exec_in(runtime: Runtime, container: str, argv: Sequence[str], *, timeout: float, workdir: str | None = None, env: Mapping[str, str] | None = None) -> Exited:
    """Run ``argv`` in the container; past ``timeout`` the runtime's client is killed and the
    result is a timeout (the command itself ends when the container is removed)."""
    try:
        done = subprocess.run(
            exec_argv(runtime, container, argv, workdir=workdir, env=env), stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace", timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return Exited(None)
    return Exited(done.returncode, done.stderr)


def copy_in(runtime: Runtime, container: str, source: Path, target: str) -> None:
    """Copy the directory ``source`` into the container as ``target`` (which must not exist)."""
    done = _run(runtime, cp_argv(runtime, str(source), f"{container}:{target}")[1:])
    if done.returncode != 0:
        raise ContainerProblem(f"{runtime.name} cannot copy {source} into its container: {last_line(done.stderr)}")


def copy_out(runtime: Runtime, container: str, source: str, target: Path) -> bool:
    """Copy the container's directory ``source`` to ``target`` (which must not exist); False
    when the container holds no such directory."""
    done = _run(runtime, cp_argv(runtime, f"{container}:{source}", str(target))[1:])
    return done.returncode == 0


def remove(runtime: Runtime, container: str) -> None:
    """Remove the container and end everything in it (once more if the first try fails:
    after its processes were killed the runtime may still report its state improper)."""
    done = _run(runtime, rm_argv(runtime, container)[1:])
    if done.returncode != 0:
        done = _run(runtime, rm_argv(runtime, container)[1:])
    if done.returncode != 0:
        raise ContainerProblem(f"{runtime.name} cannot remove container {container[:12]}: {last_line(done.stderr)}")


def containers_labelled(runtime: Runtime, key: str, value: str) -> list[str]:
    """The IDs of every container, running or not, that carries the label ``key=value``."""
    done = _run(runtime, ["ps", "--all", "--quiet", "--no-trunc", "--filter", f"label={key}={value}"])
    if done.returncode != 0:
        raise ContainerProblem(f"{runtime.name} cannot list its containers: {last_line(done.stderr)}")
    return done.stdout.split()


def remove_image(runtime: Runtime, ref: str) -> None:
    done = _run(runtime, ["image", "rm", "--force", ref])
    if done.returncode != 0:
        raise ContainerProblem(f"{runtime.name} cannot remove image {ref}: {last_line(done.stderr)}")


def _run(runtime: Runtime, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([runtime.executable, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace", timeout=120)


# What a runtime says when this machine needs a setting, and the setting (containers.conf).
_SETTINGS = (
    ("cgroups in hybrid mode", 'its OCI runtime cannot run here: set runtime = "runc" under [engine] in containers.conf'),
    ("setrlimit", "its default ulimits cannot be set here: set default_ulimits = [] under [containers] in containers.conf"),
)


def hint(line: str) -> str:
    """The runtime's line, with the setting this machine needs when it names one."""
    return next((f"{line} ({setting})" for marker, setting in _SETTINGS if marker in line), line)


def _last_step(output: str) -> str | None:
    steps = [m.group("step").strip() for m in map(_STEP.match, output.splitlines()) if m]
    return steps[-1] if steps else None


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(it printed nothing)"
