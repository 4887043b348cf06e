"""Replay scripts: one per task, generated from its files, mapped onto any tool set,
and driving a real conversation to a passing hidden verifier."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import anthropic
import openai
import pytest

from campaign import benchmark
from campaign.replay import build_app, running_in_thread, script_for, scripted_total_usage
from campaign.replay.detect import action_fence, find_cwd, find_task, wants_submit_marker
from campaign.replay.scripts import FAILING_PROBES, GENERATORS, SUITE_FAILING_PROBE, generator_reproduces, solution_files
from campaign.replay.steps import EditFile, Finish, ReadFile, Run, Usage, WriteFile, usage_for_step
from campaign.replay.tools import SUBMIT_MARKER, Environment, ToolSpec, map_step, plan, shell_edit, shell_write
from campaign.replay.turns import Conversation, next_reply
from campaign.replay.wire import responses as responses_wire

ALL = benchmark.task_names()


def _schema(**props: dict) -> dict:
    return {"type": "object", "properties": props, "required": [next(iter(props))]}


STR = {"type": "string"}
CLAUDE_CODE = (
    ToolSpec("Task", "Launch a sub-agent", _schema(prompt=STR, subagent_type=STR)),
    ToolSpec("Bash", "Executes a given bash command", _schema(command=STR, description=STR, timeout={"type": "number"})),
    ToolSpec("BashOutput", "Output of a background bash shell", _schema(bash_id=STR)),
    ToolSpec("Read", "Reads a file", _schema(file_path=STR, offset={"type": "number"})),
    ToolSpec("Edit", "Edits a file", {**_schema(file_path=STR, old_string=STR, new_string=STR), "required": ["file_path", "old_string", "new_string"]}),
    ToolSpec("Write", "Writes a file", {**_schema(file_path=STR, content=STR), "required": ["file_path", "content"]}),
)
CODEX_ARRAY = (
    ToolSpec("shell", "Runs a shell command and returns its output.", _schema(command={"type": "array", "items": STR}, workdir=STR, timeout_ms={"type": "number"})),
    ToolSpec("update_plan", "Updates the task plan", _schema(plan={"type": "array"})),
)
CODEX_STRING = (ToolSpec("shell_command", "Runs a shell command", _schema(command=STR, workdir=STR)),)
CODEX_EXEC = (ToolSpec("exec_command", "Runs a command in a PTY", _schema(cmd=STR, yield_time_ms={"type": "number"})),)
MINI = (ToolSpec("bash", "Execute a bash command", _schema(command=STR)),)
OPENCODE = (
    ToolSpec("bash", "Executes a command", {**_schema(command=STR, description=STR), "required": ["command", "description"]}),
    ToolSpec("read", "Read a file", _schema(filePath=STR)),
    ToolSpec("write", "Write a file", {**_schema(filePath=STR, content=STR), "required": ["filePath", "content"]}),
    ToolSpec("edit", "Edit a file", {**_schema(filePath=STR, oldString=STR, newString=STR), "required": ["filePath", "oldString", "newString"]}),
)
EDITOR_ONLY = (ToolSpec("str_replace_editor", "Custom editing tool; if a `command` generates long output it is clipped", _schema(command={"type": "string", "enum": ["view", "create"]}, path=STR)),)

U = usage_for_step(0)
READ, WRITE = ReadFile("pkg/a.py", U), WriteFile("pkg/a.py", "x = 'it''s'\n", U)
EDIT, RUN, FINISH = EditFile("pkg/a.py", "x", "y", U), Run("python3 -m unittest -q", U), Finish("All done.", U)


# --- scripts ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_every_task_has_a_script_that_writes_its_whole_solution(name):
    task = benchmark.get_task(name)
    steps = script_for(name)
    assert isinstance(steps[-1], Finish) and not any(isinstance(s, Finish) for s in steps[:-1])
    written = {s.path: s.content for s in steps if isinstance(s, WriteFile)}
    generated = {GENERATORS[name].output} if name in GENERATORS else set()
    assert set(written) | generated == set(solution_files(task))
    for rel, content in written.items():
        assert content == (task.solution_dir / rel).read_text(encoding="utf-8")
    reads = [s.path for s in steps if isinstance(s, ReadFile)]
    assert reads and all((task.fixture_dir / rel).is_file() for rel in reads)
    # Every existing file is read before it is overwritten (Claude Code's Write insists).
    for index, step in enumerate(steps):
        if isinstance(step, WriteFile) and (task.fixture_dir / step.path).is_file():
            assert any(isinstance(s, ReadFile) and s.path == step.path for s in steps[:index])
    assert [s.usage for s in steps] == [usage_for_step(i) for i in range(len(steps))]


@pytest.mark.parametrize("name", ALL)
def test_scripted_total_is_the_sum_of_the_steps(name):
    steps = script_for(name)
    total = scripted_total_usage(name)
    assert total.uncached_input == sum(s.usage.uncached_input for s in steps)
    assert total.cached_input == sum(s.usage.cached_input for s in steps)
    assert total.cache_write == sum(s.usage.cache_write for s in steps)
    assert total.output == sum(s.usage.output for s in steps)


def test_step_usage_fields_never_coincide():
    for index in range(40):
        u = usage_for_step(index)
        assert len({u.uncached_input, u.cached_input, u.cache_write, u.output}) == 4
        assert u != usage_for_step(index + 1)


def test_recovery_tasks_fail_a_command_before_any_fix(tmp_path):
    recovery = [t for t in benchmark.all_tasks() if t.requires_failed_tool_call]
    assert [t.name for t in recovery] == ["unit-table-regen"]
    for task in recovery:
        steps = script_for(task.name)
        first_write = next(i for i, s in enumerate(steps) if isinstance(s, WriteFile))
        failing = [s for s in steps[:first_write] if isinstance(s, Run) and s.expect_failure]
        assert [s.command for s in failing] == [FAILING_PROBES[task.name]]
        work = tmp_path / task.name
        benchmark.copy_fixture(task, work)
        probe = subprocess.run(failing[0].command, shell=True, cwd=work, capture_output=True, text=True, timeout=60)
        assert probe.returncode != 0 and "UnknownUnit" in probe.stderr
        benchmark.apply_solution(task, work)
        fixed = subprocess.run(failing[0].command, shell=True, cwd=work, capture_output=True, text=True, timeout=60)
        assert fixed.returncode == 0 and fixed.stdout.strip() == "1852.0"


def test_unit_table_is_regenerated_by_its_generator_not_written():
    task = benchmark.get_task("unit-table-regen")
    generator = GENERATORS[task.name]
    assert generator_reproduces(task, generator)
    steps = script_for(task.name)
    assert Run(generator.command, steps[3].usage) in steps
    assert generator.output not in {s.path for s in steps if isinstance(s, WriteFile)}


# --- detection -------------------------------------------------------------------


def test_task_found_in_reflowed_prompt_and_cwd_from_either_client():
    task = benchmark.get_task("slug-unicode")
    reflowed = "Please solve this issue: " + " ".join(task.prompt.split()).replace(". ", ".\n  ")
    assert find_task(["system text", reflowed]) == task
    assert find_task(["nothing to see"]) is None
    assert find_cwd(["<env>\nWorking directory: /tmp/some dir\nIs directory a git repo: No\n</env>"]) == "/tmp/some dir"
    assert find_cwd(["<environment_context>\n  <cwd>/work/x</cwd>\n</environment_context>"]) == "/work/x"
    assert find_cwd(["no directory here"]) is None
    assert wants_submit_marker([f"when done run echo {SUBMIT_MARKER}"]) and not wants_submit_marker(["hi"])


def test_codex_history_counts_one_turn_per_run_of_model_items():
    prompt = benchmark.get_task("dotenv-quoting").prompt
    items = [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "be careful"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context><cwd>/w</cwd></environment_context>"}]},
        {"role": "user", "content": prompt},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        {"type": "reasoning", "id": "rs_2", "summary": []},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "next"}]},
        {"type": "function_call", "call_id": "c2", "name": "shell", "arguments": "{}"},
        {"type": "function_call", "call_id": "c3", "name": "shell", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c2", "output": "ok"},
        {"type": "function_call_output", "call_id": "c3", "output": "ok"},
    ]
    conversation = responses_wire.parse({"model": "m", "input": items, "instructions": "You are Codex."})
    assert conversation.assistant_turns == 2
    assert find_cwd(conversation.opening) == "/w"
    assert find_task(conversation.opening).name == "dotenv-quoting"
    assert next_reply(conversation).step == 2


# --- mapping ---------------------------------------------------------------------


def test_claude_code_tools_get_dedicated_calls_with_absolute_paths():
    env = Environment(cwd="/w")
    assert map_step(CLAUDE_CODE, READ, env).call.arguments == {"file_path": "/w/pkg/a.py"}
    write = map_step(CLAUDE_CODE, WRITE, env).call
    assert (write.name, write.arguments) == ("Write", {"file_path": "/w/pkg/a.py", "content": WRITE.content})
    edit = map_step(CLAUDE_CODE, EDIT, env).call
    assert (edit.name, edit.arguments) == ("Edit", {"file_path": "/w/pkg/a.py", "old_string": "x", "new_string": "y"})
    run = map_step(CLAUDE_CODE, RUN, env).call
    assert run.name == "Bash" and run.arguments["command"] == "cd /w && python3 -m unittest -q" and run.arguments["description"]
    finish = map_step(CLAUDE_CODE, FINISH, env)
    assert finish.call is None and finish.text == "All done."


def test_codex_array_shell_expresses_everything_as_bash_lc():
    env = Environment(cwd="/w")
    read = map_step(CODEX_ARRAY, READ, env).call
    assert read.name == "shell" and read.arguments == {"command": ["bash", "-lc", "cat /w/pkg/a.py"], "workdir": "/w"}
    write = map_step(CODEX_ARRAY, WRITE, env).call.arguments["command"]
    assert write[:2] == ["bash", "-lc"] and "base64 -d > /w/pkg/a.py" in write[2]
    assert map_step(CODEX_ARRAY, RUN, env).call.arguments["command"] == ["bash", "-lc", "cd /w && python3 -m unittest -q"]
    assert map_step(CODEX_ARRAY, FINISH, env).call is None


def test_codex_string_shells_get_a_string_command():
    assert map_step(CODEX_STRING, READ, Environment()).call.arguments == {"command": "cat pkg/a.py"}
    call = map_step(CODEX_EXEC, RUN, Environment()).call
    assert (call.name, call.arguments) == ("exec_command", {"cmd": "python3 -m unittest -q"})


def test_mini_swe_agent_tool_mode_finishes_with_the_marker_command():
    env = Environment(submit_marker=True)
    assert map_step(MINI, READ, env).call.arguments == {"command": "cat pkg/a.py"}
    finish = map_step(MINI, FINISH, env)
    assert finish.call.arguments == {"command": f"echo {SUBMIT_MARKER}"} and finish.text == "All done."


def test_no_tools_means_text_with_exactly_one_bash_block():
    for step, command in ((READ, "cat pkg/a.py"), (RUN, RUN.command), (FINISH, f"echo {SUBMIT_MARKER}")):
        action = map_step((), step, Environment())
        assert action.call is None
        assert re.findall(r"```bash\n(.*?)\n```", action.text, re.S) == [command]


def test_mini_swe_agent_2_text_mode_gets_its_own_fence():
    # mini 2.x's text protocol parses only ```mswea_bash_command blocks; its prompt says so.
    opening = ["Reply with exactly one ```mswea_bash_command block.", f"Finish with {SUBMIT_MARKER}."]
    assert action_fence(opening) == "mswea_bash_command" and action_fence(["plain"]) == "bash"
    action = map_step((), RUN, Environment(fence=action_fence(opening)))
    assert re.findall(r"```mswea_bash_command\n(.*?)\n```", action.text, re.S) == [RUN.command]


def test_opencode_tools_fill_the_required_description():
    env = Environment(cwd="/w")
    assert map_step(OPENCODE, WRITE, env).call.arguments == {"filePath": "/w/pkg/a.py", "content": WRITE.content}
    run = map_step(OPENCODE, RUN, env).call
    assert run.name == "bash" and set(run.arguments) == {"command", "description"}


def test_an_editor_command_enum_is_not_a_shell_and_unexpressible_steps_are_dropped():
    assert map_step(EDITOR_ONLY, RUN, Environment()) is None
    steps = [READ, RUN, FINISH]
    assert [a.text for a, _ in plan(EDITOR_ONLY, steps, Environment())] == ["All done."]
    no_shell = tuple(t for t in CLAUDE_CODE if t.name != "Bash")
    kept = plan(no_shell, steps, Environment())
    assert [(a.call.name if a.call else None, u) for a, u in kept] == [("Read", READ.usage), (None, FINISH.usage)]
    assert len(plan(CLAUDE_CODE, steps, Environment())) == 3


@pytest.mark.parametrize("content", ["plain\n", "no newline at end", "quotes ' \" ` $HOME \\n \\ end\n\n", "unicode: Ångström ﬁ 日本語 🎉\n", ""])
def test_shell_write_and_edit_reproduce_content_exactly(tmp_path, content):
    target = tmp_path / "deep" / "dir" / "f.txt"
    subprocess.run(["bash", "-c", shell_write(str(target), content)], check=True, timeout=30)
    assert target.read_bytes() == content.encode("utf-8")
    target.write_text("before 'one' after\n", encoding="utf-8")
    subprocess.run(["bash", "-c", shell_edit(str(target), "'one'", content)], check=True, timeout=30)
    assert target.read_text(encoding="utf-8") == f"before {content} after\n"


def test_unknown_conversation_gets_a_plain_final_answer():
    reply = next_reply(Conversation(model="m", tools=CLAUDE_CODE, assistant_turns=0, opening=("hello",)))
    assert reply.action.call is None and "no replay script" in reply.action.text
    assert reply.usage == scripted_total_usage(None)


# --- whole conversations through the server --------------------------------------


@pytest.fixture(scope="module")
def server():
    with running_in_thread(build_app()) as running:
        yield running


def _run_shell(command: str | list[str], cwd: Path) -> tuple[str, bool]:
    argv = command if isinstance(command, list) else ["bash", "-c", command]
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr, done.returncode != 0


def _claude_code_tool(name: str, args: dict, cwd: Path) -> tuple[str, bool]:
    """What a Claude-Code-like client does with each call: real file and shell effects."""
    path = Path(args.get("file_path", cwd))
    assert path.is_absolute(), args
    if name == "Read":
        return path.read_text(encoding="utf-8"), False
    if name == "Write":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(args["content"], encoding="utf-8")
        return "written", False
    if name == "Edit":
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(args["old_string"], args["new_string"], 1), encoding="utf-8")
        return "edited", False
    assert name == "Bash", name
    return _run_shell(args["command"], cwd)


def _verify(task: benchmark.Task, work: Path) -> subprocess.CompletedProcess[str]:
    benchmark.install_verifier(task, work)
    return subprocess.run(benchmark.verifier_argv(task, sys.executable, work), cwd=work, capture_output=True, text=True, timeout=300)


def _add(total: Usage, uncached: int, cached: int, write: int, output: int) -> Usage:
    return total + Usage(uncached, cached, write, output)


ANTHROPIC_TOOLS = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in CLAUDE_CODE]


@pytest.mark.parametrize("name", ALL)
def test_claude_code_like_conversation_solves_the_task(server, tmp_path, name):
    task = benchmark.get_task(name)
    work = tmp_path / "work"
    benchmark.copy_fixture(task, work)
    assert _verify(task, work).returncode != 0  # the unfixed fixture fails its hidden suite
    client = anthropic.Anthropic(base_url=server.base_url, api_key="dummy", max_retries=0)
    system = f"You are a coding agent.\n<env>\nWorking directory: {work}\nPlatform: linux\n</env>"
    messages: list[dict] = [{"role": "user", "content": [{"type": "text", "text": task.prompt}]}]
    total, failed = Usage(0, 0, 0, 0), []
    for _ in range(30):
        with client.messages.stream(model="claude-replay", max_tokens=4096, system=system, messages=messages, tools=ANTHROPIC_TOOLS) as stream:
            message = stream.get_final_message()
        u = message.usage
        total = _add(total, u.input_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens, u.output_tokens)
        content = [{"type": "text", "text": b.text} if b.type == "text" else {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input} for b in message.content]
        messages.append({"role": "assistant", "content": content})
        if message.stop_reason == "end_turn":
            break
        results = []
        for block in (b for b in message.content if b.type == "tool_use"):
            output, is_error = _claude_code_tool(block.name, block.input, work)
            if is_error:
                failed.append(block.input["command"])
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": output, "is_error": is_error})
        messages.append({"role": "user", "content": results})
    assert message.stop_reason == "end_turn"
    assert total == scripted_total_usage(name)
    assert failed == ([f"cd {work} && {FAILING_PROBES[name]}"] if task.requires_failed_tool_call else [])
    verdict = _verify(task, work)
    assert verdict.returncode == 0, verdict.stderr[-2000:]


CODEX_TOOLS = [{"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters, "strict": False} for t in CODEX_ARRAY]


@pytest.mark.parametrize("name", ["unit-table-regen", "config-layering"])
def test_codex_like_shell_only_conversation_solves_the_task(server, tmp_path, name):
    task = benchmark.get_task(name)
    work = tmp_path / "work"
    benchmark.copy_fixture(task, work)
    client = openai.OpenAI(base_url=f"{server.base_url}/v1", api_key="dummy", max_retries=0)
    items: list[dict] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"<environment_context>\n  <cwd>{work}</cwd>\n</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": task.prompt}]},
    ]
    total, failed, calls = Usage(0, 0, 0, 0), 0, 0
    for turn in range(30):
        response = client.responses.create(model="gpt-replay", instructions="You are Codex.", input=items, tools=CODEX_TOOLS, stream=False)
        u = response.usage
        total = _add(total, u.input_tokens - u.input_tokens_details.cached_tokens, u.input_tokens_details.cached_tokens, 0, u.output_tokens)
        # Codex keeps reasoning items in its history: they must not count as extra turns.
        items.append({"type": "reasoning", "id": f"rs_{turn}", "summary": []})
        items += [item.model_dump(exclude_none=True) for item in response.output]
        function_calls = [item for item in response.output if item.type == "function_call"]
        if not function_calls:
            break
        for call in function_calls:
            args = json.loads(call.arguments)
            assert args["workdir"] == str(work)
            output, is_error = _run_shell(args["command"], work)
            calls, failed = calls + 1, failed + is_error
            items.append({"type": "function_call_output", "call_id": call.call_id, "output": output})
    scripted = scripted_total_usage(name)
    # The OpenAI shape folds cache writes into uncached input.
    assert total == Usage(scripted.uncached_input + scripted.cache_write, scripted.cached_input, 0, scripted.output)
    assert calls == len(script_for(name)) - 1
    assert failed == (1 if task.requires_failed_tool_call else 0)
    verdict = _verify(task, work)
    assert verdict.returncode == 0, verdict.stderr[-2000:]


def test_mini_swe_agent_text_mode_conversation_solves_the_task(server, tmp_path):
    task = benchmark.get_task("billing-month-end")
    work = tmp_path / "work"
    benchmark.copy_fixture(task, work)
    client = openai.OpenAI(base_url=f"{server.base_url}/v1", api_key="dummy", max_retries=0)
    system = f"Reply with exactly one ```bash block. When done, run: echo {SUBMIT_MARKER}"
    messages: list[dict] = [{"role": "system", "content": system}, {"role": "user", "content": f"Please solve this issue: {task.prompt}"}]
    total = Usage(0, 0, 0, 0)
    for _ in range(30):
        chunks = list(client.chat.completions.create(model="gpt-replay", messages=messages, stream=True, stream_options={"include_usage": True}))
        u = chunks[-1].usage
        total = _add(total, u.prompt_tokens - u.prompt_tokens_details.cached_tokens, u.prompt_tokens_details.cached_tokens, 0, u.completion_tokens)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        messages.append({"role": "assistant", "content": text})
        (command,) = re.findall(r"```bash\n(.*?)\n```", text, re.S)
        output, is_error = _run_shell(command, work)
        if output.splitlines()[:1] == [SUBMIT_MARKER]:
            break
        messages.append({"role": "user", "content": f"<returncode>{int(is_error)}</returncode>\n<output>{output}</output>"})
    else:
        pytest.fail("the conversation never submitted")
    scripted = scripted_total_usage(task.name)
    assert total == Usage(scripted.uncached_input + scripted.cache_write, scripted.cached_input, 0, scripted.output)
    assert _verify(task, work).returncode == 0


# --- a task suite's tasks (--task-suite): scripts derived, never written by hand ----------

SUITES = Path(__file__).parent / "suites"


@pytest.mark.parametrize(("suite", "name"), [("engine-example", "node-slugify"), ("engine-example", "py-config-merge"), ("engine-example", "sh-csv-total"),
                                             ("harbor-example", "python-roman")])  # fmt: skip
def test_a_suite_tasks_script_solves_it_in_a_fresh_working_copy(tmp_path, suite, name):
    task = benchmark.load_suite(SUITES / suite).get(name)
    steps = script_for(name, str(SUITES / suite))
    assert isinstance(steps[-1], Finish) and [s.usage for s in steps] == [usage_for_step(i) for i in range(len(steps))]
    work = tmp_path / "work"
    benchmark.copy_fixture(task, work)
    for step in steps:
        if isinstance(step, WriteFile):
            (work / step.path).parent.mkdir(parents=True, exist_ok=True)
            (work / step.path).write_text(step.content, encoding="utf-8")
        elif isinstance(step, Run) and not task.harbor:  # a Harbor script's /solution lives in the attempt's own root
            # As in an attempt, the script's `mktemp -d` lands in a TMPDIR of its own (else /tmp keeps it).
            env = {**os.environ, "TMPDIR": str(tmp_path)}
            done = subprocess.run(step.command, shell=True, cwd=work, env=env, capture_output=True, text=True, timeout=60)
            assert (done.returncode != 0) is step.expect_failure, done.stderr
    if task.harbor:
        assert any(isinstance(s, Run) and "/solution" in s.command and "solve.sh" in s.command for s in steps)
        return
    benchmark.install_verifier(task, work)
    verdict = subprocess.run(benchmark.verifier_argv(task, sys.executable), cwd=work, capture_output=True, timeout=60)
    assert verdict.returncode == 0, verdict.stderr


def test_a_suite_recovery_task_fails_a_command_before_any_fix():
    steps = script_for("sh-csv-total", str(SUITES / "engine-example"))
    first_write = next(i for i, s in enumerate(steps) if isinstance(s, WriteFile))
    assert [s.command for s in steps[:first_write] if isinstance(s, Run) and s.expect_failure] == [SUITE_FAILING_PROBE]


def test_a_suite_task_is_found_from_its_prompt_only_within_its_suite():
    suite = benchmark.load_suite(SUITES / "harbor-example")
    task = suite.get("shell-inventory")
    opening = ["You are a helpful agent.", "  ".join(task.prompt.split())]
    assert find_task(opening, suite.tasks) == task
    assert find_task(opening) is None
