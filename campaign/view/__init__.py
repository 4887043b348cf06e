"""`campaign view`: a local, read-only web page to follow and read campaigns.

The store is opened read-only (SQLite ``mode=ro`` plus ``query_only``; a
PostgreSQL session whose transactions default to read-only), so the page can
never change what it shows. Every figure on a campaign page comes from the
sanitized report dictionary that ``campaign.report.build_report`` returns (the
sharing allowlist), the campaigns list shows only allowlisted enum values and
counts, and every value is HTML-escaped: the page may show only what a shared
report may show.

Modules: ``source`` (what is read from the store), ``model`` (page values
derived from the sanitized report), ``pages`` (HTML), ``app`` (the aiohttp
routes), ``serve`` (bind, announce, serve until a signal).
"""

from campaign.view.serve import ViewOptions, check_host, serve

__all__ = ["ViewOptions", "check_host", "serve"]
