"""index trials by (campaign_id, status) for admission and resume

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 10:40:00
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("trials") as batch_op:
        batch_op.create_index("ix_trials_campaign_id_status", ["campaign_id", "status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("trials") as batch_op:
        batch_op.drop_index("ix_trials_campaign_id_status")
