"""client_version: the installed client's version, bound into the experiment."""

from __future__ import annotations

import pytest

from campaign.agents.client_version import read_client_version, sanitize
from campaign.agents.profiles import load_profile
from campaign.errors import UsageProblem

MINIMAL = 'adapter = "generic"\nclient = ["agent", "{prompt_file}"]\nconfig_env = "AGENT_CONFIG"\n'


@pytest.mark.parametrize(
    ("line", "version"),
    [("2.1.197 (Claude Code)", "2.1.197"), ("codex-cli 0.171.0", "0.171.0"), ("This is mini-swe-agent version 2.4.6.", "2.4.6"), ("/home/alice/bin 7", None), ("no version", None)],
)
def test_only_a_version_number_is_kept(line, version):
    assert sanitize(line) == version


def profile_with(tmp_path, command: str):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL + f"client_version = {command}\n")
    return load_profile(str(path))


def test_the_command_runs_with_a_throwaway_home(tmp_path):
    script = tmp_path / "fake-client"
    script.write_text('#!/bin/sh\ncase "$HOME" in /tmp/*|'"$TMPDIR"'*) echo "fake 3.4.5 (home ok)";; *) echo "home leaked";; esac\n')
    script.chmod(0o755)
    profile = profile_with(tmp_path, f'["{script}", "--version"]')
    assert read_client_version(profile, {"PATH": "/usr/bin:/bin", "HOME": "/root/should-not-be-used"}) == "3.4.5"


@pytest.mark.parametrize("command", ['["/no/such/client", "--version"]', '["sh", "-c", "exit 3"]', '["sh", "-c", "echo no version here"]'])
def test_a_client_that_does_not_answer_is_bad_input(tmp_path, command):
    with pytest.raises(UsageProblem, match="client_version") as err:
        read_client_version(profile_with(tmp_path, command), {"PATH": "/usr/bin:/bin"})
    assert err.value.option == "--agent"


def test_no_command_means_no_version(tmp_path):
    assert read_client_version(load_profile("offline"), {}) is None
