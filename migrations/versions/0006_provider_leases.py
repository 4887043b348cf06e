"""workers: provider leases with database-clock heartbeats, and spend reservations

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 07:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

# Self-contained: the types as the models declare them (a later model change must not rewrite history).
BigInt = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "provider_leases",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("worker_host", sa.String(length=128), nullable=True),
        sa.Column("worker_pid", sa.Integer(), nullable=True),
        sa.Column("worker_start_ticks", BigInt, nullable=True),
        sa.Column("worker_boot_id", sa.String(length=64), nullable=True),
        sa.Column("heartbeat_epoch", sa.Float(), nullable=True),
        sa.Column("halted_reason", sa.String(length=64), nullable=True),
        sa.Column("halted_attempt_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["campaign_id"], ["campaigns.id"], name=op.f("fk_provider_leases_campaign_id_campaigns")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_provider_leases")),
        sa.UniqueConstraint("campaign_id", "provider", name=op.f("uq_provider_leases_campaign_id_provider")),
    )
    op.create_table(
        "spend_reservations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("trial_pk", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("nano_usd", BigInt, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["campaign_id"], ["campaigns.id"], name=op.f("fk_spend_reservations_campaign_id_campaigns")),
        sa.ForeignKeyConstraint(["trial_pk"], ["trials.id"], name=op.f("fk_spend_reservations_trial_pk_trials")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_spend_reservations")),
        sa.UniqueConstraint("trial_pk", name=op.f("uq_spend_reservations_trial_pk")),
    )
    op.create_index(op.f("ix_spend_reservations_campaign_id"), "spend_reservations", ["campaign_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_spend_reservations_campaign_id"), table_name="spend_reservations")
    op.drop_table("spend_reservations")
    op.drop_table("provider_leases")
