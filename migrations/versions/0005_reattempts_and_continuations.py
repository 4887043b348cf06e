"""an interrupted trial may get a fresh attempt; a blocked campaign may be continued

An attempt interrupted on request keeps its row (spend, teardown outcome, no
verdict) and its trial goes back to the queue, so one trial may now own
several attempt rows: the unique key on ``attempts.trial_pk`` becomes a plain
index. A campaign that finalization blocked can be continued in a new campaign
(``campaigns.continues_campaign_id``) whose trials point at the finished,
verified trials they carry over (``trials.carried_from_trial_pk``) instead of
copying or editing their rows. ``campaigns.spend_limits_json`` records the spend
limits a run was held to, so a reader (``campaign view``) can show spend against them.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 06:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("attempts", recreate="auto") as batch_op:
        batch_op.drop_constraint(op.f("uq_attempts_trial_pk"), type_="unique")
        batch_op.create_index(op.f("ix_attempts_trial_pk"), ["trial_pk"], unique=False)
    with op.batch_alter_table("trials", recreate="auto") as batch_op:
        batch_op.add_column(sa.Column("carried_from_trial_pk", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(op.f("fk_trials_carried_from_trial_pk_trials"), "trials", ["carried_from_trial_pk"], ["id"])
    with op.batch_alter_table("campaigns", recreate="auto") as batch_op:
        batch_op.add_column(sa.Column("continues_campaign_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("spend_limits_json", sa.Text(), nullable=True))
        batch_op.create_foreign_key(op.f("fk_campaigns_continues_campaign_id_campaigns"), "campaigns", ["continues_campaign_id"], ["id"])


def downgrade() -> None:
    # A store holding re-attempts or continuations cannot go back without losing rows.
    bind = op.get_bind()
    reattempted = bind.execute(sa.text("SELECT count(*) FROM (SELECT trial_pk FROM attempts GROUP BY trial_pk HAVING count(*) > 1) AS t")).scalar_one()
    continued = bind.execute(sa.text("SELECT count(*) FROM campaigns WHERE continues_campaign_id IS NOT NULL")).scalar_one()
    if reattempted or continued:
        raise RuntimeError("this store holds re-attempted trials or continued campaigns; downgrading past 0005 would lose them")
    with op.batch_alter_table("campaigns", recreate="auto") as batch_op:
        batch_op.drop_constraint(op.f("fk_campaigns_continues_campaign_id_campaigns"), type_="foreignkey")
        batch_op.drop_column("continues_campaign_id")
        batch_op.drop_column("spend_limits_json")
    with op.batch_alter_table("trials", recreate="auto") as batch_op:
        batch_op.drop_constraint(op.f("fk_trials_carried_from_trial_pk_trials"), type_="foreignkey")
        batch_op.drop_column("carried_from_trial_pk")
    with op.batch_alter_table("attempts", recreate="auto") as batch_op:
        batch_op.drop_index(op.f("ix_attempts_trial_pk"))
        batch_op.create_unique_constraint(op.f("uq_attempts_trial_pk"), ["trial_pk"])
