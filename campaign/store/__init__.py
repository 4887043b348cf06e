"""The relational store: models, engine factory, migrations and the repository."""

# The store's file name inside a campaign's --output-dir.
STORE_NAME = "campaign.db"
# The largest integer either backend stores (SQLite's INTEGER, PostgreSQL's BIGINT): a
# larger number is no row id or seed, and would reach the driver as an OverflowError.
# Here, not in base.py, so a command's option types need no SQLAlchemy to parse.
MAX_INTEGER = 2**63 - 1
