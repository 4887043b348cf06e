"""Reports: SQL aggregates, the task-cluster bootstrap, the allowlisted schema-v3 JSON, Markdown and a forest plot.

The public entry points::

    build_report(engine, campaign_id) -> dict     # sanitized live_agentic_coding_paired, schema 3
    write_report(engine, campaign_id, output)     # OUTPUT.json + .md + .svg
    export_report(engine, campaign_id, out_dir)   # the sanitized pair for sharing
"""

from campaign.report.export import Written, check_allowlisted, export_report, render, write_report
from campaign.report.live import PlanOnlyArtifact, build_report, is_plan_only, resolve_campaign

__all__ = [
    "PlanOnlyArtifact",
    "Written",
    "build_report",
    "check_allowlisted",
    "export_report",
    "is_plan_only",
    "render",
    "resolve_campaign",
    "write_report",
]
