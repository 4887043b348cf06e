"""Private roots and the allowlisted environment."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from campaign import isolation
from campaign.errors import UsageProblem

CANARY = "canary-7f3a9c-do-not-leak"


def test_private_root_is_fresh_private_and_holds_the_attempt_state(tmp_path):
    root = isolation.create_private_root(tmp_path)
    other = isolation.create_private_root(tmp_path)
    assert root.path.parent == tmp_path and root.path.name.startswith("campaign-paired-runtime-")
    assert root.path != other.path
    assert stat.S_IMODE(root.path.stat().st_mode) == 0o700
    for d in (root.home, root.tmpdir, root.cwd, root.captures, root.store_path.parent):
        assert d.is_dir() and d.parent == root.path
    for secret in (root.operator_token_path, root.secret_key_path):
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert len({root.operator_token(), root.secret_key(), other.operator_token()}) == 3
    assert len(root.secret_key()) == 64
    st = root.path.stat()
    assert (root.dev, root.ino) == (st.st_dev, st.st_ino)


def test_secrets_never_appear_in_repr(tmp_path):
    root = isolation.create_private_root(tmp_path)
    text = repr(root)
    assert root.operator_token() not in text and root.secret_key() not in text
    assert "operator_token" not in text


def test_default_base_is_the_runners_temp_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    assert isolation.create_private_root().path.parent == tmp_path


def test_env_is_an_allowlist(tmp_path):
    root = isolation.create_private_root(tmp_path)
    parent = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/home/op",
        "SECRET_CANARY": CANARY,
        "HTTPS_PROXY": "http://proxy:3128",
        "OPENAI_API_KEY": "sk-approved",
        "ANTHROPIC_API_KEY": CANARY,
        "DOTENV_PATH": "/home/op/.env",
    }
    env = isolation.build_env(root, parent, credential_names=("OPENAI_API_KEY",))
    assert env == {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "OPENAI_API_KEY": "sk-approved",
        "HOME": str(root.home),
        "TMPDIR": str(root.tmpdir),
    }
    assert CANARY not in "".join(env.values())


def test_an_approved_credential_must_be_present(tmp_path):
    root = isolation.create_private_root(tmp_path)
    with pytest.raises(UsageProblem, match="ZAI_API_KEY"):
        isolation.build_env(root, {"PATH": "/bin"}, credential_names=("ZAI_API_KEY",))


def test_sdk_paths_are_fixed_before_home_is_replaced(tmp_path):
    root = isolation.create_private_root(tmp_path)
    parent = {"PATH": "/bin", "HOME": "/home/op", "HEX_HOME": "~/custom-hex", "TOOL_HOME": "rel/tool"}
    env = isolation.build_env(
        root,
        parent,
        sdk_path_vars={"MIX_HOME": ".mix", "HEX_HOME": ".hex", "TOOL_HOME": None, "UNSET_HOME": None},
        original_cwd="/srv/checkout",
    )
    assert env["MIX_HOME"] == "/home/op/.mix"  # default, from the original home
    assert env["HEX_HOME"] == "/home/op/custom-hex"  # explicit wins; ~ is the original home
    assert env["TOOL_HOME"] == "/srv/checkout/rel/tool"  # relative: the original cwd
    assert "UNSET_HOME" not in env
    assert env["HOME"] == str(root.home)


def test_extra_values_and_bad_names(tmp_path):
    root = isolation.create_private_root(tmp_path)
    env = isolation.build_env(root, {"PATH": "/bin"}, extra={"CAMPAIGN_STORE_PATH": str(root.store_path)})
    assert env["CAMPAIGN_STORE_PATH"] == str(root.store_path)
    with pytest.raises(UsageProblem):
        isolation.build_env(root, {"PATH": "/bin"}, extra={"bad name": "x"})


def test_ports_are_loopback_and_os_chosen_by_default():
    assert isolation.listen_address() == ("127.0.0.1", 0)
    assert isolation.listen_address(8123) == ("127.0.0.1", 8123)
    with pytest.raises(UsageProblem):
        isolation.listen_address(70000)
    assert 0 < isolation.free_loopback_port() < 65536


def test_capture_names_stay_inside_the_root(tmp_path):
    root = isolation.create_private_root(tmp_path)
    assert root.capture("client.out") == root.captures / "client.out"
    with pytest.raises(ValueError):
        root.capture("../escape")
    assert isinstance(root.cleanup_log, Path)
    assert not os.path.exists(root.cleanup_log)
