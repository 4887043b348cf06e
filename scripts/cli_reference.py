"""Write docs/cli.md, the command-line reference, from the click commands themselves.

Every command and group, its help (examples included), its arguments and every option
with its value, default and help, in the order `campaign --help` lists them. Run after
changing a command: python scripts/cli_reference.py (tests/test_cli_reference.py fails
while the checked-in reference and the commands disagree).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

OUT = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
HEAD = """# Command-line reference

Generated from the commands themselves by `python scripts/cli_reference.py`; do not
edit by hand (`tests/test_cli_reference.py` fails when it is out of date). Every
command also answers `--help`.
"""


def render(cli: click.Group) -> str:
    sections = [HEAD]
    for path, command in walk(cli, ["campaign"]):
        sections.append(section(path, command))
    return "\n".join(sections)


def walk(group: click.Group, path: list[str]) -> list[tuple[list[str], click.Command]]:
    # list_commands/get_command, not .commands: the group imports a command on first use.
    ctx = click.Context(group, info_name=path[-1])
    found: list[tuple[list[str], click.Command]] = [(path, group)]
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        if isinstance(command, click.Group):
            found += walk(command, path + [name])
        else:
            found.append((path + [name], command))
    return found


def section(path: list[str], command: click.Command) -> str:
    ctx = click.Context(command, info_name=" ".join(path))
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines = [f"## {' '.join(path)}", "", f"`{' '.join([*path, usage]).strip()}`", ""]
    lines += help_text(command.help or command.short_help or "")
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    options = [p for p in command.params if isinstance(p, click.Option) and not p.hidden]
    if arguments:
        lines += ["", "Arguments:", ""]
        lines += [f"- `{p.make_metavar(ctx)}`{'' if p.required else ' (optional)'}" for p in arguments]
    if options:
        lines += ["", "Options:", ""]
        lines += [option_line(ctx, p) for p in options]
    if isinstance(command, click.Group):
        subs = [name for name in command.list_commands(ctx) if not getattr(command.get_command(ctx, name), "hidden", False)]
        lines += ["", "Commands: " + ", ".join(f"`{' '.join(path)} {name}`" for name in subs)]
    return "\n".join(lines) + "\n"


def help_text(text: str) -> list[str]:
    """The docstring as Markdown: paragraphs as they are, a ``\\b`` block (click's
    unwrapped lines: usage examples) as a code block."""
    out: list[str] = []
    for paragraph in text.strip().split("\n\n"):
        rows = paragraph.split("\n")
        if rows[0].strip() == "\b":
            body = [r for r in rows[1:] if r.strip()]
            title = body[0].strip() if body and body[0].strip().endswith(":") else None
            code = body[1:] if title else body
            indent = min((len(r) - len(r.lstrip()) for r in code), default=0)
            out += ([title, ""] if title else []) + ["```sh", *(r[indent:] for r in code), "```", ""]
        else:
            out += [" ".join(r.strip() for r in rows), ""]
    return out[:-1] if out and out[-1] == "" else out


def option_line(ctx: click.Context, option: click.Option) -> str:
    names = ", ".join(f"`{n}`" for n in [*option.opts, *option.secondary_opts])
    value = "" if option.is_flag or option.count else f" `{option.make_metavar(ctx)}`"
    facts = []
    if option.required:
        facts.append("required")
    default = shown_default(option)
    if default is not None:
        facts.append(f"default: `{default}`")
    if option.multiple:
        facts.append("repeatable")
    tail = f" ({'; '.join(facts)})" if facts else ""
    return f"- {names}{value}{tail}: {(option.help or '').strip()}"


def shown_default(option: click.Option) -> str | None:
    value: Any = option.default
    # click 8.3+ marks "no default" with a sentinel of its own.
    unset = type(value).__name__ == "Sentinel"
    if unset or value is None or callable(value) or (option.is_flag and value is False) or value == ():
        return None
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from campaign.cli import cli

    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(render(cli))
    print(OUT)
