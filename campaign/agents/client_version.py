"""The installed client's version, bound into the experiment.

A profile may declare ``client_version = ["claude", "--version"]``. The command
runs once when the experiment is computed (plan time, campaign start), with a
throwaway HOME and only PATH and the locale from the environment; the first
version number it prints (``2.1.197`` of ``2.1.197 (Claude Code)``) is the version. An npm or pip upgrade of
the client then changes the experiment instead of silently changing what is
measured. A command that does not answer is bad input: the client is missing.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Mapping

from campaign.agents.profile_model import AgentProfile
from campaign.errors import UsageProblem

# The first version-shaped token (what the report's allowlist accepts), e.g. "2.1.197".
_VERSION = re.compile(r"(?<![0-9A-Za-z.])[0-9]+(?:\.[0-9A-Za-z]+){1,4}")
TIMEOUT_S = 60.0


def sanitize(line: str) -> str | None:
    """The version number in the client's first line, and nothing else of it (no paths, no text)."""
    match = _VERSION.search(line)
    return match.group(0) if match else None


def read_client_version(profile: AgentProfile, environ: Mapping[str, str], *, option: str = "--agent") -> str | None:
    """The version the profile's command reports; None when the profile declares none."""
    if profile.client_version is None:
        return None
    with tempfile.TemporaryDirectory(prefix="campaign-client-version-") as home:
        env = {name: environ[name] for name in ("PATH", "LANG", "LC_ALL") if name in environ}
        env |= {"HOME": home, "TMPDIR": home}
        try:
            done = subprocess.run(
                list(profile.client_version), capture_output=True, env=env, cwd=home, stdin=subprocess.DEVNULL, timeout=TIMEOUT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UsageProblem(
                f"the {profile.name} agent's client_version command {profile.client_version[0]!r} did not run ({exc.__class__.__name__}); "
                "is the client installed and on PATH?",
                option=option,
            ) from None
    lines = [line for line in done.stdout.decode("utf-8", errors="replace").splitlines() if line.strip()]
    version = sanitize(lines[0]) if lines else None
    if done.returncode != 0 or version is None:
        raise UsageProblem(
            f"the {profile.name} agent's client_version command exited with status {done.returncode} and no version; "
            "is the client installed and on PATH?",
            option=option,
        )
    return version
