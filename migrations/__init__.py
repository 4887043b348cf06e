"""Alembic migrations; installed as ``campaign.migrations``."""
