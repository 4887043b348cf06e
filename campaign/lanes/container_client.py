"""What of this machine a client needs inside a task's container, found before any trial.

Nothing is downloaded into a task's image: the client runs from its installation on
this machine, mounted read-only at its own path. The engine's offline agent runs on the
image's python3 with the engine's package mounted (it imports only the standard
library); any other client's profile says where its installation is from its executable
(``container_install``), and the executable is found on the runner's PATH. A client
whose profile says nothing cannot run in a container: refused before anything runs.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from campaign.agents.profile_model import AgentProfile
from campaign.errors import UsageProblem

OFFLINE_AGENT_MODULE = "campaign.agents.offline"


@dataclass(frozen=True)
class ClientInstall:
    executable: Path  # the real file the client's first word names, run by that path inside
    root: Path  # mounted read-only at the same path


def is_offline_agent(profile: AgentProfile) -> bool:
    return OFFLINE_AGENT_MODULE in profile.client


def installation(profile: AgentProfile, environ: Mapping[str, str]) -> ClientInstall | None:
    """The client's installation to mount (None for the engine's offline agent, which is
    mounted as the engine's package); UsageProblem when it cannot run in a container."""
    if profile.runtime is not None:
        raise UsageProblem(f"the {profile.name} agent boots a runtime server, which a task's container does not take yet; leave the image tasks out with --tasks", option="--agent")
    if is_offline_agent(profile):
        return None
    if profile.container_install is None:
        raise UsageProblem(
            f"the {profile.name} agent's profile does not say where its installation is, so it cannot run in a task's container: "
            'set container_install (e.g. "..": the directory above its executable\'s) in the profile, or leave the image tasks out with --tasks',
            option="--agent",
        )
    command = profile.client[0]
    found = shutil.which(command, path=environ.get("PATH", ""))
    if found is None:
        raise UsageProblem(f"{command} (the {profile.name} agent's client) is not on PATH; install it (scripts/install_clients.sh)", option="--agent")
    executable = Path(os.path.realpath(found))
    root = Path(os.path.normpath(executable.parent / profile.container_install))
    return ClientInstall(executable, root)
