"""The trial table of a campaign page: filtered and paged on the server.

Every trial in one page would be a page of 80 MB at 100,000 trials, which no
browser renders in any useful time. So the page shows ``PAGE_ROWS`` rows at a
time, in schedule order; the filters (variant, outcome, provider) are query
parameters applied before paging, so the counts and pages are those of the
matching rows, and a refresh of a running campaign keeps them (they are in the
URL). A filter value the table does not hold is ignored, so the selects and
the rows always agree. Rows come from the sanitized report only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from campaign.view import model
from campaign.view.html import el, flag, fmt, h, text

PAGE_ROWS = 500
# (query parameter, the select's label): each filters on the row attribute of that name.
FILTERS = (("variant", "variants"), ("outcome", "outcomes"), ("provider", "providers"))
TRIAL_HEAD = (
    "#", "pair", "variant", "pair order", "provider", "task", "status", "outcome", "verified",
    "wall s", *(label for _, label in model.TRIAL_COUNTERS), *(label for _, label in model.TRIAL_FLAGS), "reason",
)  # fmt: skip


@dataclass(frozen=True)
class TrialQuery:
    """What the reader asked for: filter values (None: all) and a page number (from 1)."""

    wanted: Mapping[str, str] = field(default_factory=dict)
    page: int = 1

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> TrialQuery:
        """From a request's query; anything unusable is the default (all rows, page 1):
        a page is a position in a table, not an input worth refusing."""
        wanted = {name: params[name] for name, _ in FILTERS if params.get(name)}
        raw = params.get("page", "")
        page = int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 10 else 1
        return cls(wanted, max(page, 1))


ALL = TrialQuery()


@dataclass(frozen=True)
class TrialPage:
    rows: tuple[dict[str, Any], ...]  # this page's rows, each with its ``kind``
    total: int  # every trial of the table
    matching: int  # those the filters keep
    page: int
    pages: int
    first: int  # the 1-based place of the first row shown among the matching ones
    options: Mapping[str, Sequence[str]]  # per filter, the values the table holds
    wanted: Mapping[str, str]  # the filters applied (values the table holds)

    def href(self, page: int) -> str:
        return "?" + urlencode({**self.wanted, **({"page": page} if page > 1 else {})})


def _position(row: Mapping[str, Any]) -> tuple[bool, int]:
    return row["position"] is None, row["position"] or 0


def trial_page(report: Mapping[str, Any], query: TrialQuery = ALL, size: int | None = None) -> TrialPage:
    """The rows of the asked-for page (the last one when asked past it), ``size`` rows a
    page (default ``PAGE_ROWS``). Attempted and not-attempted trials are merged in
    schedule order (by position; a row without one goes last)."""
    size = size or PAGE_ROWS
    attempted, skipped = report["trials"] or [], report["not_attempted_trials"] or []
    # Each list is in schedule order already: the merge is a sort of two runs (linear).
    merged = sorted([*attempted, *skipped], key=_position) if skipped else list(attempted)
    not_attempted = {id(row) for row in skipped}
    # What each filter compares, per row (as the row's data- attribute shows it).
    values = {
        "variant": [row["variant"] or "" for row in merged],
        "provider": [row["provider"] or "" for row in merged],
        "outcome": [("not_attempted" if id(row) in not_attempted else row["outcome"] or "unknown") for row in merged]
        if not_attempted
        else [row["outcome"] or "unknown" for row in merged],
    }
    options = {name: sorted(set(values[name]) - {""}) for name, _ in FILTERS}
    wanted = {name: value for name, value in query.wanted.items() if value in options[name]}
    keep = range(len(merged))
    for name, value in wanted.items():
        column = values[name]
        keep = [i for i in keep if column[i] == value]
    pages = max(1, math.ceil(len(keep) / size))
    page = min(query.page, pages)
    start = (page - 1) * size
    rows = tuple(
        dict(merged[i], kind="not_attempted", outcome="not_attempted") if id(merged[i]) in not_attempted else dict(merged[i], kind="attempted")
        for i in keep[start : start + size]
    )
    return TrialPage(rows, len(merged), len(keep), page, pages, start + 1, options, wanted)


# --- HTML --------------------------------------------------------------------------------


def trial_row(t: Mapping[str, Any]) -> str:
    def cell(value: Any, kind: str = "num", field: str | None = None) -> str:
        if value is None:
            return text("td", "unknown", class_="null", data_field=field)
        return text("td", fmt(value, kind), data_field=field)

    attempted = t["kind"] == "attempted"
    status = t.get("attempt_status") if attempted else t.get("status")
    cells = [
        cell(t["position"]),
        text("td", t["pair_id"] or "unknown"),
        text("td", t["variant"] or "unknown"),
        cell(t["pair_order"]),
        text("td", t["provider"] or "unknown"),
        text("td", t["task"] or "unknown"),
        text("td", status or "unknown"),
        text("td", t["outcome"] or "unknown", data_field="outcome"),
        text("td", flag(t.get("verified_pass")) if attempted else "", class_="null" if attempted and t.get("verified_pass") is None else None),
        cell(t.get("wall_seconds"), "seconds", "wall_seconds") if attempted else text("td", ""),
    ]
    for key, _ in model.TRIAL_COUNTERS:
        cells.append(cell(t.get(key), "usd" if key == "cost_usd" else "num", key) if attempted else text("td", ""))
    for key, _ in model.TRIAL_FLAGS:
        cells.append(text("td", flag(t.get(key)), data_field=key, class_="null" if t.get(key) is None else None) if attempted else text("td", ""))
    cells.append(text("td", model.trial_reason(t) or ""))
    return el(
        "tr",
        "".join(cells),
        data_trial=t["trial_id"],
        data_variant=t["variant"] or "",
        data_outcome=t["outcome"] or "unknown",
        data_provider=t["provider"] or "",
    )


def filter_select(name: str, label: str, values: Iterable[str], chosen: str | None) -> str:
    options = el("option", h(f"all {label}"), value="") + "".join(el("option", h(v), value=v, selected=v == chosen) for v in values)
    return el("label", h(label.rstrip("s") + " ") + el("select", options, id=f"filter-{name}", data_filter=name))


def count_line(p: TrialPage) -> str:
    if p.pages == 1:
        return f"{p.matching} of {p.total} trials shown"
    last = p.first + len(p.rows) - 1
    return f"{p.matching} of {p.total} trials match; rows {p.first}–{last} shown (page {p.page} of {p.pages})"


def pager(p: TrialPage) -> str:
    if p.pages == 1:
        return ""
    steps = (("first", 1), ("previous", p.page - 1), ("next", p.page + 1), ("last", p.pages))
    links = [
        el("a", h(label), href=p.href(target), rel={"previous": "prev", "next": "next"}.get(label))
        if 1 <= target <= p.pages and target != p.page
        else text("span", label, class_="muted")
        for label, target in steps
    ]
    return el("nav", " ".join(links), class_="pager", aria_label="trial pages")


def section(p: TrialPage) -> str:
    filters = el(
        "div",
        "".join(filter_select(name, label, p.options[name], p.wanted.get(name)) for name, label in FILTERS)
        + el("span", h(count_line(p)), id="trial-count", data_total=p.total, data_matching=p.matching),
        class_="filters",
    )
    head = "".join(text("th", c) for c in TRIAL_HEAD)
    table = el("table", el("thead", el("tr", head)) + el("tbody", "".join(trial_row(t) for t in p.rows)), id="trials", class_="trials")
    pages = pager(p)
    return el("section", text("h2", "Trials in schedule order") + filters + pages + el("div", table, class_="scroll") + pages)


__all__ = ["ALL", "FILTERS", "PAGE_ROWS", "TrialPage", "TrialQuery", "section", "trial_page", "trial_row"]
