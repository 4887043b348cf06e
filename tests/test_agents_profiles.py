"""Agent profiles: strict loading, whole-placeholder rendering, source-relative facts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from campaign.agents.profile_model import PLACEHOLDERS, placeholders, render
from campaign.agents.profiles import builtin_profile_names, build_artifact_paths, client_argv, client_env, load_profile, profile_identity, sdk_paths
from campaign.errors import UsageProblem

MINIMAL = 'adapter = "generic"\nclient = ["my-agent", "{prompt_file}"]\nconfig_env = "AGENT_CONFIG"\n'


def write(tmp_path: Path, text: str, name: str = "custom.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_builtins_load():
    assert set(builtin_profile_names()) == {"offline", "offline-wire", "claude-code", "codex", "gemini", "opencode", "generic", "mini-swe-agent"}
    for name in builtin_profile_names():
        profile = load_profile(name)
        assert profile.name == name and profile.path is None
        assert profile.paid is (name not in ("offline", "offline-wire"))


def test_offline_profile_runs_the_offline_module():
    profile = load_profile("offline")
    assert (profile.adapter, profile.applied_profile_from, profile.build_artifacts) == ("generic", "adapter", ())
    values = {"python": "/py", "task": "t", "prompt_file": "/p", "model": "m", "seed": "1", "trial_id": "x"}
    assert client_argv(profile, values)[:4] == ["/py", "-P", "-m", "campaign.agents.offline"]
    assert client_env(profile, Path("/cfg.toml")) == {"CAMPAIGN_AGENT_CONFIG": "/cfg.toml"}


def test_example_profile_declares_everything():
    profile = load_profile("generic")
    assert profile.runtime is not None and profile.runtime.health.kind == "http"
    assert profile.sdk_path_vars == (("HEX_HOME", ".hex"), ("MIX_HOME", ".mix"))
    assert profile.config_flag == "--config" and profile.credential_env_default == "OPENAI_API_KEY"


def test_file_profile_defaults(tmp_path):
    profile = load_profile(write(tmp_path, MINIMAL), source=tmp_path)
    assert profile.name == "custom" and profile.paid is True  # never assumed free
    assert profile.path == tmp_path / "custom.toml" and profile.source == tmp_path.resolve()
    assert profile.applied_profile_from == "adapter" and profile.runtime is None


@pytest.mark.parametrize(
    "text, message",
    [
        (MINIMAL + "colour = 1\n", "unknown key colour"),
        (MINIMAL.replace("{prompt_file}", "{promt_file}"), "unknown placeholder {promt_file}"),
        (MINIMAL.replace("{prompt_file}", "{prompt_file"), "stray brace"),
        (MINIMAL.replace('"generic"', '"nope"'), "adapter must be one of"),
        (MINIMAL.replace('config_env = "AGENT_CONFIG"', ""), "cannot reach the client"),
        (MINIMAL + "paid = 1\n", "paid must be a bool"),
        (MINIMAL + 'credential_env_default = "OPENAI_KEY"\n', "API_KEY, ACCESS_TOKEN or AUTH_TOKEN"),
        (MINIMAL + 'build_artifacts = ["../outside/*.beam"]\n', "without '..'"),
        (MINIMAL + 'build_artifacts = ["/abs/*.beam"]\n', "without '..'"),
        (MINIMAL + '[sdk_path_vars]\nmix_home = ".mix"\n', "uppercase"),
        (MINIMAL.replace("{prompt_file}", "{runtime_port}"), "needs a [runtime]"),
        (MINIMAL + '[runtime]\nargv = ["srv"]\ndeadline_seconds = 5\n[runtime.health]\nkind = "tcp"\nport_pattern = "port"\n', "group"),
        (MINIMAL + '[runtime]\nargv = ["srv"]\ndeadline_seconds = 0\n[runtime.health]\nkind = "tcp"\nport_pattern = "(\\\\d+)"\n', "positive"),
        (MINIMAL + '[runtime]\nargv = ["srv"]\ndeadline_seconds = 5\n[runtime.health]\nkind = "http"\nport_pattern = "(\\\\d+)"\n', "path must start"),
        (MINIMAL + '[runtime]\nargv = ["srv"]\ndeadline_seconds = 5\nretries = 3\n[runtime.health]\nkind = "tcp"\nport_pattern = "(\\\\d+)"\n', "unknown key runtime.retries"),
        ('client = ["a"', "cannot read"),
        (MINIMAL + 'container_install = "/opt/agent"\n', "'.' or '..' steps up"),
        (MINIMAL + 'container_install = "../lib"\n', "'.' or '..' steps up"),
    ],
)
def test_invalid_profiles_are_usage_problems(tmp_path, text, message):
    with pytest.raises(UsageProblem, match=message.replace("[", r"\[").replace("(", r"\(")) as info:
        load_profile(write(tmp_path, text))
    assert info.value.option == "--agent"


def test_unknown_name_and_missing_file():
    with pytest.raises(UsageProblem, match="built-ins: claude-code"):
        load_profile("no-such-agent")
    with pytest.raises(UsageProblem, match="agent.toml does not exist"):
        load_profile("/no/such/agent.toml")


def test_runtime_profile(tmp_path):
    text = MINIMAL.replace("{prompt_file}", "--port={runtime_port}") + (
        '[runtime]\nargv = ["srv", "--port", "0"]\ndeadline_seconds = 12.5\n'
        '[runtime.health]\nkind = "tcp"\nport_pattern = "port=(\\\\d+)"\n'
    )
    profile = load_profile(write(tmp_path, text))
    assert profile.runtime.deadline_seconds == 12.5 and profile.runtime.health.port_pattern == r"port=(\d+)"
    assert render(profile.client, {"runtime_port": "4711"}) == ["my-agent", "--port=4711"]


def test_render_is_single_pass_and_whole_placeholder():
    template = ["{python}", "--prompt={prompt}", "{{literal}}", "{cwd}/x"]
    values = {"python": "/py", "prompt": "use {cwd} and {{x}}", "cwd": "/w"}
    assert render(template, values) == ["/py", "--prompt=use {cwd} and {{x}}", "{literal}", "/w/x"]
    assert placeholders(template) == {"python", "prompt", "cwd"}
    with pytest.raises(ValueError, match="no value for placeholder"):
        render(["{model}"], {})
    with pytest.raises(ValueError, match="unknown placeholder"):
        render(["{0}"], {})
    assert {"prompt_file", "prompt", "cwd", "config_path", "model", "python", "task"} <= set(PLACEHOLDERS)


def test_config_flag_is_appended(tmp_path):
    profile = load_profile(write(tmp_path, MINIMAL + 'config_flag = "--config"\n'))
    assert client_argv(profile, {"prompt_file": "/p", "config_path": "/c.toml"}) == ["my-agent", "/p", "--config", "/c.toml"]


def test_build_artifacts_stay_inside_source(tmp_path):
    source = tmp_path / "src"
    (source / "_build/dev/lib/app/ebin").mkdir(parents=True)
    (source / "_build/dev/lib/app/ebin/a.beam").write_text("x")
    (source / "_build/dev/lib/app/ebin/b.beam").write_text("y")
    (tmp_path / "outside.beam").write_text("z")
    (source / "_build/dev/lib/app/ebin/link.beam").symlink_to(tmp_path / "outside.beam")
    text = MINIMAL + 'build_artifacts = ["_build/dev/lib/*/ebin/*.beam"]\n'
    profile = load_profile(write(tmp_path, text), source=source)
    names = [p.name for p in build_artifact_paths(profile)]
    assert names == ["a.beam", "b.beam"]  # the symlink resolves outside --source: excluded
    assert build_artifact_paths(load_profile("offline"), source) == []


def test_sdk_paths_resolve_before_home_is_replaced(tmp_path):
    profile = load_profile("generic")
    home, cwd = Path("/home/op"), Path("/work/src")
    assert sdk_paths(profile, {}, home, cwd) == {"HEX_HOME": "/home/op/.hex", "MIX_HOME": "/home/op/.mix"}
    explicit = sdk_paths(profile, {"MIX_HOME": "sdk/mix", "HEX_HOME": "~/hex"}, home, cwd)
    assert explicit == {"MIX_HOME": "/work/src/sdk/mix", "HEX_HOME": "/home/op/hex"}


def test_identity_is_plain_json_without_paths(tmp_path):
    import json

    identity = profile_identity(load_profile(write(tmp_path, MINIMAL), source=tmp_path))
    assert str(tmp_path) not in json.dumps(identity)
    assert identity["client"] == ["my-agent", "{prompt_file}"]


def test_where_a_client_is_installed_is_read_but_is_not_its_identity(tmp_path):
    # Mounted into a task's container; the client itself is bound by its version.
    plain = load_profile(write(tmp_path, MINIMAL))
    declared = load_profile(write(tmp_path, MINIMAL + 'container_install = "../."\n'))
    assert plain.container_install is None and declared.container_install == ".."
    assert profile_identity(declared) == profile_identity(plain)
    assert load_profile("claude-code").container_install == ".."


def test_builtin_offline_profile_is_runnable_by_this_interpreter():
    # The placeholder the engine fills with its own interpreter; -P needs Python 3.11+.
    assert sys.version_info >= (3, 11)


# --- [env] and the recording proxy ---------------------------------------------------


def test_env_table_is_templated_and_turns_the_wire_on(tmp_path):
    from campaign.agents.profile_model import uses_wire

    text = MINIMAL + '[env]\nANTHROPIC_BASE_URL = "{proxy_url}"\nAGENT_MODE = "task-{task}"\n'
    profile = load_profile(write(tmp_path, text))
    assert profile.env == (("AGENT_MODE", "task-{task}"), ("ANTHROPIC_BASE_URL", "{proxy_url}"))
    assert uses_wire(profile) and not uses_wire(load_profile(write(tmp_path, MINIMAL, "plain.toml")))
    env = client_env(profile, Path("/cfg.toml"), {"proxy_url": "http://127.0.0.1:9", "task": "t1"})
    assert env == {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "AGENT_MODE": "task-t1", "AGENT_CONFIG": "/cfg.toml"}
    # [env] is part of the profile's identity; a profile without it keeps its earlier identity.
    assert profile_identity(profile)["env"] == [["AGENT_MODE", "task-{task}"], ["ANTHROPIC_BASE_URL", "{proxy_url}"]]
    assert "env" not in profile_identity(load_profile("offline"))


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ('ANTHROPIC_API_KEY = "x"', "looks like a credential"),
        ('HOME = "/tmp"', "set by the engine"),
        ('PATH = "/bin"', "set by the engine"),
        ('lower = "x"', "uppercase variable"),
        ('URL = "{nope}"', "unknown placeholder"),
        ("N = 3", "uppercase variable to a string"),
    ],
)
def test_env_table_rejections(tmp_path, table, needle):
    with pytest.raises(UsageProblem, match=needle):
        load_profile(write(tmp_path, MINIMAL + "[env]\n" + table + "\n"))


def test_variants_apply_args_and_env_per_variant(tmp_path):
    from campaign.agents.profile_model import uses_wire

    text = MINIMAL + '[env]\nBASE_URL = "{proxy_url}"\n[variants.coding]\nargs = ["--tools", "Read,{task}"]\nenv = { MODE = "narrow" }\n[variants.baseline]\nargs = []\n'
    profile = load_profile(write(tmp_path, text))
    values = {"prompt_file": "/p", "task": "t1", "proxy_url": "http://127.0.0.1:9"}
    assert client_argv(profile, values, "coding") == ["my-agent", "/p", "--tools", "Read,t1"]
    assert client_argv(profile, values, "baseline") == client_argv(profile, values) == ["my-agent", "/p"]
    assert client_env(profile, None, values, "coding") == {"BASE_URL": "http://127.0.0.1:9", "MODE": "narrow"}
    assert "MODE" not in client_env(profile, None, values, "baseline")
    assert uses_wire(profile)
    assert profile_identity(profile)["variants"]["coding"] == {"args": ["--tools", "Read,{task}"], "env": [["MODE", "narrow"]]}


def test_a_profile_defines_variants_of_any_name_after_the_built_in_pair(tmp_path):
    from campaign.agents.profiles import defined_variants, variant_disclosure

    text = MINIMAL + '[variants.terse]\nargs = ["--terse"]\ndisclosure = "coding"\n[variants.coding]\nargs = ["--c"]\n[variants.lean]\nenv = { LEAN = "1" }\n'
    profile = load_profile(write(tmp_path, text))
    assert defined_variants(profile) == ("baseline", "coding", "terse", "lean")
    assert [variant_disclosure(profile, v) for v in defined_variants(profile)] == ["legacy", "coding", "coding", None]
    assert client_argv(profile, {"prompt_file": "/p"}, "terse") == ["my-agent", "/p", "--terse"]
    assert client_env(profile, None, {"prompt_file": "/p"}, "lean")["LEAN"] == "1"
    identity = profile_identity(profile)["variants"]
    assert identity["terse"] == {"args": ["--terse"], "env": [], "disclosure": "coding"} and "disclosure" not in identity["lean"]
    # A profile without tables of its own still runs the built-in pair.
    assert defined_variants(load_profile(write(tmp_path, MINIMAL))) == ("baseline", "coding")


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ("[variants.Budget]\nargs = []\n", "'Budget' is not a variant name"),
        ("[variants.a-name-of-thirty-three-characters]\n", "is not a variant name"),
        ("".join(f"[variants.v{i}]\n" for i in range(9)), "a profile defines at most 8"),
        ("[variants.lean]\nflags = []\n", "unknown key variants.lean.flags"),
        ('[variants.lean]\ndisclosure = "terse"\n', "variants.lean.disclosure must be one of legacy, coding"),
        ('[variants.baseline]\ndisclosure = "coding"\n', "baseline is the legacy disclosure by definition"),
        ("variants = 3\n", "variants must be a table of"),
        ("[variants.legacy]\n", "names a disclosure profile"),
        ("[variants.coding]\nflags = []\n", "unknown key variants.coding.flags"),
        ('[variants.coding]\nenv = { OPENAI_API_KEY = "x" }\n', "looks like a credential"),
        ('applied_profile_from = "wire"\n', "needs the client to reach its model through {proxy_url}"),
        ('client_version = ["agent", "{task}"]\n', "without placeholders"),
    ],
)
def test_variant_and_wire_rejections(tmp_path, table, needle):
    with pytest.raises(UsageProblem, match=needle.replace("{", r"\{").replace("}", r"\}")):
        load_profile(write(tmp_path, MINIMAL + table))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # exec would refuse it only once an attempt, perhaps a paid one, had started.
        (MINIMAL.replace('"my-agent"', '"my\\u0000agent"'), "client holds a NUL character"),
        (MINIMAL + '[variants.coding]\nargs = ["--x", "a\\u0000"]\n', "holds a NUL character"),
        (MINIMAL + "x = " + "[" * 3000 + "]" * 3000 + "\n", "nested deeper than 64 levels"),
    ],
    ids=["client", "variant-args", "nesting"],
)
def test_what_no_process_could_be_given_is_refused_when_the_profile_is_read(tmp_path, text, needle):
    with pytest.raises(UsageProblem, match=needle):
        load_profile(write(tmp_path, text))


def test_an_experiment_file_extends_a_built_in_and_names_its_variants(tmp_path):
    from campaign.agents.profiles import defined_variants, run_variants, select_variants

    text = 'extends = "claude-code"\ndefault_variants = ["default", "terse"]\n[variants.default]\nargs = []\n[variants.terse]\nargs = ["--append-system-prompt", "Be terse."]\n'
    profile = load_profile(write(tmp_path, text))
    built_in = load_profile("claude-code")
    # The built-in as shipped (client, env, wire), its variants and the file's merged by name.
    assert (profile.client, profile.env, profile.applied_profile_from) == (built_in.client, built_in.env, built_in.applied_profile_from)
    assert defined_variants(profile) == ("baseline", "coding", "default", "terse")
    assert run_variants(profile) == select_variants(None, [profile]) == ("default", "terse")
    assert select_variants("baseline,terse", [profile]) == ("baseline", "terse")  # --variants still picks
    assert client_argv(profile, {"prompt": "p", "model_name": "m"}, "terse")[-2:] == ["--append-system-prompt", "Be terse."]
    # Its identity is the merged profile's: an edit of the built-in is a different experiment.
    assert profile_identity(profile)["client"] == list(built_in.client) and "terse" in profile_identity(profile)["variants"]
    assert run_variants(built_in) == ("baseline", "coding")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('extends = "nosuch"\n', "extends must name a built-in profile"),
        ('extends = "codex"\ndefault_variants = ["baseline"]\n', "default_variants: a paired comparison needs at least two variants"),
        ('extends = "codex"\ndefault_variants = ["baseline", "high"]\n', "default_variants: unknown variant high"),
        ('extends = "codex"\ndefault_variants = ["coding", "coding"]\n', "default_variants: variant coding is listed twice"),
        ('extends = "codex"\ndefault_variants = "baseline,coding"\n', "default_variants must be a list of strings"),
    ],
)
def test_a_bad_experiment_file_is_refused_when_read(tmp_path, text, needle):
    with pytest.raises(UsageProblem, match=needle):
        load_profile(write(tmp_path, text))
