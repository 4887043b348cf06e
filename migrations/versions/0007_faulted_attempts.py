"""an attempt the provider or the engine ended is faulted: no verdict, its trial runs again

``attempts.status`` gains ``faulted``: an attempt whose end the recording proxy
attributes to the provider (HTTP 429/5xx, a refused or reset connection, a cut
stream, a silent upstream) or that the engine's own failure ended. Like an
interrupted attempt it keeps its row, spend and teardown outcome, carries no
verdict, and its trial goes back to the queue.

``provider_leases.halted_note``: when a run's circuit breaker halts a provider
(``halted_reason = 'provider_unavailable'``: its upstream refused connections,
or attempts in a row ended on its faults), what the wire saw, in the engine's
words, so every worker and the coordinator can say it; a resume reopens it.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 16:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_BEFORE = "status IN ('running', 'finished', 'interrupted')"
_AFTER = "status IN ('running', 'finished', 'interrupted', 'faulted')"


def upgrade() -> None:
    with op.batch_alter_table("attempts", recreate="auto") as batch_op:
        batch_op.drop_constraint(op.f("ck_attempts_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_attempts_status"), _AFTER)
    with op.batch_alter_table("provider_leases", recreate="auto") as batch_op:
        batch_op.add_column(sa.Column("halted_note", sa.Text(), nullable=True))


def downgrade() -> None:
    bind = op.get_bind()
    if bind.execute(sa.text("SELECT count(*) FROM attempts WHERE status = 'faulted'")).scalar_one():
        raise RuntimeError("this store holds faulted attempts; downgrading past 0007 would break their rows")
    with op.batch_alter_table("provider_leases", recreate="auto") as batch_op:
        batch_op.drop_column("halted_note")
    with op.batch_alter_table("attempts", recreate="auto") as batch_op:
        batch_op.drop_constraint(op.f("ck_attempts_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_attempts_status"), _BEFORE)
