"""ledger roles for the wire layer: the recording proxy and the replay provider

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 04:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_OLD = "role IN ('runtime', 'client', 'verifier', 'fixture', 'descendant')"
_NEW = "role IN ('runtime', 'client', 'verifier', 'fixture', 'descendant', 'profiler', 'provider')"


def _replace_check(sqltext: str) -> None:
    # SQLite cannot alter a CHECK in place: batch mode copies the table with the new one.
    with op.batch_alter_table("ledger", recreate="auto") as batch_op:
        batch_op.drop_constraint(op.f("ck_ledger_role"), type_="check")
        batch_op.create_check_constraint(op.f("ck_ledger_role"), sa.text(sqltext))


def upgrade() -> None:
    _replace_check(_NEW)


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM ledger WHERE role IN ('profiler', 'provider')"))
    _replace_check(_OLD)
