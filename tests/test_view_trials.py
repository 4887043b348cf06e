"""The view's trial table (``campaign.view.trials``): merged in schedule order, filtered, then paged."""

from __future__ import annotations

import pytest

from campaign.view.trials import TrialQuery, trial_page


def _report(attempted: list[tuple[int | None, str, str]], skipped: list[tuple[int | None, str]]) -> dict:
    trials = [{"trial_id": f"a{pos}", "position": pos, "variant": variant, "provider": "p", "outcome": outcome} for pos, variant, outcome in attempted]
    rest = [{"trial_id": f"s{pos}", "position": pos, "variant": variant, "provider": "q", "status": "not_attempted"} for pos, variant in skipped]
    return {"trials": trials, "not_attempted_trials": rest}


REPORT = _report(
    [(0, "baseline", "passed"), (1, "coding", "failed"), (3, "coding", "passed"), (None, "baseline", None)],
    [(2, "baseline"), (4, "coding")],
)


def test_rows_merge_in_schedule_order_with_unknown_positions_last():
    page = trial_page(REPORT, TrialQuery(), size=10)
    assert [r["trial_id"] for r in page.rows] == ["a0", "a1", "s2", "a3", "s4", "aNone"]
    assert [r["kind"] for r in page.rows] == ["attempted", "attempted", "not_attempted", "attempted", "not_attempted", "attempted"]
    assert page.rows[2]["outcome"] == "not_attempted"
    assert page.options == {"variant": ["baseline", "coding"], "outcome": ["failed", "not_attempted", "passed", "unknown"], "provider": ["p", "q"]}
    # The report's rows are not changed by the page.
    assert "kind" not in REPORT["trials"][0] and "outcome" not in REPORT["not_attempted_trials"][0]


def test_filters_apply_before_paging_and_together():
    page = trial_page(REPORT, TrialQuery({"variant": "coding"}, page=2), size=2)
    assert (page.matching, page.pages, page.page, page.first) == (3, 2, 2, 3)
    assert [r["trial_id"] for r in page.rows] == ["s4"]
    both = trial_page(REPORT, TrialQuery({"variant": "coding", "outcome": "passed"}), size=2)
    assert [r["trial_id"] for r in both.rows] == ["a3"] and both.href(2) == "?variant=coding&outcome=passed&page=2"


@pytest.mark.parametrize(
    ("params", "wanted", "page"),
    [
        ({}, {}, 1),
        ({"page": "3", "variant": "coding"}, {"variant": "coding"}, 3),
        ({"page": "0"}, {}, 1),
        ({"page": "-2"}, {}, 1),
        ({"page": "x"}, {}, 1),
        ({"page": "٣"}, {}, 1),  # a digit, but not an ASCII one
        ({"page": "9" * 30}, {}, 1),
        ({"outcome": "", "provider": "p", "other": "x"}, {"provider": "p"}, 1),
    ],
)
def test_a_query_is_read_leniently(params, wanted, page):
    query = TrialQuery.parse(params)
    assert (dict(query.wanted), query.page) == (wanted, page)


def test_a_value_the_table_does_not_hold_is_ignored_and_a_page_past_the_end_is_the_last():
    page = trial_page(REPORT, TrialQuery({"variant": "<b>x</b>"}, page=50), size=4)
    assert page.wanted == {} and page.matching == 6 and (page.page, page.pages) == (2, 2)
    empty = trial_page({"trials": [], "not_attempted_trials": None}, TrialQuery(), size=4)
    assert (empty.rows, empty.total, empty.pages, empty.first) == ((), 0, 1, 1)
