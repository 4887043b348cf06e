"""Alembic environment. The engine is handed in by campaign.store.migrate."""

from __future__ import annotations

from alembic import context

from campaign.store.base import Base
from campaign.store import models  # noqa: F401  (registers the tables)

target_metadata = Base.metadata


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:
        # Bare `alembic revision --autogenerate` from a developer checkout.
        from campaign.store.engine import make_engine, resolve_url

        engine = make_engine(resolve_url(context.config.get_main_option("sqlalchemy.url")))
        with engine.connect() as conn:
            context.config.attributes["connection"] = conn
            run_migrations_online()
        return
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("offline (SQL script) migrations are not supported")
run_migrations_online()
