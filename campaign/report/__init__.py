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

import importlib
from typing import Any

# Imported on first use (PEP 562): a module that needs one small part of the report
# (``report.outputs``, to check where a report goes) must not pay for the builder and numpy.
_HOMES = {
    "Written": "export", "check_allowlisted": "export", "export_report": "export", "render": "export", "write_report": "export",
    "Integrity": "integrity", "UnverifiedStore": "integrity", "check_integrity": "integrity",
    "PlanOnlyArtifact": "build", "build_report": "build", "is_plan_only": "build", "resolve_campaign": "build",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'campaign.report' has no attribute {name!r}")
    module = importlib.import_module(f"campaign.report.{_HOMES[name]}")
    return getattr(module, "check" if name == "check_integrity" else name)


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
