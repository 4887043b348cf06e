"""`campaign coding`: every rejection writes nothing; plan-only mode binds the experiment."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from campaign import benchmark
from campaign.lanes import paired_plan
from campaign.lanes.options import CodingOptions
from campaign.canonical import spec_digest
from campaign.plan import template_document
from campaign.store import repository
from campaign.store.engine import make_engine, resolve_url
from helpers.profiles import blind_profile
from workspace import Workspace, refused, run


# Each way TOML can set runtime.tools.disclosure, refused one by one through the CLI.
DISCLOSURE_FORMS = {
    "table": "[runtime.tools.disclosure]\nenabled = true\n",
    "dotted_top_level": "runtime.tools.disclosure.enabled = true\n",
    "dotted_under_runtime": "[runtime]\ntools.disclosure.enabled = true\n",
    "dotted_under_runtime_tools": "[runtime.tools]\ndisclosure.profile = 'coding'\n",
    "inline_nested": "runtime = {tools = {disclosure = {enabled = true}}}\n",
    "inline_under_runtime_tools": "[runtime.tools]\ndisclosure = {enabled = true, profile = 'coding'}\n",
    "quoted_keys": "[\"runtime\".\"tools\".'disclosure']\nenabled = true\n",
    "quoted_dotted": "\"runtime\".'tools'.\"disclosure\".enabled = true\n",
    "array_of_tables": "[[runtime.tools.disclosure]]\nenabled = true\n",
}


def template(ws: Workspace, *extra: str, output: Path | None = None, tasks: str | None = None) -> dict:
    result = run(ws.args(*extra, output=output, tasks=tasks))
    assert result.exit_code == 0, result.output
    return json.loads((output or ws.output).read_text())


# --- rejections: nothing written ---------------------------------------------


PAIRED_ONLY = [
    (["--config", "x.toml"], "--config"),
    (["--repetitions", "3"], "--repetitions"),
    (["--seed", "1"], "--seed"),
    (["--run-timeout", "60"], "--run-timeout"),
    (["--profile-python", sys.executable], "--profile-python"),
    (["--live"], "--live"),
    (["--no-live"], "--no-live"),
    (["--plan", "plan.json"], "--plan"),
    (["--approve-plan-digest", "a" * 64], "--approve-plan-digest"),
]


@pytest.mark.parametrize(("extra", "option"), PAIRED_ONLY, ids=[o for _, o in PAIRED_ONLY])
def test_paired_only_options_without_paired_are_refused(ws: Workspace, extra: list[str], option: str):
    args = ["coding", "--output", str(ws.output), "--db", str(ws.db_path), "--source", str(ws.source), *extra]
    refused(ws, args, option, "only apply with --paired")


def test_all_paired_only_options_are_named_together(ws: Workspace):
    args = ["coding", "--output", str(ws.output), "--db", str(ws.db_path), "--seed", "1", "--no-live", "--config", "c.toml"]
    refused(ws, args, "--config, --seed, --no-live only apply with --paired")


SCHEMA_BUDGETS = [
    ["--schema-budgets"],
    ["--schema-budgets", "20000,40000"],
    ["--schema-budgets=1000"],
    ["--schema-budgets", "1", "--schema-budgets", "2"],
    ["--paired", "--schema-budgets"],
    ["--paired", "--live", "--schema-budgets", "40000"],
    ["--paired", "--no-live", "--schema-budgets", "40000"],
    ["--schema-budgets", "40000", "--repetitions", "3"],
    ["--schema-budgets", "--paired"],
]


@pytest.mark.parametrize("extra", SCHEMA_BUDGETS, ids=[" ".join(a) for a in SCHEMA_BUDGETS])
def test_schema_budgets_is_refused_in_any_combination(ws: Workspace, extra: list[str]):
    args = ["coding", "--output", str(ws.output), "--db", str(ws.db_path), *extra]
    refused(ws, args, "--schema-budgets", "identical treatments")


def test_schema_budgets_is_refused_even_with_every_other_option_valid(ws: Workspace):
    refused(ws, ws.args("--schema-budgets", "40000"), "--schema-budgets", "budget_tokens")


ABBREVIATIONS = [["--rep", "3"], ["--pair"], ["--paire"], ["--conf", "x.toml"], ["--approve", "a"], ["--out", "x.json"], ["--schema", "1"], ["--no-li"]]


@pytest.mark.parametrize("extra", ABBREVIATIONS, ids=[a[0] for a in ABBREVIATIONS])
def test_abbreviated_option_names_are_refused(ws: Workspace, extra: list[str]):
    args = ws.args(*extra)
    refused(ws, args, "No such option", extra[0])


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        (["--repetitions", "0"], "--repetitions"),
        (["--repetitions", "-2"], "--repetitions"),
        (["--repetitions", "100000"], "--repetitions"),
        (["--timeout", "0"], "--timeout"),
        (["--timeout", "-660"], "--timeout"),
        (["--run-timeout", "0"], "--run-timeout"),
        (["--run-timeout", "-1"], "--run-timeout"),
    ],
)
def test_non_positive_numbers_are_refused(ws: Workspace, extra: list[str], option: str):
    refused(ws, ws.args(*extra), option)


def test_non_integer_numbers_are_refused(ws: Workspace):
    refused(ws, ws.args("--timeout", "1.5"), "--timeout")


@pytest.mark.parametrize("model", ["gpt-6.1", ":gpt", "openai-codex:", "open ai:gpt", "openai:gpt 6", "OpenAI:gpt", "openai::gpt"])
def test_malformed_model_is_refused(ws: Workspace, model: str):
    refused(ws, ws.args("--model", model), "--model", "PROVIDER:MODEL")


@pytest.mark.parametrize("model", ["openai:sk-proj-4fQx9ZbT2mWc7LpR8sVd", "anthropic:sk-ant-api03-Zx8Qw2Ty6Ui0Op4As", "gemini:AIzaSyD4x7Qm2Pv9Lk3Jh6Gf1Ds8"])
def test_a_model_name_shaped_like_a_key_is_refused_without_echoing_it(ws: Workspace, model: str):
    line = refused(ws, ws.args("--model", model), "--model", "looks like an API key")
    assert model.split(":")[1][:6] not in line


def test_unknown_task_is_refused(ws: Workspace):
    refused(ws, ws.args(tasks=f"{benchmark.task_names()[0]},no-such-task"), "--tasks", "no-such-task")


def test_launcher_outside_the_source_is_refused(ws: Workspace):
    installed = shutil.which("sh") or "/bin/sh"
    refused(ws, ws.args("--launcher", installed), "--launcher", "installed launcher from another revision")


def test_launcher_symlink_leading_out_of_the_source_is_refused(ws: Workspace, tmp_path: Path):
    elsewhere = tmp_path / "other-revision" / "agent"
    elsewhere.parent.mkdir()
    elsewhere.write_text("#!/bin/sh\n")
    elsewhere.chmod(0o755)
    (ws.source / "bin" / "linked").symlink_to(elsewhere)
    refused(ws, ws.args("--launcher", str(ws.source / "bin" / "linked")), "--launcher", "outside the source checkout")


def test_launcher_that_is_not_executable_is_refused(ws: Workspace):
    (ws.source / "lib.py").chmod(0o644)
    refused(ws, ws.args("--launcher", str(ws.source / "lib.py")), "--launcher", "not executable")


def test_profile_that_runs_a_launcher_needs_one(ws: Workspace):
    refused(ws, ws.args("--agent", "generic"), "--launcher", "runs {launcher}")


def test_profile_python_that_is_not_python_is_refused(ws: Workspace, tmp_path: Path):
    fake = tmp_path / "fake-python"
    fake.write_text("#!/bin/sh\necho hello\n")
    fake.chmod(0o755)
    refused(ws, ws.args("--profile-python", str(fake)), "--profile-python", "Python 3")


def test_profile_python_older_than_3_11_is_refused(ws: Workspace, tmp_path: Path):
    # Answers the probe exactly as a Python 3.10 would.
    old = tmp_path / "python3.10"
    answer = json.dumps({"executable": str(old), "version": "3.10.13", "version_info": [3, 10, 13], "tiktoken": None})
    old.write_text(f"#!/bin/sh\necho '{answer}'\n")
    old.chmod(0o755)
    refused(ws, ws.args("--profile-python", str(old)), "--profile-python", "Python 3.10.13", "3.11 or newer")


def test_a_real_python_3_10_is_refused(ws: Workspace):
    real = Path("/root/.pyenv/versions/3.10.13/bin/python3.10")
    if not os.access(real, os.X_OK):
        pytest.skip("no Python 3.10 on this machine")
    refused(ws, ws.args("--profile-python", str(real)), "--profile-python", "3.11 or newer")


def test_missing_profile_python_is_refused(ws: Workspace, tmp_path: Path):
    refused(ws, ws.args("--profile-python", str(tmp_path / "nope")), "--profile-python", "does not exist")


@pytest.mark.parametrize("form", sorted(DISCLOSURE_FORMS))
def test_base_config_setting_disclosure_is_refused(ws: Workspace, form: str):
    ws.config.write_text("title = 'base'\n" + DISCLOSURE_FORMS[form])
    refused(ws, ws.args(), "--config", "sets runtime.tools.disclosure")


def test_invalid_toml_is_refused(ws: Workspace):
    ws.config.write_text("[runtime\nport = 0\n")
    refused(ws, ws.args(), "--config", "not valid TOML")


def test_inline_runtime_table_is_refused(ws: Workspace):
    ws.config.write_text("runtime = {port = 0}\n")
    refused(ws, ws.args(), "--config", "inline tables")


def test_missing_config_is_refused(ws: Workspace):
    args = [a for a in ws.args() if a not in ("--config", str(ws.config))]
    refused(ws, args, "--config", "required with --paired")


def test_missing_config_file_is_refused(ws: Workspace):
    ws.config.unlink()
    refused(ws, ws.args(), "--config", "does not exist")


def test_missing_output_is_refused(ws: Workspace):
    args = [a for a in ws.args() if a not in ("--output", str(ws.output))]
    refused(ws, args, "--output", "required")


@pytest.mark.parametrize("where", ["output", "db", "failure-dir"])
def test_outputs_inside_the_source_are_refused(ws: Workspace, where: str):
    inside = ws.source / "reports" / "x"
    if where == "output":
        args = ws.args(output=inside)
    elif where == "db":
        args = [*ws.args(), "--db", str(inside)]
    else:
        args = ws.args("--failure-dir", str(inside))
    refused(ws, args, f"--{where}", "changes the source digest")
    assert not (ws.source / "reports").exists()


def test_a_base_config_inside_the_source_is_refused(ws: Workspace):
    # The help always said "outside --source"; one inside was taken (an audit of bad input).
    inside = ws.source / "base.toml"
    inside.write_text(ws.config.read_text())
    args = ws.args()
    args[args.index("--config") + 1] = str(inside)
    refused(ws, args, "--config", "is inside the source checkout")


def test_output_that_would_overwrite_the_config_is_refused(ws: Workspace):
    result = run(ws.args(output=ws.config))
    assert result.exit_code == 2 and "overwrite the --config file" in result.output
    assert ws.config.read_text().startswith("[runtime]")


@pytest.mark.parametrize("extra", [["--plan", "p.json"], ["--approve-plan-digest", "a" * 64], ["--no-live", "--plan", "p.json"]])
def test_approval_options_without_live_are_refused(ws: Workspace, extra: list[str]):
    refused(ws, ws.args(*extra), extra[-2], "only used with --live")


def test_live_with_an_unapproved_plan_writes_nothing(ws: Workspace, tmp_path: Path):
    plan = tmp_path / "operator" / "plan.json"
    plan.write_text('{"approved": true}')
    refused(ws, ws.args("--live", "--plan", str(plan), "--approve-plan-digest", "a" * 64), "--plan")


@pytest.mark.parametrize(
    ("extra", "needle"),
    [([], "--plan"), (["--plan", "PLAN"], "--approve-plan-digest"), (["--plan", "PLAN", "--approve-plan-digest", "ABC"], "64 lowercase")],
)
def test_live_approval_inputs_are_checked_first(ws: Workspace, tmp_path: Path, extra: list[str], needle: str):
    plan = tmp_path / "operator" / "plan.json"
    plan.write_text("{}")
    refused(ws, ws.args("--live", *[str(plan) if a == "PLAN" else a for a in extra]), needle)


def test_source_that_is_not_a_checkout_is_refused(ws: Workspace, tmp_path: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    if subprocess.run(["git", "-C", str(plain), "rev-parse"], capture_output=True).returncode == 0:
        pytest.skip("the temporary directory sits inside a git checkout")
    args = ws.args()
    args[args.index("--source") + 1] = str(plain)
    refused(ws, args, "--source", "not a git checkout")


def test_source_subdirectory_is_refused(ws: Workspace):
    args = ws.args()
    args[args.index("--source") + 1] = str(ws.source / "bin")
    refused(ws, args, "--source", "give the checkout's root")


def test_default_source_outside_a_checkout_is_refused(ws: Workspace, tmp_path: Path, monkeypatch):
    plain = tmp_path / "plain"
    plain.mkdir()
    if subprocess.run(["git", "-C", str(plain), "rev-parse"], capture_output=True).returncode == 0:
        pytest.skip("the temporary directory sits inside a git checkout")
    monkeypatch.chdir(plain)
    args = ws.args()
    del args[args.index("--source") : args.index("--source") + 2]
    refused(ws, args, "--source", "not inside a git checkout")


# --- plan-only mode ----------------------------------------------------------


def test_plan_only_writes_the_template_and_records_the_campaign(ws: Workspace):
    result = run(ws.args())
    assert result.exit_code == 0, result.output
    doc = json.loads(ws.output.read_text())
    assert doc["schema_version"] == 3 and doc["kind"] == "paired_disclosure_plan"
    assert doc["live_calls"] == 0
    assert doc["decision"] == {"status": "pending", "recommendation": "keep current defaults; keep the coding disclosure profile opt-in"}
    assert "not authorization" in doc["note"]
    plan = doc["plan"]
    assert doc["plan_digest"] == spec_digest(plan)
    tasks = list(benchmark.task_names()[:2])
    experiment = plan["experiment"]
    assert experiment["tasks"] == tasks
    assert experiment["model"] == "openai-codex:gpt-6.1-sol"
    assert (experiment["repetitions"], experiment["seed"], experiment["timeout"], experiment["run_timeout"]) == (2, 107, 660, 7200)
    assert [v["name"] for v in experiment["variants"]] == ["baseline", "coding"]
    assert set(experiment["fixture_digests"]) == set(tasks)
    assert experiment["agent"] == "offline" and experiment["launcher"] is None
    assert plan["approved"] is False and plan["max_attempts"] == len(doc["scheduled_trials"]) == 2 * 2 * 2
    assert plan["max_spend_usd"] is None and plan["credential_env"] == [] and plan["provider_budget_enforced"] is False
    assert [t["position"] for t in doc["scheduled_trials"]] == list(range(8))

    assert "planned 8 trials (2 tasks x 2 variants x 2 repetitions)" in result.output
    assert doc["plan_digest"] in result.output and "not authorization" in result.output
    assert str(ws.output) in result.output and str(ws.db_path) in result.output

    engine = make_engine(resolve_url(str(ws.db_path)))
    try:
        row = repository.latest_campaign(engine, "paired")
        assert (row.state, row.live, row.agent, row.seed, row.scheduled_count) == ("planned", False, "offline", 107, 8)
        assert row.plan_digest == doc["plan_digest"]
        assert json.loads(row.experiment_json) == experiment
        trials = repository.trials_in_order(engine, row.id)
        assert [(t.trial_id, t.position, t.pair_order) for t in trials] == [
            (t["trial_id"], t["position"], t["pair_order"]) for t in doc["scheduled_trials"]
        ]
        assert {t.provider for t in trials} == {"openai-codex"}
    finally:
        engine.dispose()
    shown = run(["sql", "select kind, state, scheduled_count from campaigns", "--db", str(ws.db_path), "--json"])
    assert json.loads(shown.output) == [{"kind": "paired", "state": "planned", "scheduled_count": 8}]
    assert sorted(p.name for p in ws.out_dir.iterdir()) == ["plan-template.json"]


def test_same_inputs_give_a_byte_identical_template(ws: Workspace):
    first, second = ws.out_dir / "a.json", ws.out_dir / "b.json"
    assert run(ws.args(output=first)).exit_code == 0
    assert run(ws.args(output=second)).exit_code == 0
    assert first.read_bytes() == second.read_bytes()


def test_rerun_overwrites_the_template_atomically(ws: Workspace):
    template(ws)
    template(ws, "--seed", "5")
    assert sorted(p.name for p in ws.out_dir.iterdir()) == ["plan-template.json"]
    assert json.loads(ws.output.read_text())["plan"]["experiment"]["seed"] == 5


def test_default_source_is_the_git_root_of_the_cwd(ws: Workspace, monkeypatch):
    explicit = template(ws)
    monkeypatch.chdir(ws.source / "bin")
    args = ws.args()
    del args[args.index("--source") : args.index("--source") + 2]
    result = run(args)
    assert result.exit_code == 0, result.output
    assert json.loads(ws.output.read_text())["plan"] == explicit["plan"]


def test_launcher_inside_the_source_is_bound(ws: Workspace):
    doc = template(ws, "--launcher", str(ws.source / "bin" / "agent"))
    experiment = doc["plan"]["experiment"]
    assert experiment["launcher"] == "bin/agent" and len(experiment["launcher_digest"]) == 64


def test_all_twelve_tasks_by_default(ws: Workspace):
    args = ws.args()
    del args[args.index("--tasks") : args.index("--tasks") + 2]
    result = run(args)
    assert result.exit_code == 0, result.output
    assert json.loads(ws.output.read_text())["plan"]["experiment"]["tasks"] == list(benchmark.task_names())


# --- digest sensitivity, end to end --------------------------------------------


def experiment_and_digest(ws: Workspace, *extra: str) -> tuple[dict, str]:
    doc = template(ws, *extra)
    return doc["plan"]["experiment"], doc["plan_digest"]


def test_one_tracked_source_byte_changes_source_and_plan_digest(ws: Workspace):
    before, digest = experiment_and_digest(ws)
    (ws.source / "lib.py").write_text("VALUE = 2\n")
    after, changed = experiment_and_digest(ws)
    assert after["source_digest"] != before["source_digest"] and changed != digest
    assert after["revision"] == before["revision"]  # a dirty checkout is not just its HEAD


def test_an_untracked_source_file_changes_source_and_plan_digest(ws: Workspace):
    before, digest = experiment_and_digest(ws)
    (ws.source / "new_module.py").write_text("X = 1\n")
    after, changed = experiment_and_digest(ws)
    assert after["source_digest"] != before["source_digest"] and changed != digest


def test_an_ignored_file_changes_nothing(ws: Workspace):
    before, digest = experiment_and_digest(ws)
    (ws.source / "_build").mkdir()
    (ws.source / "_build" / "out.beam").write_bytes(b"\0\1")
    (ws.source / "debug.log").write_text("noise")
    after, same = experiment_and_digest(ws)
    assert after == before and same == digest


def test_the_config_changes_config_digest_and_plan_digest(ws: Workspace):
    before, digest = experiment_and_digest(ws)
    ws.config.write_text(ws.config.read_text() + "# one more byte\n")
    after, changed = experiment_and_digest(ws)
    assert after["config_digest"] != before["config_digest"] and changed != digest
    assert [v["config_digest"] for v in after["variants"]] != [v["config_digest"] for v in before["variants"]]
    assert [v["overlay_digest"] for v in after["variants"]] == [v["overlay_digest"] for v in before["variants"]]


def test_the_seed_changes_the_plan_digest(ws: Workspace):
    before, digest = experiment_and_digest(ws)
    after, changed = experiment_and_digest(ws, "--seed", "108")
    assert (before["seed"], after["seed"]) == (107, 108) and changed != digest


def test_the_interpreter_changes_profile_python_digest_and_plan_digest(ws: Workspace):
    candidates = ["/usr/bin/python3.11", shutil.which("python3.12"), shutil.which("python3.13")]
    mine = os.path.realpath(sys.executable)
    other = next((c for c in candidates if c and os.access(c, os.X_OK) and os.path.realpath(c) != mine), None)
    if other is None:
        pytest.skip("no second Python >= 3.11 on this machine")
    before, digest = experiment_and_digest(ws, "--profile-python", sys.executable)
    after, changed = experiment_and_digest(ws, "--profile-python", other)
    assert after["profile_python_digest"] != before["profile_python_digest"] and changed != digest
    assert experiment_and_digest(ws)[0]["profile_python_digest"] == before["profile_python_digest"]


def test_one_fixture_byte_changes_fixture_digest_and_plan_digest(ws: Workspace, tmp_path: Path):
    # The lane's own computation over a copied task: no monkeypatching of the benchmark.
    options = CodingOptions(
        paired=True, source=ws.source, config=ws.config, output=ws.output, tasks=benchmark.task_names()[0], repetitions=2
    )
    inputs = paired_plan.validate(options, str(ws.db_path), ws.source)
    task = inputs.tasks[0]
    copy = dataclasses.replace(task, root=tmp_path / "task-copy")
    shutil.copytree(task.root, copy.root)
    original = paired_plan.compute_experiment(dataclasses.replace(inputs, tasks=(copy,)))
    victim = next(p for p in sorted(copy.fixture_dir.rglob("*")) if p.is_file())
    data = bytearray(victim.read_bytes())
    data[-1] ^= 1
    victim.write_bytes(bytes(data))
    changed = paired_plan.compute_experiment(dataclasses.replace(inputs, tasks=(copy,)))
    assert original.fixture_digests[task.name] == benchmark.fixture_digest(task)
    assert changed.fixture_digests[task.name] != original.fixture_digests[task.name]
    schedule = original.schedule()
    assert template_document(changed, schedule)["plan_digest"] != template_document(original, schedule)["plan_digest"]
    assert ws.nothing_written()


def test_an_agent_that_cannot_show_its_profile_is_refused_before_any_trial(ws: Workspace, tmp_path_factory):
    blind = blind_profile(tmp_path_factory.mktemp("profile"))
    refused(ws, ws.args("--agent", str(blind)), "--agent", 'applied_profile_from = "none"')


def test_a_wire_agent_without_a_tokenizer_cache_is_refused(ws: Workspace, monkeypatch, tmp_path):
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tmp_path / "no-cache"))
    result = run(ws.args("--agent", "offline-wire", "--model", "replay:scripted"))
    assert result.exit_code == 1 and "prepare-cache" in result.output
    assert ws.nothing_written()


def test_a_wire_agent_needs_a_profile_python_with_the_proxys_packages(ws: Workspace, tmp_path, tokenizer_cache, monkeypatch):
    import subprocess
    import sys

    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache))
    bare = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    refused(ws, ws.args("--agent", "offline-wire", "--model", "replay:scripted", "--profile-python", str(bare / "bin" / "python")), "--profile-python", "tiktoken and aiohttp")
