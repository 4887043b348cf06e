"""Before a paid run: what the scheduled size can detect and what it will cost.

``campaign coding --paired`` (the plan template) and ``campaign coding --campaign``
take ``--pilot ID`` (a finished campaign in ``--pilot-db``, by default this run's own
store) and ``--target-effect E``. ``forecast`` reads the pilot and plans exactly the
size this command schedules (its tasks, repetitions and providers); ``lines`` says it
in words, with a warning, never a refusal, when the forecast spend would pass a cap
or the detectable effect is larger than the target. A pilot that cannot show its
spread gives the reason instead of a detectable effect.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from campaign import benchmark
from campaign.agents.profiles import load_profile, run_variants
from campaign.errors import UsageProblem
from campaign.lanes import options as opt
from campaign.power import forecast as fc
from campaign.power import planner, render
from campaign.power.pilot import Pilot, read_pilot
from campaign.providers import load_catalog, resolve_providers
from campaign.report import spread
from campaign.store.engine import describe
from campaign.store.migrate import open_store
from campaign.vocabulary import VARIANTS

STORE_NAME = "campaign.db"  # a campaign's store in its --output-dir (lanes.multi_provider)


@dataclass(frozen=True)
class Preflight:
    pilot: Pilot
    store: str  # the pilot's store, as `campaign power --db` takes it
    row: planner.Row
    providers: tuple[str, ...]
    missing: tuple[str, ...]  # scheduled providers the pilot never ran
    target_effect: float | None
    variants: int = len(VARIANTS)  # per pair of this run


def check(opts: opt.CodingOptions) -> None:
    """Where --pilot, --pilot-db and --target-effect apply (refused elsewhere, naming the option)."""
    given = [name for name, value in (("--pilot", opts.pilot), ("--pilot-db", opts.pilot_db), ("--target-effect", opts.target_effect)) if value is not None]
    if not given:
        return
    if not (opts.campaign or (opts.paired and not opts.live)):
        raise UsageProblem(
            f"{given[0]} forecasts a run before it is paid for: it applies when planning (--paired without --live) and to --campaign",
            option=given[0],
        )
    if opts.pilot is None:
        raise UsageProblem(f"{given[0]} needs --pilot ID, the finished campaign to forecast from", option=given[0])
    if opts.target_effect is not None and not (0 < abs(opts.target_effect) <= 1):
        raise UsageProblem(f"must be a difference in success rate between -1 and 1, non-zero (0.10 is ten points), got {opts.target_effect}", option="--target-effect")


def forecast(opts: opt.CodingOptions, db: str | None) -> Preflight | None:
    """The pilot's plan for the size this command schedules (None without --pilot)."""
    if opts.pilot is None:
        return None
    tasks = len(benchmark.suite_of(opts.task_suite).resolve(opts.tasks))
    if opts.campaign:
        providers = tuple(p.name for p in resolve_providers(opts.providers, load_catalog(opts.providers_catalog)))
    else:
        providers = (opt.parse_model(opts.model).provider,)
    pilot, store = _read(opts, db)
    try:
        fitted: spread.Spread | spread.SpreadUnknown = spread.fit(pilot.tasks)
    except spread.SpreadUnknown as exc:
        fitted = exc
    cells = [c for c in pilot.cells if c.provider in providers]
    missing = tuple(p for p in providers if p not in {c.provider for c in cells})
    request = planner.Request(
        repetitions=(opt.or_default(opts.repetitions, opt.DEFAULT_REPETITIONS),),
        tasks=tasks,
        providers=len(providers),
        seed=opt.or_default(opts.seed, opt.DEFAULT_SEED),
        target=planner.Target(effect=abs(opts.target_effect) if opts.target_effect is not None else None),
        caps=opt.spend_limits(opts) if opts.campaign else None,
        workers=opts.parallel_providers,
        variants=_variants(opts),
    )
    (row,) = planner.plan(fitted, None if missing else fc.cost_model(cells), request).rows
    return Preflight(pilot, store, row, providers, missing, opts.target_effect, request.variants)


def _variants(opts: opt.CodingOptions) -> int:
    """How many variants this run schedules per pair: trials, spend and the intervals'
    adjustment scale with it. The lane validates the names themselves before any trial."""
    if opts.variants is not None:
        return max(len(opts.variants.split(",")), 2)
    # Without --variants: the profile's default ones (a built-in profile's: the pair).
    try:
        return len(run_variants(load_profile(opts.agent))) if opts.agent else len(VARIANTS)
    except UsageProblem:  # the lane refuses that profile, in its own words, before any trial
        return len(VARIANTS)


def _read(opts: opt.CodingOptions, db: str | None) -> tuple[Pilot, str]:
    option = "--pilot-db" if opts.pilot_db is not None else "--pilot"
    target = opts.pilot_db or db
    if target is None and opts.campaign:
        store = Path(opts.output_dir).expanduser().absolute() / STORE_NAME  # type: ignore[arg-type]
        if not store.is_file():
            raise UsageProblem(f"there is no store at {store} to read pilot campaign {opts.pilot} from; give --pilot-db, the pilot's store", option="--pilot-db")
        target = str(store)
    try:
        engine = open_store(target, readonly=True)
    except UsageProblem as exc:
        raise UsageProblem(f"the pilot's store: {exc.reason}", option=option) from None
    try:
        return read_pilot(engine, opts.pilot, option="--pilot"), describe(engine.url)  # type: ignore[arg-type]
    finally:
        engine.dispose()


def lines(pre: Preflight) -> list[str]:
    """The forecast in words, warnings last (for stderr, before anything is paid)."""
    row, pilot = pre.row, pre.pilot
    out = [
        f"forecast from pilot campaign {pilot.campaign_id} ({len(pilot.tasks)} task clusters, {pilot.pairs} complete pairs) "
        f"for this run: {row.tasks} tasks x {row.repetitions} repetitions x {len(pre.providers)} provider(s)"
        f"{f' x {pre.variants} variants' if pre.variants != len(VARIANTS) else ''}, {row.trials} trials"
    ]
    if row.detectable is not None:
        out.append(f"  detectable effect on verified success at 80% power: {row.detectable:.3f} either way ({planner.DEFAULT_SIMULATIONS} simulated campaigns of this size)")
    else:
        out.append(f"  detectable effect: unknown ({row.reason}): {spread.EXPLAINED.get(row.reason, 'not even the largest possible effect would be detected at this size')}")  # type: ignore[arg-type]
    if pre.missing:
        out.append(f"  spend: no forecast: the pilot has no attempts of {', '.join(pre.missing)}")
    elif row.spend is not None:
        s = row.spend
        total = "unknown" if s.usd is None else f"{'' if s.complete else '>='}{s.usd:.4f} USD ({s.low_usd:.4f}-{s.high_usd:.4f})"
        out.append(f"  spend: {total}; wall {render.duration(s.seconds_one_runner)} with one runner, {render.duration(s.seconds_parallel)} with {s.workers} worker(s)")
        out += render.provider_lines(s)
        if s.high_usd is not None and s.cap_usd is None and not any(p.cap_usd for p in s.providers):
            out.append(f"  no cap given here: a cap that lets every trial run is at least {s.high_usd:.4f} USD (the high end) plus one attempt ceiling")
    out += warnings(pre)
    return out


def warnings(pre: Preflight) -> list[str]:
    """What the operator should know before paying (never a refusal)."""
    out = []
    spend = pre.row.spend
    if spend is not None and (spend.over_cap or any(p.over_cap for p in spend.providers)):
        out.append("WARNING: the forecast spend passes a spend cap: the spend gate would stop this run before every trial has a result")
    target = pre.target_effect
    if target is not None and (pre.row.detectable is None or pre.row.detectable > abs(target)):
        found = "unknown" if pre.row.detectable is None else f"{pre.row.detectable:.3f}"
        out.append(
            f"WARNING: the smallest effect this size detects at 80% power is {found}, not below --target-effect {abs(target):.3f}: "
            f"a real effect of that size would likely be missed; size the run with `campaign power --campaign {pre.pilot.campaign_id} --effect {abs(target):.3f} --db {pre.store}`"
        )
    return out
