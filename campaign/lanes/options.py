"""The parsed `campaign coding` options and the checks every lane runs first.

Options hold what the operator typed: ``None`` means "not given", which is how a
paired-only option given without ``--paired`` is told apart from its default.
Every check raises UsageProblem naming the option, before any file, store row or
process exists.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

from campaign import benchmark
from campaign.agents.profile_model import AgentProfile
from campaign.benchmark import checks
from campaign.credential_shapes import credential_shaped
from campaign.digests import MIN_PROFILE_PYTHON, NotAPython, PythonInfo, git_toplevel, probe_python
from campaign.errors import UsageProblem
from campaign.store.limits import SpendLimits, amount_problem
from campaign.supervise import confine

DEFAULT_MODEL = "openai-codex:gpt-6.1-sol"
DEFAULT_AGENT = "offline"
DEFAULT_REPETITIONS = 4
DEFAULT_SEED = 107
DEFAULT_TIMEOUT = 660
DEFAULT_RUN_TIMEOUT = 7200
MAX_REPETITIONS = 1000
# A deadline past a year is a typo, not a plan (and past the clock's arithmetic).
MAX_DEADLINE_S = 366 * 24 * 3600
# More local workers than that is a typo too; past one per provider they only wait.
MAX_PARALLEL_PROVIDERS = 64

# Options that only mean something with --paired, in the spec's order (option -> field).
# --live and --no-live are one field; live=None means neither was given.
PAIRED_ONLY = (
    ("--config", "config"),
    ("--repetitions", "repetitions"),
    ("--seed", "seed"),
    ("--run-timeout", "run_timeout"),
    ("--profile-python", "profile_python"),
    ("--live", "live"),
    ("--plan", "plan"),
    ("--approve-plan-digest", "approve_plan_digest"),
    # Also a campaign option (checked there before this table): a custom provider route.
    ("--providers-catalog", "providers_catalog"),
)

SCHEMA_BUDGETS_REFUSAL = (
    "--schema-budgets is not supported, with or without --paired or --live: the coding disclosure profile "
    "ignores budget_tokens, so budget variants would be identical treatments under different labels and "
    "configuration digests, and could not measure a threshold effect (this is not a negative result). "
    "Only baseline versus coding is supported."
)

_USD = re.compile(r"[0-9]+(?:\.[0-9]+)?", re.ASCII)
_MODEL = re.compile(r"^(?P<provider>[a-z0-9][a-z0-9._-]{0,63}):(?P<model>[^\s:][^\s]{0,199})$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

T = TypeVar("T")


@dataclass(frozen=True)
class CodingOptions:
    paired: bool = False
    launcher: Path | None = None
    source: Path | None = None
    agent: str | None = None
    model: str | None = None
    tasks: str | None = None
    repetitions: int | None = None
    seed: int | None = None
    config: Path | None = None
    timeout: int | None = None
    run_timeout: int | None = None
    profile_python: Path | None = None
    output: Path | None = None
    plan: Path | None = None
    approve_plan_digest: str | None = None
    live: bool | None = None  # None: neither --live nor --no-live
    failure_dir: Path | None = None
    schema_budgets: tuple[str, ...] = ()  # every --schema-budgets given, with any value
    campaign: bool = False
    providers: str | None = None
    variants: str | None = None
    control_plane_port: int | None = None
    output_dir: Path | None = None
    resume: bool = False
    providers_catalog: Path | None = None
    continue_blocked: bool = False
    max_spend_usd: str | None = None
    max_total_spend_usd: str | None = None
    attempt_ceiling_usd: str | None = None
    parallel_providers: int | None = None
    rehearse: bool = False
    # The runtime for tasks that ship an image (campaign.containers: podman, else docker).
    container_runtime: str | None = None
    # Forecast from a pilot before paying (campaign.lanes.preflight): plan-only paired, or --campaign.
    pilot: int | None = None
    pilot_db: str | None = None
    target_effect: float | None = None
    # A directory of task folders instead of the built-in tasks (every lane).
    task_suite: Path | None = None


@dataclass(frozen=True)
class ModelRoute:
    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


def or_default(value: T | None, default: T) -> T:
    return default if value is None else value


# --- mode rules (checked before anything else) ------------------------------


def reject_unsupported(opts: CodingOptions) -> None:
    if opts.schema_budgets:
        raise UsageProblem(SCHEMA_BUDGETS_REFUSAL, option="--schema-budgets")


def paired_only_given(opts: CodingOptions) -> list[str]:
    names = []
    for name, field in PAIRED_ONLY:
        value = getattr(opts, field)
        if value is not None:
            names.append("--no-live" if value is False else name)
    return names


def reject_paired_only(opts: CodingOptions) -> None:
    """Paired-only options without --paired are refused, never ignored.

    Ignoring them would let an operator who meant a bounded paired run fall
    through to the nonpaired lane, which makes live calls without the plan gate.
    """
    if opts.paired:
        return
    names = paired_only_given(opts)
    if names:
        listed = ", ".join(names)
        raise UsageProblem(
            f"{listed} only apply with --paired; without it they would be ignored and the nonpaired lane would run instead",
            option=names[0],
        )


# The campaign mode's own options, refused elsewhere (option -> field).
CAMPAIGN_ONLY = (
    ("--providers", "providers"),
    ("--control-plane-port", "control_plane_port"),
    ("--output-dir", "output_dir"),
    ("--resume", "resume"),
    ("--continue-blocked", "continue_blocked"),
    ("--max-spend-usd", "max_spend_usd"),
    ("--max-total-spend-usd", "max_total_spend_usd"),
    ("--attempt-ceiling-usd", "attempt_ceiling_usd"),
    ("--parallel-providers", "parallel_providers"),
    ("--rehearse", "rehearse"),
)
# Options the campaign mode replaces (--live replaces the plan gate; the store and
# reports live in --output-dir; each provider brings its own model).
NOT_IN_CAMPAIGN = (
    ("--plan", "plan"),
    ("--approve-plan-digest", "approve_plan_digest"),
    ("--profile-python", "profile_python"),
    ("--run-timeout", "run_timeout"),
    ("--output", "output"),
)


def _given(opts: CodingOptions, table: tuple[tuple[str, str], ...]) -> list[str]:
    return [name for name, field in table if getattr(opts, field) not in (None, False)]


def check_campaign_mode(opts: CodingOptions) -> SpendLimits | None:
    """--campaign and its own options: never combined with --paired, never given without it.
    Returns the campaign's spend limits, parsed here once (None: no cap asked for)."""
    if opts.campaign and opts.paired:
        raise UsageProblem("--campaign and --paired cannot be combined; choose one lane", option="--campaign")
    if not opts.campaign:
        names = _given(opts, CAMPAIGN_ONLY)
        if names:
            raise UsageProblem(f"{', '.join(names)} only apply with --campaign", option=names[0])
        if opts.variants is not None and not opts.paired:
            raise UsageProblem("--variants picks the variants a paired comparison runs: it applies with --paired or --campaign, never to the nonpaired lane", option="--variants")
        return None
    names = _given(opts, NOT_IN_CAMPAIGN)
    if names:
        raise UsageProblem(
            f"{', '.join(names)} do not apply with --campaign: it replaces the plan gate with an explicit --live "
            "and writes to --output-dir",
            option=names[0],
        )
    if opts.output_dir is None:
        raise UsageProblem("--campaign needs --output-dir DIR (the store and the reports live there)", option="--output-dir")
    if opts.control_plane_port is not None and not 1 <= opts.control_plane_port <= 65535:
        raise UsageProblem(f"must be a port in 1..65535, got {opts.control_plane_port}", option="--control-plane-port")
    if opts.continue_blocked and not opts.resume:
        raise UsageProblem("--continue-blocked continues a blocked campaign, so it needs --resume too", option="--continue-blocked")
    limits = spend_limits(opts)
    if opts.parallel_providers is not None and not 1 <= opts.parallel_providers <= MAX_PARALLEL_PROVIDERS:
        raise UsageProblem(f"must be between 1 and {MAX_PARALLEL_PROVIDERS} (one worker per provider at most runs), got {opts.parallel_providers}", option="--parallel-providers")
    return limits


def spend_limits(opts: CodingOptions) -> SpendLimits | None:
    """--max-spend-usd (each provider), --max-total-spend-usd (the campaign) and
    --attempt-ceiling-usd, as exact decimals; None when no cap is asked for.

    The paired lane's gate: an attempt is admitted only while spend so far plus the
    ceilings reserved by attempts in flight plus its own ceiling fits every cap."""
    names = (("--max-spend-usd", opts.max_spend_usd), ("--max-total-spend-usd", opts.max_total_spend_usd), ("--attempt-ceiling-usd", opts.attempt_ceiling_usd))
    if all(value is None for _, value in names):
        return None
    values: dict[str, Decimal] = {}
    for name, text in names:
        if text is None:
            continue
        written = str(text).strip()
        # Digits only: Decimal would also read 1_0 as 10, 1e2 and other scripts' digits.
        value = Decimal(written) if _USD.fullmatch(written) else None
        if value is None or value <= 0:
            raise UsageProblem(f"must be a positive number of US dollars in digits, e.g. 5 or 0.25, got {text!r}", option=name)
        if (problem := amount_problem(value)) is not None:
            raise UsageProblem(f"{problem}, got {text!r}", option=name)
        values[name] = value
    ceiling = values.get("--attempt-ceiling-usd")
    if ceiling is None:
        given = next(name for name in ("--max-spend-usd", "--max-total-spend-usd") if name in values)
        raise UsageProblem(f"{given} needs --attempt-ceiling-usd too: the gate admits an attempt only while spend plus the per-attempt ceiling fits the maximum", option="--attempt-ceiling-usd")
    if len(values) == 1:
        raise UsageProblem("--attempt-ceiling-usd needs --max-spend-usd (each provider's cap) or --max-total-spend-usd (the campaign's)", option="--max-spend-usd")
    for name in ("--max-spend-usd", "--max-total-spend-usd"):
        if name in values and ceiling > values[name]:
            raise UsageProblem(f"must not exceed {name}", option="--attempt-ceiling-usd")
    return SpendLimits(values.get("--max-total-spend-usd"), ceiling, provider_max_spend_usd=values.get("--max-spend-usd"))


def check_mode(opts: CodingOptions) -> SpendLimits | None:
    """What every lane checks first: unsupported options, the lane's own options, then
    the values whose rules do not depend on the lane. Returns the campaign lane's
    spend limits (``check_campaign_mode``): the command passes them down as parsed."""
    reject_unsupported(opts)
    limits = check_campaign_mode(opts)
    check_numbers(opts)
    if opts.campaign:
        return limits
    reject_paired_only(opts)
    parse_model(opts.model)
    if opts.output is None:
        raise UsageProblem("--output FILE.json is required (write it outside the source checkout)", option="--output")
    return None


def check_live_options(opts: CodingOptions) -> None:
    """--plan/--approve-plan-digest belong to --live; --live needs both."""
    if not opts.live:
        for name, value in (("--plan", opts.plan), ("--approve-plan-digest", opts.approve_plan_digest)):
            if value is not None:
                raise UsageProblem(f"{name} is only used with --live; plan-only mode writes a new template and approves nothing", option=name)
        return
    if opts.plan is None:
        raise UsageProblem("--live needs --plan FILE.json, the reviewed and approved plan object", option="--plan")
    if opts.approve_plan_digest is None:
        raise UsageProblem("--live needs --approve-plan-digest SHA256 of the approved plan", option="--approve-plan-digest")
    if not _SHA256.match(opts.approve_plan_digest):
        raise UsageProblem("must be 64 lowercase hexadecimal characters (a SHA-256 digest)", option="--approve-plan-digest")


# --- the tasks ---------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """The tasks a run schedules, the suite they come from, and which of them were never
    proven sound as they are now (``campaign tasks check``)."""

    suite: benchmark.TaskSuite
    tasks: tuple[benchmark.Task, ...]
    unchecked: tuple[str, ...] = ()

    def identity(self) -> dict[str, Any] | None:
        """The experiment's ``task_suite`` entry (None for the built-in tasks). ``unchecked``
        is what was known when the run was planned: comparisons leave it out."""
        found = benchmark.suite_identity(self.suite, self.tasks)
        return None if found is None else {**found, "unchecked": list(self.unchecked)}

    def task(self, name: str) -> benchmark.Task:
        return next(t for t in self.tasks if t.name == name)

    def lines(self) -> list[str]:
        """What a run says first about its tasks: the suite, and the warning if any (nothing
        for the built-in tasks, whose runs say what they always said)."""
        if self.suite.builtin:
            return []
        return [f"tasks: {self.suite.describe()} ({len(self.tasks)} of its {len(self.suite.tasks)} tasks)", *filter(None, [self.warning()])]

    def warning(self) -> str | None:
        """The line that says a run uses unchecked tasks (a warning, never a refusal)."""
        if not self.unchecked:
            return None
        return (
            f"warning: {len(self.unchecked)} of the {len(self.tasks)} tasks of {self.suite.describe()} were never checked as they are now "
            f"({', '.join(self.unchecked)}); prove them sound first: campaign tasks check --task-suite {self.suite.root}"
        )


def select_tasks(opts: CodingOptions, *, images: bool = False) -> Selection:
    """``--task-suite`` and ``--tasks``, read and checked: a task no attempt can run here (a
    Harbor environment that needs an image, or paths that need CAP_SYS_ADMIN) is refused.
    ``images``: the lane runs a task that ships a buildable image in a container of it."""
    suite = benchmark.suite_of(opts.task_suite)
    tasks = suite.resolve(opts.tasks)
    can_map = confine.can_map_roots()
    for task in tasks:
        if images and task.ships_image:
            continue  # its own container, not this machine's paths (lanes.task_images)
        found = benchmark.unrunnable(task, can_map)
        if found is not None:
            raise UsageProblem(f"task {task.name} cannot run here: {found[0]} ({found[1]}); leave it out with --tasks", option="--task-suite")
    return Selection(suite, tasks, checks.unchecked(tasks))


# --- single values ----------------------------------------------------------


def check_positive(value: int | None, option: str, upper: int | None = None) -> None:
    if value is None:
        return
    if value <= 0:
        raise UsageProblem(f"must be a positive whole number, got {value}", option=option)
    if upper is not None and value > upper:
        raise UsageProblem(f"must be at most {upper}, got {value}", option=option)


def check_numbers(opts: CodingOptions) -> None:
    check_positive(opts.repetitions, "--repetitions", MAX_REPETITIONS)
    check_positive(opts.timeout, "--timeout", MAX_DEADLINE_S)
    check_positive(opts.run_timeout, "--run-timeout", MAX_DEADLINE_S)


def check_applied_profile_shown(profile: AgentProfile) -> None:
    """A paired trial passes only when the disclosure profile it applied is shown: by the
    adapter, or confirmed on the wire. The paired lane and a campaign refuse alike."""
    if profile.applied_profile_from == "none":
        raise UsageProblem(
            f"the {profile.name} agent cannot show which disclosure profile it applied (applied_profile_from = \"none\"), "
            "so no paired trial through it could pass; use a profile that reports it (\"adapter\") or is confirmed on the wire (\"wire\")",
            option="--agent",
        )


def parse_model(value: str | None) -> ModelRoute:
    text = or_default(value, DEFAULT_MODEL)
    match = _MODEL.match(text)
    if not match:
        raise UsageProblem(
            f"{text!r} is not PROVIDER:MODEL (a lowercase provider name, a colon, a model name without spaces), "
            f"e.g. {DEFAULT_MODEL}",
            option="--model",
        )
    if credential_shaped(match["model"]):
        raise UsageProblem(
            # Not echoed: the line would print the key it refuses to store.
            "the model name looks like an API key or token; a model name is stored in every report, "
            "so give the key through the provider's credential variable and a model name here",
            option="--model",
        )
    return ModelRoute(provider=match["provider"], model=match["model"])


def resolve_source(value: Path | None, cwd: Path) -> Path:
    """The checkout: ``--source`` (which must be a git root) or the git root of ``cwd``."""
    if value is None:
        root = git_toplevel(cwd)
        if root is None:
            raise UsageProblem(f"{cwd} is not inside a git checkout; run from the source checkout or give --source DIR", option="--source")
        return root.resolve()
    path = Path(value).expanduser()
    if not path.is_dir():
        raise UsageProblem(f"{value} is not a directory", option="--source")
    root = git_toplevel(path)
    if root is None:
        raise UsageProblem(f"{value} is not a git checkout; the source digest needs git's view of tracked and ignored files", option="--source")
    if root.resolve() != path.resolve():
        raise UsageProblem(f"{value} is inside the checkout {root}; give the checkout's root", option="--source")
    return root.resolve()


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (resolved, symlinks followed) lies in ``root`` (resolved)."""
    return Path(path).expanduser().resolve().is_relative_to(Path(root).resolve())


def resolve_launcher(value: Path | None, source: Path) -> Path | None:
    """The launcher, resolved; it must be an executable file inside ``source``.

    A launcher elsewhere (installed on PATH, another checkout, a symlink leading
    out of the source) would run a different revision from the one the source
    digest binds, so it is refused.
    """
    if value is None:
        return None
    resolved = Path(value).expanduser().resolve()
    if not resolved.is_relative_to(source):
        raise UsageProblem(
            f"{value} resolves to {resolved}, outside the source checkout {source}; an installed launcher from "
            "another revision is not accepted, use the one in this checkout",
            option="--launcher",
        )
    if not resolved.is_file():
        raise UsageProblem(f"{value} is not a file", option="--launcher")
    if not resolved.stat().st_mode & 0o111:
        raise UsageProblem(f"{value} is not executable", option="--launcher")
    return resolved


def check_outside_source(value: Path | None, source: Path, option: str) -> None:
    """Outputs, stores and failure bundles must not land in the checkout.

    A new file there changes the source digest, so the plan it belongs to would
    no longer match the checkout it describes.
    """
    if value is not None and inside(value, source):
        raise UsageProblem(
            f"{value} is inside the source checkout {source}; write it elsewhere: a new file in the checkout "
            "changes the source digest and invalidates the plan",
            option=option,
        )


def resolve_profile_python(value: Path | None) -> PythonInfo:
    """Run the profiler's interpreter (default: this one) and require Python >= 3.11."""
    path = Path(value).expanduser() if value is not None else Path(sys.executable)
    if value is not None and not path.exists():
        raise UsageProblem(f"{value} does not exist", option="--profile-python")
    try:
        info = probe_python(path)
    except NotAPython as exc:
        raise UsageProblem(str(exc), option="--profile-python") from None
    if info.version_info[:2] < MIN_PROFILE_PYTHON:
        wanted = ".".join(map(str, MIN_PROFILE_PYTHON))
        found = ".".join(map(str, info.version_info))
        raise UsageProblem(f"{path} is Python {found}; the profiler needs Python {wanted} or newer", option="--profile-python")
    return info
