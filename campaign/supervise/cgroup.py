"""Per-attempt cgroup v2 containment with ``cgroup.kill``.

Each attempt gets ``<cgroup2 mount>/campaign.attempts/<name>``, where the name
is derived from the attempt row itself (id, campaign, start time), so offline
recovery finds the same cgroup from the store alone. A process joins it before
its exec gate opens; its descendants cannot leave it without writing to
another cgroup. ``cgroup.kill`` stops every member atomically, and an empty
cgroup that ``rmdir``s is the strongest proof that nothing survived.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import os
from dataclasses import dataclass

PARENT = "campaign.attempts"


def cgroup2_mount(mountinfo: str = "/proc/self/mountinfo") -> str | None:
    """The cgroup2 mount point, or None (no v2 hierarchy mounted)."""
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in lines:
        left, _, right = line.partition(" - ")
        if right.split(" ", 1)[0] == "cgroup2":
            return left.split(" ")[4].replace("\\040", " ")
    return None


def cgroup_v1_mounts(mountinfo: str = "/proc/self/mountinfo") -> list[str]:
    """The mount points of the cgroup v1 hierarchies (a hybrid machine has them beside v2)."""
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        left, _, right = line.partition(" - ")
        if right.split(" ", 1)[0] == "cgroup":
            found.append(left.split(" ")[4].replace("\\040", " "))
    return found


def remove_v1_twins(name: str, mounts: list[str] | None = None) -> list[str]:
    """Remove the directories a container runtime made for the attempt ``name`` in each
    cgroup v1 hierarchy (``--cgroup-parent`` on a hybrid machine); the ones that would not
    go (a directory still holding a process refuses rmdir), deepest first."""
    left = []
    for mount in cgroup_v1_mounts() if mounts is None else mounts:
        top = os.path.join(mount, PARENT, name)
        if not os.path.isdir(top):
            continue
        for path, _, _ in sorted(os.walk(top), key=lambda entry: entry[0].count(os.sep), reverse=True):
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass
            except OSError:
                left.append(path)
    return left


def attempt_cgroup_name(attempt_id: int, campaign_id: int, started_at: dt.datetime) -> str:
    """Stable name from the stored attempt row (read back from the store on both sides)."""
    if started_at.tzinfo is not None:
        started_at = started_at.astimezone(dt.timezone.utc).replace(tzinfo=None)
    token = f"{campaign_id}:{attempt_id}:{started_at.isoformat(timespec='microseconds')}"
    return f"attempt-{attempt_id}-{hashlib.sha256(token.encode()).hexdigest()[:16]}"


@dataclass(frozen=True)
class AttemptCgroup:
    path: str

    @classmethod
    def create(cls, name: str, mount: str | None = None) -> AttemptCgroup | None:
        """A fresh writable cgroup with ``cgroup.kill``, or None when unavailable."""
        mount = mount or cgroup2_mount()
        if not mount:
            return None
        parent = os.path.join(mount, PARENT)
        path = os.path.join(parent, name)
        try:
            os.makedirs(parent, exist_ok=True)
            os.mkdir(path)
        except FileExistsError:
            group = cls(path)
            if group.pids() or not group.removable():
                return None
        except OSError:
            return None
        group = cls(path)
        if not os.path.exists(os.path.join(path, "cgroup.kill")) or not os.access(os.path.join(path, "cgroup.procs"), os.W_OK):
            group.remove()
            return None
        return group

    @classmethod
    def locate(cls, name: str, mount: str | None = None) -> AttemptCgroup | None:
        """The attempt's cgroup if it still exists."""
        mount = mount or cgroup2_mount()
        if not mount:
            return None
        path = os.path.join(mount, PARENT, name)
        return cls(path) if os.path.isdir(path) else None

    def exists(self) -> bool:
        return os.path.isdir(self.path)

    def contains(self, cgroup_path: str) -> bool:
        """Whether a ``/proc/<pid>/cgroup`` v2 path lies inside this cgroup. The path is
        relative to the reader's cgroup namespace root, so match on the attempt's own
        ``campaign.attempts/<name>`` components rather than on the mount path."""
        mine = "/" + PARENT + "/" + os.path.basename(self.path)
        # A zombie's path still names the cgroup it died in, marked once that is removed.
        path = cgroup_path.removesuffix(" (deleted)").rstrip("/")
        return path.endswith(mine) or (mine + "/") in path

    def add(self, pid: int) -> None:
        with open(os.path.join(self.path, "cgroup.procs"), "w", encoding="ascii") as fh:
            fh.write(str(pid))

    def pids(self) -> list[int]:
        """Live members, nested cgroups included (exited, unreaped processes are not listed)."""
        out: list[int] = []
        for dirpath, _dirs, _files in os.walk(self.path):
            try:
                with open(os.path.join(dirpath, "cgroup.procs"), encoding="ascii") as fh:
                    out.extend(int(x) for x in fh.read().split())
            except FileNotFoundError:
                continue
        return out

    def populated(self) -> bool:
        try:
            with open(os.path.join(self.path, "cgroup.events"), encoding="ascii") as fh:
                for line in fh:
                    key, _, value = line.partition(" ")
                    if key == "populated":
                        return value.strip() != "0"
        except FileNotFoundError:
            return False
        return True

    def kill(self) -> None:
        try:
            with open(os.path.join(self.path, "cgroup.kill"), "w", encoding="ascii") as fh:
                fh.write("1")
        except FileNotFoundError:
            pass

    def removable(self) -> bool:
        return not self.populated()

    def remove(self) -> bool:
        """rmdir (nested cgroups first); True when the cgroup is gone (it can only go once empty)."""
        for dirpath, _dirs, _files in os.walk(self.path, topdown=False):
            try:
                os.rmdir(dirpath)
            except FileNotFoundError:
                continue
            except OSError as exc:
                if exc.errno in (errno.EBUSY, errno.ENOTEMPTY):
                    return False
                raise
        return not os.path.exists(self.path)
