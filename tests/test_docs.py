"""The README and the manual in docs/: nothing of the old README lost, every command shown
parses against the real CLI, every link leads somewhere, the README stays short, and the
store page's schema is the one a freshly migrated store has."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import click
import pytest

from campaign.cli import cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
# docs/cli.md is generated from the commands (tests/test_cli_reference.py checks it).
PAGES = [README, *sorted(p for p in DOCS.glob("*.md") if p.name != "cli.md")]

# Every `## ` and `### ` heading of the README before the manual (commit 213d173), and the
# page of docs/ that holds its text now; then the bold leads that open its long sections.
OLD_HEADINGS = {
    "Set-up: two commands": "setup.md",
    "Commands": "commands.md",
    "A paired experiment, step by step": "paired-plans.md",
    "Resumable multi-provider campaigns": "campaigns.md",
    "How sure is the report": "reports.md",
    "Plan the size before paying": "reports.md",
    "Your own tasks": "tasks.md",
    "What a misbehaving agent cannot do": "security.md",
    "The wire: recording proxy and replay provider": "wire.md",
    "Real clients: Claude Code, Codex CLI, mini-swe-agent, opencode, Gemini CLI": "real-clients.md",
    "Experiments of your own: variants as data": "experiments.md",
    "Layout": "layout.md",
    "The store": "store.md",
}
OLD_LEADS = {
    "**Stopping a run.**": "campaigns.md",
    "**A killed runner (SIGKILL, a crash, a power cut)**": "reliability.md",
    "**A provider's bad day.**": "reliability.md",
    "**A local spend cap.**": "providers.md",
    "**Providers in parallel.**": "scale-out.md",
    "**What is resampled.**": "reports.md",
    "**What is assumed.**": "reports.md",
    "**What a pilot too small gives: a refusal with the reason, never a made-up\nnumber.**": "reports.md",
    "**Spend and wall time.**": "reports.md",
    "**Before a paid run.**": "reports.md",
    "**What every report says.**": "reports.md",
    "**When the tasks all differ alike.**": "reports.md",
    "**The engine's format**": "tasks.md",
    "**Identity.**": "tasks.md",
    "**The check.**": "tasks.md",
    "**Tasks that ship an image.**": "tasks.md",
    "**Harbor task folders**": "tasks.md",
    "**Live paid runs need a client that talks through the recording proxy.**": "wire.md",
    "**Reasoning is read from the wire, not assumed.**": "wire.md",
    "**replay provider**": "wire.md",
    "**Spend for a client that reports no cost**": "real-clients.md",
    "**Rehearse before spending money.**": "real-clients.md",
    "**Every variant must be seen to differ on the wire.**": "experiments.md",
    "**Reading an N-variant report.**": "experiments.md",
    "**Never upload or commit them.**": "security.md",
    "| `130` | interrupted after persisting what was observed |": "reliability.md",  # "Exit codes:"
    "Bad input includes every file or directory": "reliability.md",
    "Every command that touches the store takes `--db URL|PATH`": "store.md",
    "The main job is a paired campaign over the offline provider": "campaigns.md",
    "The suite runs on one pytest-xdist worker per core": "setup.md",
    "A catalog is a set of tools": "real-clients.md",
    "A custom provider (`--providers-catalog`": "providers.md",
}


def without_code(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def headings(text: str) -> list[str]:
    return [line.lstrip("#").strip() for line in without_code(text).splitlines() if line.startswith("#")]


# --- (a) every section of the old README is findable ----------------------------------


@pytest.mark.parametrize("heading", list(OLD_HEADINGS))
def test_every_old_readme_heading_heads_a_section_of_its_page(heading):
    page = DOCS / OLD_HEADINGS[heading]
    assert any(heading in h for h in headings(page.read_text())), f"{heading!r} is not a heading of {page.name}"


@pytest.mark.parametrize("lead", list(OLD_LEADS))
def test_every_old_readme_lead_is_on_its_page(lead):
    page = DOCS / OLD_LEADS[lead]
    assert lead in page.read_text(), f"{lead!r} is not in {page.name}"


def test_the_readme_keeps_its_set_up_and_links_every_page_of_the_manual():
    text = README.read_text()
    assert "## Set-up: two commands" in text
    linked = set(re.findall(r"\]\(docs/([^)#]+)", text))
    assert "index.md" in linked and "cli.md" in linked
    index = (DOCS / "index.md").read_text()
    pages = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    assert pages <= set(re.findall(r"\]\(([^)#/]+\.md)", index)), "docs/index.md lists every page"


@pytest.mark.parametrize("page", [p for p in PAGES if p.parent == DOCS], ids=lambda p: p.name)
def test_every_page_opens_with_its_title_and_what_it_is_for(page):
    title, blank, first, *_ = page.read_text().splitlines()
    assert title.startswith("# ") and blank == "" and first and not first.startswith(("#", "`", "|", "-"))


# --- (b) every command shown parses against the real CLI ------------------------------

SUBSTITUTION = re.compile(r"\$\(([^()]*)\)")
SEPARATORS = {"&&", "||", ";", "|", "&"}
REDIRECTS = {">", ">>", "<"}
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def sh_blocks(text: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)


def logical_lines(block: str) -> list[str]:
    """Lines joined across `\\` continuations and across a quoted string left open."""
    lines: list[str] = []
    current: str | None = None
    for line in block.splitlines():
        current = line if current is None else current + line
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        try:
            shlex.split(current, comments=True)
        except ValueError:  # a quotation still open: the next line continues it
            current += "\n"
            continue
        lines.append(current)
        current = None
    assert current is None, f"unfinished command: {current!r}"
    return lines


def words(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def campaign_commands(block: str) -> list[list[str]]:
    """The argument lists of every `campaign` (or `.venv/bin/campaign`) command in a block:
    in pipelines and `&&` chains, in `$(...)`, after `VAR=value` prefixes, without their
    `> FILE` redirections, with `$VAR` set earlier in the block expanded. A synopsis's optional parts (`[--json]`) count as given."""
    variables: dict[str, str] = {}
    found = []
    for line in logical_lines(block):
        line = re.sub(r"\[(--[^\[\]]*)\]", r"\1", line)
        for text in [SUBSTITUTION.sub("SUBSTITUTED", line), *SUBSTITUTION.findall(line)]:
            command: list[str] = []
            redirected = False
            for word in [*words(text), ";"]:
                if redirected or word in REDIRECTS:  # `> FILE`: the shell's, not an argument
                    redirected = not redirected
                    continue
                if word not in SEPARATORS:
                    command.append(word)
                    continue
                while command and ASSIGNMENT.match(command[0]):
                    name, _, value = command.pop(0).partition("=")
                    if not command:
                        variables[name] = value
                if command and (command[0] == "campaign" or command[0].endswith("/campaign")):
                    expanded = []
                    for arg in command[1:]:
                        expanded += shlex.split(variables[arg[1:]]) if arg[1:] in variables and arg.startswith("$") else [arg]
                    found.append(expanded)
                command = []
    return found


SHOWN = [
    (page, args)
    for page in PAGES
    for block in sh_blocks(page.read_text())
    for args in campaign_commands(block)
]
SIMPLE_TYPES = (click.types.IntParamType, click.types.FloatParamType, click.types.BoolParamType, click.Choice)


def parse(args: list[str]) -> None:
    """Resolve the subcommand through the groups, then parse the rest with the command's own
    parser: an unknown option, an option without its value, a missing or extra argument, or
    a value a number or choice option cannot take raises a UsageError. Nothing runs; paths
    named are not opened (the commands check those when they run)."""
    command: click.Command = cli
    ctx = click.Context(cli, info_name="campaign")
    path = ["campaign"]
    while isinstance(command, click.Group):
        if not args:
            raise click.UsageError(f"{' '.join(path)} needs a subcommand")
        name, args = args[0], args[1:]
        sub = command.get_command(ctx, name)
        if sub is None:
            raise click.UsageError(f"{' '.join(path)} has no command {name!r}")
        command, path = sub, [*path, name]
        ctx = click.Context(command, info_name=name, parent=ctx)
    opts, rest, _ = command.make_parser(ctx).parse_args(list(args))
    if rest:
        raise click.UsageError(f"{' '.join(path)}: unexpected arguments {rest}")
    for param in command.params:
        value = opts.get(param.name)
        if not isinstance(value, (str, list, tuple, bool, int, float)):  # absent: None, or click's UNSET
            if param.required:
                raise click.UsageError(f"{' '.join(path)}: {param.name} is required")
            continue
        if isinstance(param.type, SIMPLE_TYPES):
            for one in value if isinstance(value, (list, tuple)) else [value]:
                param.type.convert(one, param, ctx)


def test_the_pages_show_commands():
    shown_on = {page.name for page, _ in SHOWN}
    assert {"README.md", "paired-plans.md", "reports.md", "real-clients.md", "wire.md"} <= shown_on, shown_on


@pytest.mark.parametrize(("page", "args"), SHOWN, ids=[f"{p.name}: {' '.join(a)[:60]}" for p, a in SHOWN])
def test_every_command_shown_parses_against_the_real_cli(page, args):
    try:
        parse(args)
    except click.UsageError as problem:
        pytest.fail(f"{page.name}: campaign {shlex.join(args)}: {problem.format_message()}")


@pytest.mark.parametrize(
    "args",
    [["coding", "--no-such-option"], ["coding", "--campaign", "--repetitions"], ["sql"], ["sql", "SELECT 1", "extra"],
     ["db", "nothing"], ["db"], ["power", "--campaign", "one"]],
    ids=" ".join,
)  # fmt: skip
def test_the_parse_refuses_what_the_cli_refuses(args):
    with pytest.raises(click.UsageError):
        parse(args)


INLINE = [
    (page, " ".join(span.split()))
    for page in PAGES
    for span in re.findall(r"`([^`]+)`", without_code(page.read_text()))
    if re.match(r"(\.venv/bin/)?campaign [a-z]", " ".join(span.split()))
]


def test_the_prose_names_commands():
    assert len(INLINE) > 40


@pytest.mark.parametrize(("page", "span"), INLINE, ids=[f"{p.name}: {s[:60]}" for p, s in INLINE])
def test_every_command_named_in_the_prose_exists_with_the_options_it_names(page, span):
    """A `campaign ...` in running text is often a synopsis (`ID`, `[--json]`, `A | B`), so
    only its command and the options it names are checked, not their values."""
    words = span.split()[1:]
    command: click.Command = cli
    ctx = click.Context(cli, info_name="campaign")
    path = ["campaign"]
    while isinstance(command, click.Group) and words:
        sub = command.get_command(ctx, words[0])
        if sub is None:
            break
        command, path, words = sub, [*path, words[0]], words[1:]
        ctx = click.Context(command, info_name=path[-1], parent=ctx)
    assert path != ["campaign"], f"{page.name}: `{span}` names no command"
    names = {name for param in command.params for name in (*param.opts, *param.secondary_opts)} | {"--help"}
    named = [m.group(0) for word in words if (m := re.match(r"--[a-z0-9][a-z0-9-]*", word.lstrip("[(")))]
    unknown = [name for name in named if name not in names and not isinstance(command, click.Group)]
    assert not unknown, f"{page.name}: `{span}`: {' '.join(path)} has no option {', '.join(unknown)}"


def test_the_block_reader_finds_chained_substituted_and_continued_commands():
    block = (
        'OPTS="--paired --tasks a,b"\n'
        "python3 -m venv .venv && .venv/bin/campaign profiler prepare-cache\n"
        "DIGEST=$(campaign plan digest plan.json)\n"
        "# campaign not-a-command\n"
        "KEY=unused campaign coding $OPTS --plan plan.json \\\n"
        "  --approve-plan-digest $DIGEST\n"
        'campaign sql "SELECT 1\n'
        '              FROM t" --db x [--json]\n'
        "campaign db tables --db x > tables.txt | sort\n"
    )
    assert campaign_commands(block) == [
        ["profiler", "prepare-cache"],
        ["plan", "digest", "plan.json"],
        ["coding", "--paired", "--tasks", "a,b", "--plan", "plan.json", "--approve-plan-digest", "SUBSTITUTED"],
        ["sql", "SELECT 1\n              FROM t", "--db", "x", "--json"],
        ["db", "tables", "--db", "x"],
    ]


# --- (c) the README stays short --------------------------------------------------------


def test_the_readme_is_under_10_kb():
    assert README.stat().st_size < 10_000, README.stat().st_size


# --- (d) every relative link leads to a file (and a heading there) --------------------


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


LINKS = [
    (page, target)
    for page in [README, *sorted(DOCS.glob("*.md"))]
    for target in re.findall(r"\]\(([^)\s]+)\)", without_code(page.read_text()))
    if not re.match(r"[a-z][a-z0-9+.-]*:", target)
]


def test_the_pages_link_to_each_other():
    assert len(LINKS) > 50


@pytest.mark.parametrize(("page", "target"), LINKS, ids=[f"{p.name} -> {t}" for p, t in LINKS])
def test_every_relative_link_points_to_an_existing_file(page, target):
    file, _, anchor = target.partition("#")
    where = (page.parent / file).resolve() if file else page
    assert where.is_file(), f"{page.name}: {target} leads nowhere"
    if anchor and where.suffix == ".md":
        assert anchor in {slug(h) for h in headings(where.read_text())}, f"{page.name}: no heading #{anchor} in {where.name}"


# --- the store page's schema -----------------------------------------------------------


def test_the_store_pages_schema_block_matches_a_freshly_migrated_store():
    spec = importlib.util.spec_from_file_location("readme_schema", ROOT / "scripts" / "readme_schema.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (DOCS / "store.md").read_text()
    assert module.PAGE == DOCS / "store.md"
    assert module.render(page) == page, "docs/store.md's schema is stale: run python scripts/readme_schema.py"
