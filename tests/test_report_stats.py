"""The report's paired comparison: the headline t interval on task means, and the spec's
task-cluster bootstrap beside it (deterministic per seed, resamples clusters, fast)."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_report_fixtures import insert_campaign

from campaign.report import build_report, stats
from campaign.report.markdown import render_markdown


def test_each_replicate_is_the_mean_of_resampled_whole_clusters():
    means = np.array([0.5, -1.0, 0.0, 0.25, 1.0])
    idx = stats.resample_indices(len(means), seed=7)
    assert idx.shape == (stats.RESAMPLES, len(means))
    assert idx.min() >= 0 and idx.max() < len(means)
    replicates = stats.bootstrap_means(means, seed=7)
    for row in (0, 1, 999, 1999):
        assert replicates[row] == pytest.approx(sum(means[i] for i in idx[row]) / len(means))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=2, max_size=40), st.integers(0, 2**63))
def test_bootstrap_is_deterministic_per_seed(means, seed):
    a = stats.summarize(means, seed, empty_reason="no_complete_pairs")
    b = stats.summarize(means, seed, empty_reason="no_complete_pairs")
    assert a == b
    if max(means) - min(means) <= 1e-12:
        assert (a.ci_low, a.ci_high, a.interval_reason) == (None, None, "no_spread_between_tasks")
        return
    assert a.ci_low <= a.ci_high
    assert min(means) - 1e-12 <= a.ci_low and a.ci_high <= max(means) + 1e-12


def test_different_seeds_give_different_draws():
    means = np.linspace(-1, 1, 12)
    assert not np.array_equal(stats.bootstrap_means(means, 1), stats.bootstrap_means(means, 2))
    # Negative seeds are accepted and stay deterministic.
    assert np.array_equal(stats.bootstrap_means(means, -5), stats.bootstrap_means(means, -5))


def test_one_cluster_has_an_estimate_but_no_interval_and_none_has_neither():
    one = stats.summarize([0.4], 1, empty_reason="no_complete_pairs")
    assert (one.estimate, one.ci_low, one.ci_high, one.interval_reason) == (0.4, None, None, "single_task_cluster")
    none = stats.summarize([], 1, empty_reason="no_complete_pairs")
    assert (none.estimate, none.estimate_reason, none.interval_reason) == (None, "no_complete_pairs", "no_complete_pairs")


def test_task_means_that_are_all_the_same_have_an_estimate_but_no_interval():
    # Every resample of alike clusters is their mean: a zero-width 95% interval would
    # claim a certainty twelve tasks cannot give.
    flat = stats.summarize([1.0] * 12, 107, empty_reason="no_complete_pairs")
    assert (flat.estimate, flat.ci_low, flat.ci_high, flat.tasks, flat.interval_reason) == (1.0, None, None, 12, "no_spread_between_tasks")
    assert stats.summarize([0.0, 1.0] + [0.0] * 10, 107, empty_reason="no_complete_pairs").ci_high > 0


def test_report_resamples_task_clusters_not_attempts(engine):
    """One task with 40 winning pairs and nine tasks with one tied pair each.

    Clusters weigh equally, so the estimate is 0.1 and both intervals come from the ten
    task means (the headline's spread, the bootstrap's resamples); resampling the 49
    pairs as if independent would centre near 40/49 = 0.82 with a narrow interval far
    from it.
    """
    trials = []
    for rep in range(1, 41):
        trials += [
            {"task": "big", "repetition": rep, "variant": "baseline", "attempt": {"verified_pass": False}},
            {"task": "big", "repetition": rep, "variant": "coding", "attempt": {"verified_pass": True}},
        ]
    for i in range(9):
        trials += [{"task": f"small-{i}", "repetition": 1, "variant": v, "attempt": {"verified_pass": True}} for v in ("baseline", "coding")]
    seed = 107
    d = build_report(engine, insert_campaign(engine, trials, seed=seed))["paired_differences"]["verified_success"]
    assert d["estimate"] == pytest.approx(0.1)
    assert d["tasks"] == 10 and d["pairs"] == 49

    task_means = np.array([1.0] + [0.0] * 9)  # the report orders tasks by name: "big" first
    half = 2.2621571627982 * task_means.std(ddof=1) / np.sqrt(10)  # t(0.975, 9 df)
    assert (d["ci_low"], d["ci_high"]) == pytest.approx((0.1 - half, 0.1 + half))
    low, high = np.quantile(stats.bootstrap_means(task_means, seed), [0.025, 0.975])
    boot = d["bootstrap_percentile_95"]
    assert (boot["ci_low"], boot["ci_high"]) == pytest.approx((low, high))
    # Nine agreeing tasks and one that won every pair: no evidence of an effect by either.
    assert d["sign_flip_p"] == pytest.approx(1.0)

    pair_diffs = np.array([1.0] * 40 + [0.0] * 9)
    rng = stats.generator(seed)
    attempt_level = pair_diffs[rng.integers(0, len(pair_diffs), size=(stats.RESAMPLES, len(pair_diffs)))].mean(axis=1)
    a_low, a_high = np.quantile(attempt_level, [0.025, 0.975])
    assert d["ci_high"] < a_low and boot["ci_high"] < a_low  # visibly different: the intervals do not even overlap
    assert a_high <= 1.0


def test_report_interval_is_reproducible_per_seed_and_changes_with_it(engine):
    def trials():
        out = []
        for i in range(12):
            for rep in (1, 2):
                out += [
                    {"task": f"t{i:02d}", "repetition": rep, "variant": "baseline", "attempt": {"verified_pass": (i + rep) % 3 == 0, "wall_seconds": 100.0 + i}},
                    {"task": f"t{i:02d}", "repetition": rep, "variant": "coding", "attempt": {"verified_pass": (i * rep) % 2 == 0, "wall_seconds": 90.0 + 2 * i}},
                ]
        return out

    first = build_report(engine, insert_campaign(engine, trials(), seed=11))["paired_differences"]
    again = build_report(engine, insert_campaign(engine, trials(), seed=11))["paired_differences"]
    other = build_report(engine, insert_campaign(engine, trials(), seed=12))["paired_differences"]
    assert first == again
    assert first["bootstrap"]["seed"] == 11 and first["bootstrap"]["resamples"] == 2000
    assert first["verified_success"]["estimate"] == other["verified_success"]["estimate"]
    # The headline draws nothing, so the seed cannot move it; the spec's bootstrap is seeded.
    assert (first["verified_success"]["ci_low"], first["verified_success"]["ci_high"]) == (other["verified_success"]["ci_low"], other["verified_success"]["ci_high"])
    boot, boot_other = first["verified_success"]["bootstrap_percentile_95"], other["verified_success"]["bootstrap_percentile_95"]
    assert (boot["ci_low"], boot["ci_high"]) != (boot_other["ci_low"], boot_other["ci_high"])
    assert first["exploratory"] is False


def test_cluster_order_and_interval_do_not_depend_on_the_database_collation(engine, postgres_admin_url):
    """The same store gives the same per-task order and interval on SQLite and on a
    PostgreSQL database with a linguistic (ICU) collation.

    The bootstrap draws cluster indices, so the clusters' order is part of the
    computation; a text ORDER BY follows the database's collation ("Beta" sorts
    before "alpha" in binary order, after it in en-US), which must not move the
    interval of the same data.
    """
    import uuid

    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    from campaign.store.engine import make_engine, resolve_url
    from campaign.store.migrate import upgrade_engine

    names = ["Zeta", "alpha", "Beta", "gamma", "a-1", "a1", "Delta", "eta"]
    trials = []
    for i, name in enumerate(names):
        for rep in range(1, i + 2):
            trials += [
                {"task": name, "repetition": rep, "variant": "baseline", "attempt": {"verified_pass": rep % 2 == 0, "wall_seconds": 50.0 + 3 * i}},
                {"task": name, "repetition": rep, "variant": "coding", "attempt": {"verified_pass": rep % 3 != 0, "wall_seconds": 40.0 + 7 * i * i}},
            ]
    db = f"campaign_icu_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE \"{db}\" TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")
    pg = make_engine(resolve_url(make_url(postgres_admin_url).set(database=db).render_as_string(hide_password=False)))
    try:
        upgrade_engine(pg)
        on_pg = build_report(pg, insert_campaign(pg, trials, seed=5))["paired_differences"]
    finally:
        pg.dispose()
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        admin.dispose()
    on_sqlite = build_report(engine, insert_campaign(engine, trials, seed=5))["paired_differences"]
    assert [t["task"] for t in on_pg["per_task"]] == [t["task"] for t in on_sqlite["per_task"]] == sorted(names)
    for metric in ("verified_success", "wall_seconds"):
        assert (on_pg[metric]["ci_low"], on_pg[metric]["ci_high"]) == pytest.approx((on_sqlite[metric]["ci_low"], on_sqlite[metric]["ci_high"]))


def test_a_wall_comparison_over_few_task_clusters_is_exploratory(engine):
    """Twelve tasks have complete pairs, but wall times are known for three of them:
    the wall interval rests on three clusters and must be labelled exploratory."""
    trials = []
    for i in range(12):
        for rep in (1, 2):
            for variant in ("baseline", "coding"):
                wall = (100.0 + i + rep + (7 * i if variant == "coding" else 0)) if i < 3 else None
                trials.append({"task": f"t{i:02d}", "repetition": rep, "variant": variant, "attempt": {"verified_pass": (i + rep) % 2 == 0, "wall_seconds": wall}})
    report = build_report(engine, insert_campaign(engine, trials))
    pd = report["paired_differences"]
    assert pd["verified_success"]["tasks"] == 12 and pd["wall_seconds"]["tasks"] == 3
    assert pd["wall_seconds"]["ci_low"] is not None
    assert pd["exploratory"] is True
    # The decision still rests on the verified-success comparison alone.
    assert report["decision"]["basis"] != "exploratory_task_sample"
    # And the banner says which comparison is exploratory, not that the whole sample is.
    text = render_markdown(report)
    assert "**Exploratory (wall seconds):** the wall-time comparison rests on 3 task clusters, fewer than 10" in text
    assert "verified success rests on 12." in text and "fewer than 10 task clusters;" not in text


def _one_pair_per_task(tasks: int, coding_passes, baseline_passes) -> list[dict]:
    return [
        {"task": f"t{i:02d}", "repetition": 1, "variant": variant, "attempt": {"verified_pass": passes(i), "wall_seconds": 100.0}}
        for i in range(tasks)
        for variant, passes in (("baseline", baseline_passes), ("coding", coding_passes))
    ]


def test_a_regression_over_few_task_clusters_is_exploratory_not_a_regression(engine):
    """Two tasks where coding fails what baseline passes: an interval of [-1, -1] from two
    clusters is no evidence of a regression (found by an audit: 10.6% of no-effect runs at
    two tasks read as regressions, against 2.5% for a one-sided 95% bound)."""
    report = build_report(engine, insert_campaign(engine, _one_pair_per_task(2, lambda i: False, lambda i: True)))
    assert report["decision"]["basis"] == "exploratory_task_sample"
    success = report["paired_differences"]["verified_success"]
    # Two pairs alike bound little: the interval reaches past zero (two pairs could hide 84%).
    assert success["interval_reason"] == "no_spread_bounded" and success["ci_low"] == -1.0
    assert success["ci_high"] == pytest.approx(-1 + 2 * (1 - 0.025**0.5)) and success["ci_high"] > 0
    assert success["bootstrap_percentile_95"]["interval_reason"] == "no_spread_between_tasks"
    assert success["sign_flip_p"] == 0.5  # two tasks: two of the four sign patterns are as extreme


def test_every_task_differing_alike_is_bounded_by_what_its_pairs_could_hide(engine):
    """Twelve tasks, coding passing each where baseline fails. The bootstrap's interval was
    [+1, +1] (zero width: certainty twelve pairs cannot give), and then no interval at all.
    The headline says what twelve pairs can: at 95%, up to 26% of pairs like these could
    go otherwise unseen, so the effect is at least 1 - 2 x 0.264; and the sign-flip test
    agrees (one pattern in 4,096 is as extreme)."""
    report = build_report(engine, insert_campaign(engine, _one_pair_per_task(12, lambda i: True, lambda i: False)))
    success = report["paired_differences"]["verified_success"]
    unseen = 1 - 0.025 ** (1 / 12)
    assert (success["estimate"], success["ci_high"], success["interval_reason"]) == (1.0, 1.0, "no_spread_bounded")
    assert success["ci_low"] == pytest.approx(1 - 2 * unseen)
    assert success["bootstrap_percentile_95"] == {"ci_low": None, "ci_high": None, "interval_reason": "no_spread_between_tasks"}
    assert success["sign_flip_p"] == pytest.approx(2 / 4096)
    # Equal wall times: no spread anywhere and no bound for seconds, so no interval.
    assert report["paired_differences"]["wall_seconds"]["interval_reason"] == "no_spread_between_tasks"
    assert report["decision"]["basis"] == "measured_benefit_requires_review"
    text = render_markdown(report)
    assert f"| verified success (rate) | +1.000 | [{1 - 2 * unseen:+.3f}, +1.000] | null (no_spread_between_tasks) | 0.000 | 12 | 12 |" in text
    assert "The verified success interval: every pair's difference is the same, so the interval is the share of pairs that could differ unseen" in text
    assert "disagree: the t interval excludes zero and the bootstrap does not; the report reads the t interval." in text


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 40), st.integers(1, 5), st.integers(1, 8), st.integers(0, 2**63))
@example(40, 3, 6, 81_149_004_513)  # the task means' variance and the floor tie, one bit apart
def test_many_campaigns_at_once_get_the_interval_each_would_get_alone(n_clusters, pairs, sets, seed):
    # The planner's batched form (t_intervals over task means with each campaign's floor)
    # is paired_interval, campaign by campaign; a campaign with no spread anywhere has no
    # interval there (a report bounds it by its pair count instead).
    draws = np.random.default_rng(seed % 1000).integers(-1, 2, size=(sets, n_clusters, pairs)).astype(np.float64)
    draws[0] = 0.0
    means = draws.mean(axis=2).T
    squares = ((draws - draws.mean(axis=2, keepdims=True)) ** 2).sum(axis=(1, 2))
    df = np.full(sets, n_clusters * (pairs - 1))
    within = stats.Within(np.where(df > 0, squares / np.maximum(df, 1), 0.0) / pairs, df)
    low, high = stats.t_intervals(means, within=within, bounds=(-1.0, 1.0))
    for j in range(sets):
        alone = stats.paired_interval(list(draws[j]), seed, bounds=(-1.0, 1.0))
        if alone.interval_reason in ("no_spread_bounded", "no_spread_between_tasks"):
            assert np.isnan(low[j]) and np.isnan(high[j])
            continue
        assert low[j] == pytest.approx(alone.ci_low, abs=1e-12) and high[j] == pytest.approx(alone.ci_high, abs=1e-12)
