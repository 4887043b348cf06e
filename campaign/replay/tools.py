"""Map an abstract step onto the tools the client offered in this request.

Pure functions of (tool catalog, step, environment): the server calls them on every
request, and because a client offers the same catalog all conversation long, the
same step always becomes the same call. Dedicated read/write/edit tools with
recognisable parameters are preferred (Claude Code's ``Read``/``Write``/``Edit``,
opencode's ``read``/``write``/``edit``); everything else goes through any shell-like
tool (``Bash``, Codex's ``shell``/``shell_command``/``exec_command``,
mini-swe-agent's ``bash``). With no tools at all the reply is text holding exactly
one ```bash block, mini-swe-agent's original text protocol.
"""

from __future__ import annotations

import base64
import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from campaign.replay.steps import (
    EditFile,
    Finish,
    ReadFile,
    Run,
    Step,
    Usage,
    WriteFile,
)

#: mini-swe-agent ends a run when a command's first output line is this.
SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"

_PATH_PARAMS = ("file_path", "path", "filePath", "absolute_path", "filename")
_CONTENT_PARAMS = ("content", "contents", "file_text", "text")
_OLD_PARAMS = ("old_string", "old_str", "oldString", "old_text")
_NEW_PARAMS = ("new_string", "new_str", "newString", "new_text")
_COMMAND_PARAMS = ("command", "cmd")
# Parameters we can always fill with a one-line note (opencode's bash requires it).
_NOTE_PARAMS = ("description",)

_READ_NAMES = {"read", "read_file", "readfile", "view_file", "open_file"}
_WRITE_NAMES = {"write", "write_file", "writefile", "create_file"}
_EDIT_NAMES = {"edit", "edit_file", "replace", "str_replace"}
# Shell tools we know by name, in order of preference when a client offers several.
_SHELL_NAMES = ("bash", "shell", "shell_command", "exec_command", "run_shell_command", "terminal")
_SHELL_NAME_HINT = re.compile(r"bash|shell|exec|command|terminal", re.I)
_SHELL_DESCRIPTION_HINT = re.compile(r"\b(bash|shell|exec)\b", re.I)


@dataclass(frozen=True)
class ToolSpec:
    """One function tool as the client declared it, whatever the wire format."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)

    @property
    def properties(self) -> Mapping[str, Any]:
        props = self.parameters.get("properties") if isinstance(self.parameters, Mapping) else None
        return props if isinstance(props, Mapping) else {}

    @property
    def required(self) -> set[str]:
        req = self.parameters.get("required") if isinstance(self.parameters, Mapping) else None
        return {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()


@dataclass(frozen=True)
class Environment:
    """What the request tells us about the client beyond its tools."""

    cwd: str | None = None
    submit_marker: bool = False
    fence: str = "bash"


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Action:
    """One model reply: what it says, and the tool it calls (``None``: a final text answer)."""

    text: str
    call: ToolCall | None = None


@dataclass(frozen=True)
class _Shell:
    spec: ToolSpec
    param: str
    array: bool


def _param(spec: ToolSpec, aliases: Sequence[str]) -> str | None:
    return next((name for name in aliases if name in spec.properties), None)


def _fillable(spec: ToolSpec, given: set[str]) -> bool:
    """We can call it only if every required parameter is one we provide."""
    return spec.required <= given | set(_NOTE_PARAMS)


def _dedicated(tools: Sequence[ToolSpec], names: set[str], *groups: Sequence[str]) -> tuple[ToolSpec, list[str]] | None:
    for spec in tools:
        if spec.name.lower() not in names:
            continue
        params = [_param(spec, group) for group in groups]
        if all(params) and _fillable(spec, set(params)):  # type: ignore[arg-type]
            return spec, params  # type: ignore[return-value]
    return None


def _is_array(schema: Any) -> bool:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


def _shell(tools: Sequence[ToolSpec]) -> _Shell | None:
    candidates = []
    for spec in tools:
        param = _param(spec, _COMMAND_PARAMS)
        schema = spec.properties.get(param) if param else None
        # An enum-valued ``command`` is an editor's sub-command (str_replace_editor), not a shell.
        if param is None or (isinstance(schema, Mapping) and "enum" in schema):
            continue
        if not _fillable(spec, {param, "workdir"}):
            continue
        if _SHELL_NAME_HINT.search(spec.name) or _SHELL_DESCRIPTION_HINT.search(spec.description or ""):
            candidates.append(_Shell(spec, param, _is_array(schema)))
    def rank(shell: _Shell) -> int:
        name = shell.spec.name.lower()
        return _SHELL_NAMES.index(name) if name in _SHELL_NAMES else len(_SHELL_NAMES)
    return min(candidates, key=rank) if candidates else None


def _abs(env: Environment, rel: str) -> str:
    return posixpath.join(env.cwd, rel) if env.cwd else rel


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def shell_read(path: str) -> str:
    return f"cat {shlex.quote(path)}"


def shell_write(path: str, content: str) -> str:
    """Base64 through ``printf``: survives any quote, backslash or trailing newline."""
    directory = posixpath.dirname(path)
    write = f"printf %s {_b64(content)} | base64 -d > {shlex.quote(path)}"
    return f"mkdir -p {shlex.quote(directory)} && {write}" if directory else write


def shell_edit(path: str, old: str, new: str) -> str:
    """Replace exactly one occurrence, failing loudly otherwise (like Claude Code's Edit)."""
    program = (
        "import base64,pathlib;d=lambda s:base64.b64decode(s).decode();"
        f"p=pathlib.Path(d('{_b64(path)}'));o=d('{_b64(old)}');n=d('{_b64(new)}');t=p.read_text();"
        "assert t.count(o)==1,'old text must occur exactly once';p.write_text(t.replace(o,n,1))"
    )
    return f"python3 -c {shlex.quote(program)}"


def _shell_command(step: Step, env: Environment) -> str:
    if isinstance(step, ReadFile):
        return shell_read(_abs(env, step.path))
    if isinstance(step, WriteFile):
        return shell_write(_abs(env, step.path), step.content)
    if isinstance(step, EditFile):
        return shell_edit(_abs(env, step.path), step.old, step.new)
    if isinstance(step, Run):
        return f"cd {shlex.quote(env.cwd)} && {step.command}" if env.cwd else step.command
    return f"echo {SUBMIT_MARKER}"


def note(step: Step) -> str:
    """The one line the model says alongside the call."""
    if isinstance(step, ReadFile):
        return f"Let me look at {step.path}."
    if isinstance(step, WriteFile):
        return f"Writing the fixed {step.path}."
    if isinstance(step, EditFile):
        return f"Editing {step.path}."
    if isinstance(step, Run):
        if step.expect_failure:
            return f"First, reproduce the problem: `{step.command}` should fail before the fix."
        return f"Running `{step.command}`."
    return step.text


def _shell_call(shell: _Shell, command: str, env: Environment, text: str) -> ToolCall:
    args: dict[str, Any] = {shell.param: ["bash", "-lc", command] if shell.array else command}
    if "workdir" in shell.spec.properties and env.cwd:
        args["workdir"] = env.cwd
    for name in _NOTE_PARAMS:
        if name in shell.spec.properties:
            args[name] = text[:200]
    return ToolCall(shell.spec.name, args)


def map_step(tools: Sequence[ToolSpec], step: Step, env: Environment) -> Action | None:
    """The reply that performs ``step`` with these tools; ``None`` if they cannot express it."""
    said = note(step)
    if not tools:
        # Text protocol: exactly one bash block per reply, the marker command ends the run.
        return Action(f"THOUGHT: {said}\n\n```{env.fence}\n{_shell_command(step, env)}\n```\n")
    shell = _shell(tools)
    if isinstance(step, Finish):
        if env.submit_marker and shell is not None:
            return Action(said, _shell_call(shell, _shell_command(step, env), env, said))
        return Action(said)
    if isinstance(step, ReadFile) and (found := _dedicated(tools, _READ_NAMES, _PATH_PARAMS)):
        spec, (path,) = found
        return Action(said, ToolCall(spec.name, {path: _abs(env, step.path)}))
    if isinstance(step, WriteFile) and (found := _dedicated(tools, _WRITE_NAMES, _PATH_PARAMS, _CONTENT_PARAMS)):
        spec, (path, content) = found
        return Action(said, ToolCall(spec.name, {path: _abs(env, step.path), content: step.content}))
    if isinstance(step, EditFile) and (found := _dedicated(tools, _EDIT_NAMES, _PATH_PARAMS, _OLD_PARAMS, _NEW_PARAMS)):
        spec, (path, old, new) = found
        return Action(said, ToolCall(spec.name, {path: _abs(env, step.path), old: step.old, new: step.new}))
    if shell is None:
        return None
    return Action(said, _shell_call(shell, _shell_command(step, env), env, said))


def plan(tools: Sequence[ToolSpec], steps: Sequence[Step], env: Environment) -> list[tuple[Action, Usage]]:
    """Every step these tools can express, in order, with its scripted usage.

    A step the catalog cannot express (a command with no shell tool) is left out
    rather than faked, so the plan only ever asks for what the client can do.
    """
    planned = []
    for step in steps:
        action = map_step(tools, step, env)
        if action is not None:
            planned.append((action, step.usage))
    return planned
