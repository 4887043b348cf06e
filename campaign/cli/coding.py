"""`campaign coding`: the benchmark's trials, nonpaired or as repeated paired disclosure trials."""

from __future__ import annotations

import shlex
import sys
from decimal import Decimal

import click

from campaign import testhooks
from campaign.cli.common import EXIT_UNFINISHED, ROW_ID, SEED, core_errors, db_option
from campaign.cli.paths import AgentProfileRef, InputDir, InputFile, OutputDir, OutputFile, StoreTarget
from campaign.cli.rerun import program, rerun_command
from campaign.lanes import options as opt
from campaign.errors import Interrupted
from campaign.lanes import multi_provider, nonpaired, paired_live, paired_plan
from campaign.lanes.continuation import REOPEN_ON_RESUME, CampaignBlocked, RunnerBusy
from campaign.spend import ATTEMPT_EXCEEDED_CEILING
from campaign.lanes.holders import LeaseHeld
from campaign.lanes.parallel import WorkerLost
from campaign.lanes import preflight
from campaign.report import write_report


def _nonpaired(options: opt.CodingOptions, db: str | None) -> None:
    result = nonpaired.run(options, db, progress=lambda line: click.echo(line, err=True))
    stopped = f"; stopped: {result.stop_reason}" if result.stop_reason else ""
    click.echo(f"attempted {result.attempted} tasks, {result.passed} verified passes{stopped}")
    click.echo(f"report: {result.output}")
    click.echo(f"store: {result.store} (campaign {result.campaign_id})")
    if result.stop_reason:
        if result.engine_error:
            click.echo(f"stopped by an engine error: {result.engine_error}", err=True)
        click.echo(f"unfinished: stopped ({result.stop_reason}) before every task had a result", err=True)
        sys.exit(EXIT_UNFINISHED)


def _live(options: opt.CodingOptions, db: str | None) -> None:
    result = paired_live.run(options, db, progress=lambda line: click.echo(line, err=True), write_output=write_report)
    stopped = f"; stopped: {result.stop_reason} (later trials recorded not_attempted)" if result.stop_reason else ""
    click.echo(f"attempted {result.attempted} of {result.scheduled} scheduled trials, {result.passed} verified passes{stopped}")
    click.echo(f"report: {result.output}")
    click.echo(f"store: {result.store} (campaign {result.campaign_id})")
    if result.left:
        for halt in result.halts:
            click.echo(f"halted {halt.line()}", err=True)
        if result.engine_error:
            click.echo(f"stopped by an engine error: {result.engine_error}", err=True)
        click.echo(f"unfinished: {result.left} of {result.scheduled} trials have no result (stopped: {result.stop_reason}); a paired run does not resume: plan and approve a new one", err=True)
        sys.exit(EXIT_UNFINISHED)


def _usd(amount: Decimal) -> str:
    """An exact amount without trailing zeros: 0.204918, 1, 10."""
    return format(amount.normalize(), "f")


def _next_steps(exc: Exception) -> str:
    """A refusal's message with the exact commands, as this command line reads."""
    resume, blocked, prog = rerun_command("--resume"), rerun_command("--resume", "--continue-blocked"), shlex.join(program())
    if isinstance(exc, LeaseHeld):
        return exc.describe(rerun=resume, program=prog, continue_blocked=blocked)
    if isinstance(exc, RunnerBusy):
        return exc.describe(rerun=resume)
    return exc.describe(rerun=blocked, program=prog)


def _campaign(options: opt.CodingOptions, db: str | None) -> None:
    try:
        _run_campaign(options, db)
    except Interrupted:
        # Everything is persisted before this is raised; say how to go on.
        click.echo(f"progress is saved; to continue, run: {rerun_command('--resume')}", err=True)
        raise
    except (CampaignBlocked, WorkerLost, LeaseHeld, RunnerBusy) as exc:
        raise click.ClickException(_next_steps(exc)) from None


def _forecast(found: preflight.Preflight | None) -> None:
    for line in preflight.lines(found) if found is not None else ():
        click.echo(line, err=True)


def _run_campaign(options: opt.CodingOptions, db: str | None) -> None:
    limits = opt.check_mode(options)
    _forecast(preflight.forecast(options, db))
    result = multi_provider.run(options, db, limits=limits, catalog_path=options.providers_catalog, stream=sys.stderr)
    if not result.live:
        if result.note:
            click.echo(result.note)
        click.echo(f"would run {result.left} of {result.scheduled} trials, one at a time, interleaved by pair; nothing ran (add --live to execute)")
        click.echo(f"store: nothing written; with --live the store is {result.store}")
        return
    stopped = f"; stopped: {result.stop_reason}" if result.stop_reason else ""
    click.echo(f"ran {result.attempted_now} attempts now; {result.left} of {result.scheduled} scheduled trials left{stopped}")
    for name, spent in result.spends.items():
        cap = f" of {_usd(result.caps.provider_max_spend_usd)}" if result.caps.provider_max_spend_usd is not None else ""
        click.echo(f"spend {name}: {_spent(spent)}{cap} USD counted as {spent.basis}")
    if result.caps is not None and result.caps.max_spend_usd is not None:
        total = sum((s.usd for s in result.spends.values()), Decimal(0))
        unknown = any(s.unknown for s in result.spends.values())
        click.echo(f"spend, all providers: {_usd(total)}{'+?' if unknown else ''} of {_usd(result.caps.max_spend_usd)} USD")
    for path in result.reports:
        click.echo(f"report: {path}, {path.with_suffix('.md')}, {path.with_suffix('.svg')}")
    if not result.unfinished:
        click.echo(f"store: {result.store} (campaign {result.campaign_id}); every scheduled trial has a result")
        testhooks.reached("exit")
        return
    click.echo(f"store: {result.store} (campaign {result.campaign_id})")
    _say_why_unfinished(result)
    testhooks.reached("exit")
    sys.exit(EXIT_UNFINISHED)


def _spent(spent) -> str:
    """A provider's counted spend: exact, ``+?`` when some attempts' spend is unknown, ``?`` when all are."""
    if spent.unknown and not (spent.measured or spent.equivalent):
        return "?"
    return _usd(spent.usd) + ("+?" if spent.unknown else "")


def _say_why_unfinished(result) -> None:
    """On stderr: why trials are left, and the exact line that continues the campaign."""
    for halt in result.halts:
        click.echo(f"halted {halt.line()}", err=True)
    if result.engine_error:
        click.echo(f"stopped by an engine error: {result.engine_error}", err=True)
    reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(result.not_attempted.items()))
    left = f"{result.left} trial(s) still scheduled" if result.left else ""
    click.echo(f"unfinished: {'; '.join(x for x in (left, reasons and f'not attempted: {reasons}') if x)}"
               f"{f' (stopped: {result.stop_reason})' if result.stop_reason else ''}", err=True)
    resumable = result.left or set(result.not_attempted) & set(REOPEN_ON_RESUME)
    if resumable:
        click.echo(f"to continue{' once the provider recovers' if result.halts else ''}: {rerun_command('--resume')}", err=True)
    if ATTEMPT_EXCEEDED_CEILING in result.not_attempted:
        click.echo(
            f"the trials {ATTEMPT_EXCEEDED_CEILING} held back run again on --resume only under a raised --attempt-ceiling-usd, above the most "
            "one attempt of their provider spent; under the same ceiling they would be stopped again",
            err=True,
        )
    elif not resumable:
        click.echo("the trials left will not run again in this campaign (a resume would not admit them)", err=True)


@click.command(context_settings={"max_content_width": 100})
@click.option("--paired", is_flag=True, help="Repeated paired trials of the variants (baseline vs coding, or --variants) under the plan gate.")
@click.option("--launcher", type=InputFile("launcher", text=False), help="The agent executable, inside --source (an installed launcher from another revision is refused). Needed only when the agent profile runs {launcher}; no default.")
@click.option("--source", type=InputDir(), metavar="DIR", help="The source checkout whose revision and content are bound [default: git root of the current directory].")
@click.option("--agent", type=AgentProfileRef(), metavar="NAME|FILE.toml", help="Agent profile: a built-in name or a profile file [default: offline].")
@click.option("--model", metavar="PROVIDER:MODEL", help=f"One model route for every variant [default: {opt.DEFAULT_MODEL}].")
@click.option("--tasks", metavar="NAME,NAME", help="Benchmark tasks [default: all twelve, or every task of --task-suite].")
@click.option("--task-suite", type=InputDir(), metavar="DIR", help="Run the tasks of this directory of task folders (the engine's format or Harbor's; see campaign tasks check) instead of the twelve built-in tasks.")
@click.option("--repetitions", type=int, metavar="N", help=f"Paired and --campaign: positive repetitions per task and variant [default: {opt.DEFAULT_REPETITIONS}].")
@click.option("--seed", type=SEED, metavar="N", help=f"Paired and --campaign: scheduling and uncertainty seed [default: {opt.DEFAULT_SEED}].")
@click.option("--config", type=InputFile("base config"), metavar="FILE.toml", help="Base config without runtime.tools.disclosure, outside --source: required with --paired, optional with --campaign.")
@click.option("--timeout", type=int, metavar="S", help=f"Positive per-attempt deadline in seconds [default: {opt.DEFAULT_TIMEOUT}].")
@click.option("--run-timeout", type=int, metavar="S", help=f"Paired only: positive whole-run deadline in seconds [default: {opt.DEFAULT_RUN_TIMEOUT}].")
@click.option("--profile-python", type=InputFile("Python interpreter", text=False), metavar="PATH", help="Paired only: Python >= 3.11 for the profiler [default: this interpreter].")
@click.option("--output", type=OutputFile(), metavar="FILE.json", help="Required without --campaign (which writes to --output-dir): the report, or with --paired and no --live the unsigned plan template. With --paired, keep it outside --source (it would change the source digest).")
@click.option("--plan", type=InputFile("approved plan"), metavar="FILE.json", help="Paired --live only: the approved plan object (not the template).")
@click.option("--approve-plan-digest", metavar="SHA256", help="Paired --live only: lowercase SHA-256 of the canonical approved plan.")
@click.option("--live/--no-live", default=None, help="Never implied. --paired: allow paid calls once every approval check passes; --campaign: run the trials (without it, only the schedule is shown).")
@click.option("--failure-dir", type=OutputDir(), metavar="DIR", help="Private failure bundles, outside --source; never upload or commit them.")
@click.option("--campaign", "campaign", is_flag=True, help="Resumable multi-provider campaign (the variants per provider: baseline vs coding, or --variants); --live executes, --resume continues.")
@click.option("--providers", metavar="NAME,NAME", help="Campaign only: providers from the catalog [default: offline].")
@click.option("--variants", metavar="A,B,...", help="--paired or --campaign: the variants in order, the first the baseline; the built-in baseline and coding, or a profile's own [variants.NAME] (default: every variant the agent profiles define).")
@click.option("--control-plane-port", type=int, metavar="PORT", help="Campaign only: a fixed loopback port for the agent runtime's control plane [default: OS-chosen].")
@click.option("--output-dir", type=OutputDir(), metavar="DIR", help="Campaign only, required: the store (campaign.db) and reports live here.")
@click.option("--resume", is_flag=True, help="Campaign only: continue the campaign in --output-dir from what the store records.")
@click.option("--providers-catalog", type=InputFile("providers catalog"), metavar="FILE.toml", help="Paired and --campaign: a providers catalog instead of the shipped one (custom routes, upstreams, prices).")
@click.option("--continue-blocked", "continue_blocked", is_flag=True, help="Campaign only, with --resume: when a killed runner blocked the campaign and recovery proved its processes gone, continue the experiment in a new linked campaign that carries over the finished, verified trials.")
@click.option("--max-spend-usd", metavar="USD", help="Campaign only, with --attempt-ceiling-usd: each provider's spend cap; an attempt starts only while its spend so far plus the ceiling fits. Measured cost where the client reports it, list-price equivalent otherwise.")
@click.option("--max-total-spend-usd", metavar="USD", help="Campaign only, with --attempt-ceiling-usd: one cap over every provider's spend together, held even when workers race.")
@click.option("--attempt-ceiling-usd", metavar="USD", help="Campaign only, with a cap: the most one attempt may spend, reserved when it is admitted; a higher cost stops that provider.")
@click.option("--parallel-providers", type=int, metavar="N", help="Campaign only: run N local workers on the store, so providers run in parallel (each provider's trials stay one at a time, in schedule order). Workers elsewhere join with campaign worker.")
@click.option("--container-runtime", type=click.Choice(["podman", "docker"]), help="The container runtime for tasks that ship an image [default: podman, else docker].")
@click.option("--rehearse", is_flag=True, help="Campaign only: run this exact command for free first: every provider's upstream is the replay provider, every price synthetic, no credential read, nothing leaves the machine. Use its own --output-dir.")
@click.option("--pilot", type=ROW_ID, metavar="ID", help="Plan-only --paired and --campaign: print what this size can detect and will cost, forecast from this finished campaign (see campaign power); warns, never refuses.")
@click.option("--pilot-db", type=StoreTarget(), metavar="URL|PATH", help="With --pilot: the pilot's store [default: this run's own store].")
@click.option("--target-effect", type=float, metavar="E", help="With --pilot: warn when this size cannot detect a success difference of E (0.10 is ten points) at 80% power.")
@click.option("--schema-budgets", "schema_budgets", is_flag=False, flag_value="", multiple=True, metavar="ANY", help="Unsupported and always refused: the coding profile ignores budget_tokens, so budget variants would be identical treatments.")
@db_option
def coding(db: str | None, **values) -> None:
    """Run the benchmark: nonpaired, paired (plan, then --live), or as a --campaign.

    Without --paired or --campaign each selected task runs once through the
    agent's own configuration. --paired without --live hashes the source,
    build artifacts, config, fixtures and interpreter, schedules the trials and
    writes the plan template to --output; it runs no trial and calls no model.
    --paired --live runs the approved plan under its spend and stop rules.
    --campaign runs the variants (baseline vs coding, or --variants) per provider,
    resumable with --resume.
    Keep --output, --config, --db and --failure-dir outside --source: a new file
    in the checkout changes the source digest. Option names must be given in full.

    \b
    Examples:
      campaign coding --campaign --providers offline --agent offline-wire --repetitions 2 --live --resume --output-dir campaign-out
      campaign coding --output /tmp/run/report.json --tasks semver-precedence
      campaign coding --paired --config /tmp/demo/base.toml --output /tmp/demo/template.json
    """
    options = opt.CodingOptions(**values)
    with core_errors():
        preflight.check(options)
        if options.campaign:
            _campaign(options, db)
            return
        opt.check_mode(options)
        if not options.paired:
            _nonpaired(options, db)
            return
        if options.live:
            _live(options, db)
            return
        found = preflight.forecast(options, db)
        result = paired_plan.run(options, db)
    click.echo(
        f"planned {result.scheduled} trials ({result.tasks} tasks x {len(result.variants)} variants x "
        f"{result.repetitions} repetitions); no trial ran, no model was called"
    )
    for line in result.lines:
        click.echo(line, err=True)
    click.echo(f"plan digest: {result.plan_digest} (template digest, not authorization)")
    click.echo(f"template: {result.output}")
    click.echo(f"store: {result.store} (campaign {result.campaign_id}, state planned)")
    click.echo("next: campaign plan extract TEMPLATE OUT, review and approve OUT, then campaign plan digest OUT")
    _forecast(found)
