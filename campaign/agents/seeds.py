"""Seeds: what a client needs in its HOME that it would otherwise fetch at start.

Some clients install or download something the first time they run in a HOME
(opencode installs its plugin package with npm). Every attempt has a fresh
private HOME, so that would be a network fetch per attempt, and a rehearsal
that promises nothing leaves the machine could not keep the promise. A profile
names such a directory in ``home_seed``; ``scripts/install_clients.sh`` prepares
it once, beside the clients, and the engine copies it fresh into each attempt's
HOME (a copy, not a link: an agent may write there, and the next attempt must
not see it).

The seeds live in ``$CAMPAIGN_CLIENT_SEEDS``, else the install script's default,
``${XDG_CACHE_HOME:-~/.cache}/campaign/clients/seeds``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from campaign.agents.profile_model import AgentProfile
from campaign.errors import UsageProblem

SEEDS_ENV = "CAMPAIGN_CLIENT_SEEDS"


def seeds_dir(environ: Mapping[str, str]) -> Path:
    if environ.get(SEEDS_ENV):
        return Path(environ[SEEDS_ENV]).expanduser()
    cache = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".cache")
    return Path(cache) / "campaign" / "clients" / "seeds"


def check(profile: AgentProfile, environ: Mapping[str, str], option: str = "--agent") -> None:
    """Every seed the profile names is there; one line saying how to make it otherwise."""
    for _, name in profile.home_seed:
        if not (seeds_dir(environ) / name).is_dir():
            raise UsageProblem(
                f"the {profile.name} agent needs its seed {name!r} in {seeds_dir(environ)} (what its client would otherwise "
                f"download at every start); run scripts/install_clients.sh, or set {SEEDS_ENV} to where it is",
                option=option,
            )


def plant(profile: AgentProfile, home: Path, environ: Mapping[str, str]) -> None:
    """Copy each seed into ``home`` (the attempt's private HOME)."""
    for rel, name in profile.home_seed:
        target = home / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(seeds_dir(environ) / name, target, symlinks=True, dirs_exist_ok=True)


def write_home_files(files: Mapping[str, bytes], home: Path) -> None:
    """The profile's settings files, written fresh into the attempt's HOME (mode 0600)."""
    for rel, content in files.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, content)
        finally:
            os.close(fd)
