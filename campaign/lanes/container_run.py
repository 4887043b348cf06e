"""One attempt's container, driven through the attempt's supervisor.

A task that ships its environment as an image runs its attempt in a fresh container of
that image. Every command of the container's life (start, the client, the stop before
the verifier, the verifier, removal) is a supervised member: ``podman`` is started by
the supervisor, its ledger row written before it execs, so the runtime's own processes
(conmon, the container's pid 1, the exec sessions) are the attempt's descendants, in the
attempt's cgroup (``--cgroup-parent``), and the attempt's proof of teardown covers them.

Measured on podman 4.3 with runc (issue 54): a stopped ``podman exec`` leaves the command
it started running in the container, so the agent is ended by stopping the container
(``stop``), which the supervisor's quiesce then proves; the container is started again,
with its filesystem, for the verifier. Removal is the last supervised step; after the
supervisor's teardown the runner asks the runtime whether the container is gone
(``gone``), and one that is not is kept and named, never claimed removed.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from campaign import containers, listeners
from campaign.containers import Mount, Runtime, cli_env
from campaign.supervise import Supervisor, container_record
from campaign.supervise.cgroup import cgroup2_mount, remove_v1_twins
from campaign.supervise.gate import Stdio
from campaign.supervise.teardown import RunResult

# Each runtime command is quick (0.1-0.4 s measured); these bound a wedged runtime.
STEP_TIMEOUT_S = 120.0
@dataclass
class ContainerSession:
    """The container of one attempt: ``name`` (``containers.attempt_container_name``)."""

    sup: Supervisor
    runtime: Runtime
    name: str
    env: Mapping[str, str]
    logs: Path  # each step's output goes to a file here (the attempt's private root)
    steps: int = field(default=0, init=False)
    last_output: Path | None = field(default=None, init=False)

    @classmethod
    def for_attempt(cls, sup: Supervisor, runtime: Runtime, environ: Mapping[str, str]) -> ContainerSession:
        if sup.cgroup is None:
            # --cgroup-parent is the witness that every process of the container was the
            # attempt's: without a cgroup of its own nothing could prove them gone.
            raise containers.ContainerProblem("a container attempt needs the attempt's own cgroup (a writable cgroup v2 with cgroup.kill), and this machine gives none")
        name = containers.attempt_container_name(os.path.basename(sup.cgroup.path))
        return cls(sup, runtime, name, cli_env(environ), Path(sup.root.path))

    @property
    def cgroup_parent(self) -> str:
        assert self.sup.cgroup is not None
        return "/" + os.path.relpath(self.sup.cgroup.path, cgroup2_mount() or "/")

    def step(
        self,
        role: str,
        argv: Sequence[str],
        *,
        timeout: float = STEP_TIMEOUT_S,
        stdout: Stdio = None,
        stderr: Stdio = None,
        env: Mapping[str, str] | None = None,
        stop_when: Callable[[], bool] | None = None,
    ) -> RunResult:
        """One runtime command as a supervised member; its output to a file of its own
        unless the caller gives where (the client's and the verifier's captures).
        ``env``: added to the runtime client's own environment (what it passes by name)."""
        self.steps += 1
        out = self.logs / f"container-{self.steps:02d}-{role}"
        self.last_output = Path(f"{out}.out") if stdout is None else None
        return self.sup.run(
            role,
            list(argv),
            timeout=timeout,
            env=dict(self.env) | dict(env or {}),
            stdout=f"{out}.out" if stdout is None else stdout,
            stderr=f"{out}.err" if stderr is None else stderr,
            stop_when=stop_when,
        )

    def output(self) -> str:
        """The last step's standard output."""
        return self.last_output.read_text(errors="replace") if self.last_output else ""

    def start(self, image: str, *, mounts: Sequence[Mount] = (), tmpfs: Sequence[str] = ()) -> None:
        """The container, up; ContainerProblem (the machine's failure, never the agent's)
        with the runtime's last line, and the setting it needs here when it names one."""
        # Before the container can exist: a recovery after a killed runner finds it from this.
        container_record.write(str(self.logs), self.runtime.executable)
        labels = {containers.ATTEMPT_LABEL: self.name}
        argv = containers.run_argv(self.runtime, image, name=self.name, labels=labels, cgroup_parent=self.cgroup_parent, mounts=mounts, tmpfs=tmpfs)
        if self.step("runtime", argv).exit_code != 0:
            why = self.last_output.with_suffix(".err").read_text(errors="replace") if self.last_output else ""
            raise containers.ContainerProblem(f"{self.runtime.name} cannot start a container of image {image[:12]}: {containers.hint(containers.last_line(why))}")

    def exec(
        self,
        role: str,
        argv: Sequence[str],
        *,
        timeout: float,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
        stdout: Stdio = None,
        stderr: Stdio = None,
        stop_when: Callable[[], bool] | None = None,
    ) -> RunResult:
        """``secrets`` reach the command by name through the runtime client's environment,
        never on its command line."""
        secrets = dict(secrets or {})
        argv = containers.exec_argv(self.runtime, self.name, argv, workdir=workdir, env=env, passed=sorted(secrets))
        return self.step(role, argv, timeout=timeout, stdout=stdout, stderr=stderr, env=secrets, stop_when=stop_when)

    def loopback_listener(self) -> socket.socket:
        """A socket listening on the running container's loopback, its only address
        (``listeners.loopback_in``). The runtime names the container's first process; that
        process must be in the attempt's own cgroup, read through the same /proc entry the
        namespace is opened from, so a pid reused meanwhile cannot name another namespace."""
        if self.step("runtime", containers.pid_argv(self.runtime, self.name)).exit_code != 0 or not self.output().strip().isdigit():
            raise containers.ContainerProblem(f"the runtime did not say which process runs container {self.name}")
        proc = os.open(f"/proc/{int(self.output())}", os.O_RDONLY | os.O_DIRECTORY)
        try:
            with open(os.open("cgroup", os.O_RDONLY, dir_fd=proc), encoding="utf-8") as f:
                unified = [line.split(":", 2)[2].strip() for line in f if line.startswith("0::")]
            if not unified or not unified[0].startswith(self.cgroup_parent + "/"):
                raise containers.ContainerProblem(f"the process the runtime named for container {self.name} is not in the attempt's cgroup")
            netns = os.open("ns/net", os.O_RDONLY, dir_fd=proc)
        finally:
            os.close(proc)
        try:
            return listeners.loopback_in(netns)
        finally:
            os.close(netns)

    def quiesce(self) -> bool:
        """End everything the agent left running in the container, proven (the supervisor's
        quiesce), then start the container again, its filesystem as the agent left it."""
        self.step("runtime", containers.stop_argv(self.runtime, self.name))
        proven = self.sup.quiesce()
        return proven and self.step("runtime", containers.start_argv(self.runtime, self.name)).exit_code == 0

    def copy_in(self, source: Path, target: str) -> bool:
        return self.step("verifier", containers.cp_argv(self.runtime, str(source), f"{self.name}:{target}")).exit_code == 0

    def copy_out(self, source: str, target: Path) -> bool:
        return self.step("verifier", containers.cp_argv(self.runtime, f"{self.name}:{source}", str(target))).exit_code == 0

    def remove(self) -> bool:
        """Remove the container (once more if the first try fails: after a forced stop the
        runtime may still report its state as improper)."""
        return any(self.step("runtime", containers.rm_argv(self.runtime, self.name)).exit_code == 0 for _ in range(2))

    def gone(self) -> bool | None:
        """After the supervisor's teardown (the runner may start children again): whether
        the runtime no longer has the container and no cgroup of it is left (the empty
        directories it made in a hybrid machine's v1 hierarchies are removed here; one
        that will not go still holds a process). None when the runtime cannot say."""
        found = containers.exists(self.runtime, self.name)
        assert self.sup.cgroup is not None
        twins = remove_v1_twins(os.path.basename(self.sup.cgroup.path))
        return None if found is None else not found and not twins
