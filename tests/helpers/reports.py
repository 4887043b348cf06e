"""Comparing reports: what an interruption, a kill or a continuation must not change."""

from __future__ import annotations

# Timing, ids, run order, the interrupted attempts' own traces (their rows, their spend),
# and how the results are spread over a continuation lineage (carried trials).
VOLATILE = ("wall", "seconds", "_at", "elapsed", "generated", "store", "campaign_id", "attempt_id", "attempt_seq",
            "interrupted", "spend", "cost", "attempts_by_status", "integrity", "carried")  # fmt: skip


def results_only(report: dict) -> dict:
    """The report without what may differ between an uninterrupted run and one that was
    stopped, killed or continued: every verdict, pair and estimate stays."""

    def strip(value, key=""):
        if isinstance(value, dict):
            return {k: strip(v, k) for k, v in value.items() if not any(word in k for word in VOLATILE) and not (key == "campaign" and k == "id")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(report)
