"""The offline agent: a real, separate, free stand-in for an LLM coding agent.

Run as ``python -m campaign.agents.offline --task NAME [options]`` with the
task's working copy as cwd, exactly like any other agent. It

1. reads the prompt file and the variant's config TOML (``--config`` or
   ``$CAMPAIGN_AGENT_CONFIG``; none means the defaults: disclosure ``legacy``),
   and from it ``[runtime.tools.disclosure].profile``;
2. draws success with a probability that depends on that profile (defaults
   0.70 legacy, 0.78 coding), seeded from (seed, task, profile, trial id), so the
   same trial always ends the same way;
3. for a task that requires a failed tool call, first really runs a command
   that fails, and reports it as a tool error;
4. on success applies the task's reference solution to the cwd (a task of
   ``--task-suite DIR`` when given, else a built-in one); on failure leaves the
   fixture broken;
5. prints the generic JSON Lines format (``GENERIC_FORMAT.md``): disclosure
   telemetry (``diagnostic_events_version`` 1), then a result with synthetic
   token counters and cost derived from the seed, marked ``"synthetic": true``.

With ``--base-url URL`` (the recording proxy's ``{proxy_url}``) every planned
turn is also a real Anthropic Messages request to ``URL/v1/messages``, carrying
the profile's synthetic tool catalog (coding discloses fewer tools than legacy),
streamed on even turns; the usage the server answers with (the replay
provider's scripted figures) replaces the drawn counters, and the response ids
become the usage identities. The outcome is still drawn from the seed.

Misbehaviour for tests, by ``--mode`` (repeatable) or ``$CAMPAIGN_OFFLINE_MODE``
(comma-separated): ``hang``, ``crash``, ``overspend=X``, ``background-child``,
``no-usage``, ``ignore-term``, ``wrong-profile``, ``shuffled-tools`` (wire mode: the
catalog's tools in an order drawn from the trial id, as a client that registers its
tools in a varying order sends them). The engine's environment
allowlist drops ``$CAMPAIGN_*`` variables, so engine tests pass ``--mode`` (and
``--success-*``) by appending them to the offline profile's client argv.

Exit status: 0 when the run completed (solved or not), 2 for bad input (an
unknown task, an unreadable config, an unsupported disclosure profile).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from campaign.errors import CampaignError
from campaign.vocabulary import GENERIC_USAGE_KEYS

DEFAULT_SUCCESS = {"legacy": 0.70, "coding": 0.78}
DEFAULT_PROFILE = "legacy"  # the runtime default when the config has no disclosure table
CONFIG_ENV = "CAMPAIGN_AGENT_CONFIG"
MODE_ENV = "CAMPAIGN_OFFLINE_MODE"
MODES = frozenset({"hang", "crash", "overspend", "background-child", "no-usage", "ignore-term", "wrong-profile", "shuffled-tools"})

# Synthetic catalog sizes per profile: coding discloses a smaller schema up front.
_CATALOG = {"legacy": {"disclosed_tokens": 9120, "disclosed_count": 37, "hidden_count": 0},
            "coding": {"disclosed_tokens": 2010, "disclosed_count": 6, "hidden_count": 31}}
# Synthetic list prices, USD per million tokens: uncached, cache read, cache write, output.
_PRICES = (2.5, 0.25, 3.125, 10.0)


class BadInput(Exception):
    """The agent cannot run as asked (exit 2)."""


@dataclass(frozen=True)
class Options:
    task: str
    prompt_file: Path | None
    config: Path | None
    model: str
    seed: int
    trial_id: str
    success: Mapping[str, float]
    modes: frozenset[str]
    overspend_usd: float | None
    base_url: str | None = None
    task_suite: Path | None = None
    # Wire mode: each request asks for extended thinking with this budget (Anthropic's
    # ``thinking``), as a client configured for reasoning does.
    thinking_budget: int | None = None
    system_prompt: str | None = None


@dataclass(frozen=True)
class Plan:
    """Everything the run will do and report, drawn from the seed before any I/O."""

    solved: bool
    turns: tuple[dict[str, Any], ...]
    tool_statuses: tuple[str, ...]
    events: tuple[dict[str, Any], ...]
    session_id: str


# --- pure parts -------------------------------------------------------------------


def parse_args(argv: Sequence[str], environ: Mapping[str, str]) -> Options:
    parser = argparse.ArgumentParser(prog="python -m campaign.agents.offline", allow_abbrev=False)
    parser.add_argument("--task", required=True)
    parser.add_argument("--task-suite", type=Path, help="the suite directory the task is in (default: the built-in tasks)")
    parser.add_argument("--prompt-file", type=Path)
    parser.add_argument("--config", type=Path, help=f"variant config TOML (default: ${CONFIG_ENV})")
    parser.add_argument("--model", default="offline:synthetic")
    parser.add_argument("--seed", type=int, default=environ.get("CAMPAIGN_OFFLINE_SEED", "0"))
    parser.add_argument("--trial-id", default=environ.get("CAMPAIGN_OFFLINE_TRIAL_ID", "0"),
                        help="stable trial id or repetition number; part of the seed")
    parser.add_argument("--success-legacy", type=_probability,
                        default=environ.get("CAMPAIGN_OFFLINE_SUCCESS_LEGACY", DEFAULT_SUCCESS["legacy"]))
    parser.add_argument("--success-coding", type=_probability,
                        default=environ.get("CAMPAIGN_OFFLINE_SUCCESS_CODING", DEFAULT_SUCCESS["coding"]))
    parser.add_argument("--mode", action="append", default=[], help="misbehaviour switch (repeatable)")
    parser.add_argument("--base-url", help="send each turn as an Anthropic Messages request here")
    parser.add_argument("--thinking-budget", type=int, help="with --base-url: each request asks for extended thinking with this budget")
    parser.add_argument("--system-prompt", help="with --base-url: each request carries this system prompt")
    args = parser.parse_args(list(argv))
    modes, overspend = _modes([*filter(None, environ.get(MODE_ENV, "").split(",")), *args.mode], parser)
    config = args.config or (Path(environ[CONFIG_ENV]) if environ.get(CONFIG_ENV) else None)
    return Options(
        task=args.task,
        task_suite=args.task_suite,
        prompt_file=args.prompt_file,
        config=config,
        model=args.model,
        seed=args.seed,
        trial_id=args.trial_id,
        success={"legacy": _probability(args.success_legacy), "coding": _probability(args.success_coding)},
        modes=modes,
        overspend_usd=overspend,
        base_url=args.base_url or None,
        thinking_budget=args.thinking_budget,
        system_prompt=args.system_prompt,
    )


def _probability(value: Any) -> float:
    p = float(value)
    if not 0.0 <= p <= 1.0:
        raise argparse.ArgumentTypeError(f"a success probability must be within [0, 1], got {value}")
    return p


def _modes(raw: list[str], parser: argparse.ArgumentParser) -> tuple[frozenset[str], float | None]:
    modes, overspend = set(), None
    for item in (m.strip() for m in raw):
        name, _, arg = item.partition("=")
        if name not in MODES:
            parser.error(f"unknown mode {item!r}; known: {', '.join(sorted(MODES))}")
        if name == "overspend":
            try:
                overspend = float(arg)
            except ValueError:
                parser.error("overspend needs a cost in USD, e.g. overspend=5.0")
            if not overspend >= 0:
                parser.error("overspend needs a non-negative cost")
        modes.add(name)
    return frozenset(modes), overspend


def disclosure_profile(config: Mapping[str, Any]) -> str | None:
    """The profile the config asks for; None when disclosure is disabled.

    BadInput when the config names a profile this agent does not support, so a
    coding label can never silently run the legacy catalog.
    """
    table: Any = config
    for key in ("runtime", "tools", "disclosure"):
        if not isinstance(table, dict):
            raise BadInput("[runtime.tools.disclosure] must be a table")
        table = table.get(key)
        if table is None:
            return DEFAULT_PROFILE
    if not isinstance(table, dict):
        raise BadInput("[runtime.tools.disclosure] must be a table")
    if table.get("enabled", True) is False:
        return None
    profile = table.get("profile", DEFAULT_PROFILE)
    if not (isinstance(profile, str) and profile in DEFAULT_SUCCESS):
        raise BadInput("unsupported disclosure profile")
    return profile


def rng_for(seed: int, task: str, profile: str | None, trial_id: str) -> random.Random:
    material = json.dumps([seed, task, profile, trial_id]).encode()
    return random.Random(int.from_bytes(hashlib.sha256(material).digest()[:8], "big"))


def plan_attempt(options: Options, profile: str | None, needs_failed_call: bool) -> Plan:
    """Draw the outcome, turns, tools and telemetry. Draw order is fixed: it is the seed's meaning."""
    rng = rng_for(options.seed, options.task, profile, options.trial_id)
    solved = rng.random() < options.success[profile or DEFAULT_PROFILE]
    n_turns = 3 + rng.randrange(5) + (1 if needs_failed_call else 0)
    catalog = _CATALOG[profile or "legacy"]["disclosed_tokens"]
    turns = []
    for i in range(1, n_turns + 1):
        turns.append({
            "request_id": f"offline-req-{i}",
            "usage_id": f"offline-use-{i}",
            "usage": {
                "input_tokens": 500 + rng.randrange(400),
                "cached_input_tokens": 0 if i == 1 else catalog + 700 * (i - 1),
                "cache_write_tokens": catalog if i == 1 else 300 + rng.randrange(200),
                "output_tokens": 80 + rng.randrange(300),
            },
        })
    statuses = ["error"] if needs_failed_call else []
    statuses += ["ok"] * (n_turns - 1 - len(statuses))
    return Plan(
        solved=solved,
        turns=tuple(turns),
        tool_statuses=tuple(statuses),
        events=tuple(_telemetry(rng, profile)),
        session_id="offline-" + hashlib.sha256(repr(rng.random()).encode()).hexdigest()[:16],
    )


def _telemetry(rng: random.Random, profile: str | None) -> list[dict[str, Any]]:
    if profile is None:
        return []  # disclosure disabled: nothing is applied, so nothing is reported
    events: list[dict[str, Any]] = [{
        "event": "disclosure.applied",
        "profile": profile,
        "diagnostic_events_version": 1,
        "active": True,
        "full_catalog_digest": hashlib.sha256(b"offline-catalog-v1").hexdigest(),
        "estimated_tokens": _CATALOG["legacy"]["disclosed_tokens"],
        **_CATALOG[profile],
    }]
    for _ in range(rng.randrange(4)):
        matched = rng.choice([0, 1, 2, 3])
        events.append({"event": "disclosure.search", "status": "ok", "matched_count": matched})
        if matched:
            tool = hashlib.sha256(f"offline-tool-{rng.randrange(6)}".encode()).hexdigest()
            events.append({"event": "disclosure.invoke", "tool_sha256": tool, "status": "ok"})
    if rng.random() < 0.15:
        events.append({"event": "disclosure.invoke_rejected", "reason": "unknown_tool"})
    return events


def synthetic_cost(turns: Sequence[dict[str, Any]]) -> float:
    usd = sum(t["usage"][k] * price / 1e6 for t in turns for k, price in zip(GENERIC_USAGE_KEYS, _PRICES))
    return round(usd, 6)


def result_object(options: Options, plan: Plan, profile: str | None, tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
    applied = [] if profile is None else [_other(profile) if "wrong-profile" in options.modes else profile]
    result: dict[str, Any] = {
        "type": "result",
        "format_version": 1,
        "session_id": plan.session_id,
        "model": options.model,
        "error": None,
        "num_turns": len(plan.turns),
        "tools": list(tools),
        "applied_profiles": applied,
        "nested_sessions_observed": False,
        "synthetic": True,
    }
    if "no-usage" not in options.modes:
        result["turns"] = list(plan.turns)
        result["cost_usd"] = options.overspend_usd if "overspend" in options.modes else synthetic_cost(plan.turns)
    return result


def telemetry_lines(options: Options, plan: Plan) -> list[dict[str, Any]]:
    if "wrong-profile" not in options.modes:
        return list(plan.events)
    return [{**e, "profile": _other(e["profile"])} if "profile" in e else e for e in plan.events]


def _other(profile: str) -> str:
    return "coding" if profile == "legacy" else "legacy"


# --- effects ----------------------------------------------------------------------


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _fail(message: str) -> int:
    _emit({"type": "result", "format_version": 1, "error": {"class": "agent_error"}, "synthetic": True})
    print(f"offline agent: {message}", file=sys.stderr)
    return 2


def _read_config(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(f"cannot read config: {exc.__class__.__name__}") from exc


def _failing_tool_call() -> dict[str, Any]:
    """Really run a command that fails (reading a file that is not there), as an agent might."""
    probe = "import pathlib; pathlib.Path('NOTES_FROM_PREVIOUS_ATTEMPT.md').read_text()"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=False)
    if done.returncode == 0:  # the file exists after all: the call did not fail, so say so
        return {"name": "shell", "status": "ok", "exit_code": 0}
    return {"name": "shell", "status": "error", "exit_code": done.returncode}


def _background_child() -> None:
    """Double-fork ``sleep 300`` into its own session, the way a careless daemon escapes."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        os.setsid()
        grandchild = os.fork()
        if grandchild == 0:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            try:
                os.execvp("sleep", ["sleep", "300"])
            finally:
                os._exit(127)  # never fall back into the agent's own code in a forked copy
        os.write(write_end, str(grandchild).encode())
        os._exit(0)
    os.close(write_end)
    grandchild_pid = os.read(read_end, 32).decode()
    os.close(read_end)
    os.waitpid(pid, 0)
    print(f"offline agent: background child pid {grandchild_pid}", file=sys.stderr, flush=True)


def _hang() -> None:
    # The "hang" misbehaviour itself: an agent that never returns until the deadline kills it.
    while True:
        time.sleep(3600)


def run(options: Options) -> int:
    from campaign.benchmark import apply_solution, suite_of  # the benchmark is only needed at run time

    try:
        task = suite_of(options.task_suite).get(options.task, option="--task")
        if options.prompt_file is not None:
            options.prompt_file.read_text(encoding="utf-8")  # an agent must be able to read its prompt
        profile = disclosure_profile(_read_config(options.config))
    except (BadInput, CampaignError, OSError, ValueError) as exc:
        return _fail(str(exc) if isinstance(exc, (BadInput, CampaignError)) else exc.__class__.__name__)
    plan = plan_attempt(options, profile, task.requires_failed_tool_call)
    lines = telemetry_lines(options, plan)
    if "ignore-term" in options.modes:
        # Before the first line, so whoever sees that line knows TERM is already ignored.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for event in lines[:1]:
        _emit(event)
    if "hang" in options.modes or "ignore-term" in options.modes:
        _hang()
    tools = [_failing_tool_call()] if task.requires_failed_tool_call else []
    tools += [{"name": "edit", "status": s} for s in plan.tool_statuses[len(tools):]]
    if "crash" in options.modes:
        # Die mid-write: a result line cut short, then a non-zero exit without cleanup.
        sys.stdout.write(json.dumps(result_object(options, plan, profile, tools))[:40])
        sys.stdout.flush()
        os._exit(3)
    if options.base_url is not None:
        from campaign.agents import offline_wire

        try:
            shuffle = options.trial_id if "shuffled-tools" in options.modes else None
            plan = replace(plan, turns=offline_wire.send_turns(options.base_url, options.model, profile, plan.turns, shuffle=shuffle, thinking_budget=options.thinking_budget, system=options.system_prompt))
        except offline_wire.WireFailed as exc:
            return _fail(f"model request failed: {exc}")
    if plan.solved:
        apply_solution(task, Path.cwd())
    if "background-child" in options.modes:
        _background_child()
    for event in lines[1:]:
        _emit(event)
    _emit(result_object(options, plan, profile, tools))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(parse_args(sys.argv[1:] if argv is None else argv, os.environ))


if __name__ == "__main__":
    sys.exit(main())
