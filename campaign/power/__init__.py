"""Plan a campaign's size before paying: repetitions, money, and what it can detect.

From a pilot (a finished paired run or campaign in the store) or from stated
assumptions, ``planner.plan`` simulates future campaigns of 1, 2, ... repetitions,
runs the report's own interval on each (``report.stats.t_intervals``), and forecasts
spend and wall time from the pilot's attempts::

    from campaign.power import forecast, pilot, planner
    from campaign.report import spread

    found = pilot.read_pilot(engine, campaign_id)           # the one read of the store
    fitted = spread.fit(found.tasks)                        # or raises SpreadUnknown(reason)
    plan = planner.plan(fitted, forecast.cost_model(found.cells),
                        planner.Request(repetitions=(1, 2, 3), tasks=12, providers=1, seed=107,
                                        target=planner.Target(effect=0.10, power=0.8)))
    plan.smallest                                           # the fewest repetitions that meet it

What a caller can rely on:

- ``forecast``, ``planner`` and ``render`` are pure: plain values in, plain values
  out, no I/O; so are the statistics they build on, the report's ``spread`` (what a
  pilot says about tasks) and ``simulate`` (future campaigns), which every report's
  detectable effect uses too and so live with the report, below the planner. Only ``pilot`` reads the store (the lanes
  open it for it), read-only.
- Seeded: the same pilot, options and seed give the same plan, row by row
  (``simulate.simulation_rng``); the interval inside is the report's, seeded by
  the planned campaign's seed.
- Unknown stays unknown: a pilot that cannot show the spread gives the reason
  (``spread.SpreadUnknown``), an attempt without a known spend makes the forecast a
  lower bound that says so, never a made-up number.

``render`` prints a plan and ``report.detectable`` is every report's smallest
detectable effect. The option glue sits with the other lanes: ``lanes.power_request``
parses ``campaign power``'s options, ``lanes.preflight`` is the forecast ``campaign
coding --pilot`` prints before a run.
"""
