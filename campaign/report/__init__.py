"""Reports: SQL aggregates, the paired comparison over task clusters, the allowlisted schema-v3 JSON, Markdown and a forest plot.

The public entry points::

    build_report(engine, campaign_id) -> dict     # sanitized live_agentic_coding_paired, schema 3
    write_report(engine, campaign_id, output)     # OUTPUT.json + .md + .svg
    export_report(engine, campaign_id, out_dir)   # the sanitized pair for sharing

Every report carries ``integrity``: whether the attempt rows behind it (of the
campaign and the campaigns it continues) pass ``campaign verify``.
``write_report`` and ``export_report`` refuse rows that do not
(``UnverifiedStore``) unless ``allow_unverified=True``.
"""

from campaign.report.export import Written, check_allowlisted, export_report, render, write_report
from campaign.report.integrity import Integrity, UnverifiedStore
from campaign.report.integrity import check as check_integrity
from campaign.report.build import PlanOnlyArtifact, build_report, is_plan_only, resolve_campaign

__all__ = [
    "Integrity",
    "PlanOnlyArtifact",
    "UnverifiedStore",
    "Written",
    "build_report",
    "check_allowlisted",
    "check_integrity",
    "export_report",
    "is_plan_only",
    "render",
    "resolve_campaign",
    "write_report",
]
