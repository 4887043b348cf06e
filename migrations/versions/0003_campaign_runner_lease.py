"""campaign runner lease: the birth-bound identity of the runner holding a campaign

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 11:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("campaigns") as batch_op:
        batch_op.add_column(sa.Column("runner_pid", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("runner_start_ticks", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True))
        batch_op.add_column(sa.Column("runner_boot_id", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("campaigns") as batch_op:
        batch_op.drop_column("runner_boot_id")
        batch_op.drop_column("runner_start_ticks")
        batch_op.drop_column("runner_pid")
