"""initial schema

Revision ID: 0001
Revises: 
Create Date: 2026-11-30 10:15:16.386684
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table('campaigns',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('kind', sa.String(length=64), nullable=False),
    sa.Column('state', sa.String(length=64), nullable=False),
    sa.Column('live', sa.Boolean(), nullable=False),
    sa.Column('stop_reason', sa.String(length=64), nullable=True),
    sa.Column('agent', sa.String(length=128), nullable=False),
    sa.Column('seed', sa.Integer(), nullable=False),
    sa.Column('experiment_json', sa.Text(), nullable=False),
    sa.Column('experiment_digest', sa.String(length=64), nullable=False),
    sa.Column('plan_digest', sa.String(length=64), nullable=True),
    sa.Column('approved_plan_digest', sa.String(length=64), nullable=True),
    sa.Column('scheduled_count', sa.Integer(), nullable=False),
    sa.Column('completion_json', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('deadline_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("kind IN ('paired', 'campaign', 'nonpaired')", name=op.f('ck_campaigns_kind')),
    sa.CheckConstraint("state IN ('planned', 'running', 'stopped', 'completed', 'interrupted')", name=op.f('ck_campaigns_state')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_campaigns'))
    )
    op.create_table('trials',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('pair_id', sa.String(length=128), nullable=False),
    sa.Column('trial_id', sa.String(length=128), nullable=False),
    sa.Column('provider', sa.String(length=64), nullable=False),
    sa.Column('model', sa.String(length=128), nullable=False),
    sa.Column('task', sa.String(length=128), nullable=False),
    sa.Column('variant', sa.String(length=64), nullable=False),
    sa.Column('repetition', sa.Integer(), nullable=False),
    sa.Column('pair_order', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=64), nullable=False),
    sa.Column('not_attempted_reason', sa.String(length=64), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("status IN ('scheduled', 'admitted', 'finished', 'not_attempted')", name=op.f('ck_trials_status')),
    sa.CheckConstraint('repetition >= 1', name=op.f('ck_trials_repetition_positive')),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_trials_campaign_id_campaigns')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_trials')),
    sa.UniqueConstraint('campaign_id', 'position', name=op.f('uq_trials_campaign_id_position')),
    sa.UniqueConstraint('campaign_id', 'trial_id', name=op.f('uq_trials_campaign_id_trial_id'))
    )
    with op.batch_alter_table('trials', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_trials_campaign_id'), ['campaign_id'], unique=False)

    op.create_table('attempts',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('trial_pk', sa.Integer(), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=64), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('outcome', sa.String(length=64), nullable=True),
    sa.Column('failure_class', sa.String(length=64), nullable=True),
    sa.Column('verified_pass', sa.Boolean(), nullable=True),
    sa.Column('verifier_exit_code', sa.Integer(), nullable=True),
    sa.Column('wall_seconds', sa.Float(), nullable=True),
    sa.Column('completed_turns', sa.Integer(), nullable=True),
    sa.Column('uncached_input_tokens', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('cached_input_tokens', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('cache_write_tokens', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('output_tokens', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('tool_calls', sa.Integer(), nullable=True),
    sa.Column('tool_errors', sa.Integer(), nullable=True),
    sa.Column('diagnostic_events_version', sa.Integer(), nullable=True),
    sa.Column('discovery_failures', sa.Integer(), nullable=True),
    sa.Column('incorrect_tool_calls', sa.Integer(), nullable=True),
    sa.Column('cost_usd', sa.Float(), nullable=True),
    sa.Column('cost_reported', sa.Boolean(), nullable=True),
    sa.Column('equivalent_spend_usd', sa.Float(), nullable=True),
    sa.Column('spend_complete', sa.Boolean(), nullable=True),
    sa.Column('flush_complete', sa.Boolean(), nullable=True),
    sa.Column('cleanup_complete', sa.Boolean(), nullable=True),
    sa.Column('disposal_complete', sa.Boolean(), nullable=True),
    sa.Column('finalization_failed', sa.Boolean(), nullable=True),
    sa.Column('teardown_outcome', sa.String(length=64), nullable=True),
    sa.Column('containment', sa.String(length=64), nullable=True),
    sa.Column('config_digest', sa.String(length=64), nullable=True),
    sa.Column('fixture_digest', sa.String(length=64), nullable=True),
    sa.Column('agent_model', sa.String(length=128), nullable=True),
    sa.Column('applied_profiles', sa.Text(), nullable=True),
    sa.Column('schema_diagnostics', sa.Text(), nullable=True),
    sa.Column('private_root', sa.Text(), nullable=True),
    sa.Column('prev_hash', sa.String(length=64), nullable=True),
    sa.Column('row_hash', sa.String(length=64), nullable=True),
    sa.CheckConstraint("status IN ('running', 'finished', 'interrupted')", name=op.f('ck_attempts_status')),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_attempts_campaign_id_campaigns')),
    sa.ForeignKeyConstraint(['trial_pk'], ['trials.id'], name=op.f('fk_attempts_trial_pk_trials')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_attempts')),
    sa.UniqueConstraint('campaign_id', 'seq', name=op.f('uq_attempts_campaign_id_seq')),
    sa.UniqueConstraint('trial_pk', name=op.f('uq_attempts_trial_pk'))
    )
    with op.batch_alter_table('attempts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_attempts_campaign_id'), ['campaign_id'], unique=False)

    op.create_table('ledger',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('attempt_id', sa.Integer(), nullable=False),
    sa.Column('role', sa.String(length=64), nullable=False),
    sa.Column('pid', sa.Integer(), nullable=False),
    sa.Column('start_ticks', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('boot_id', sa.String(length=64), nullable=False),
    sa.Column('pid_ns', sa.String(length=64), nullable=True),
    sa.Column('pgid', sa.Integer(), nullable=True),
    sa.Column('discovered', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('state', sa.String(length=64), nullable=False),
    sa.Column('verification', sa.String(length=64), nullable=True),
    sa.Column('verified_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("role IN ('runtime', 'client', 'verifier', 'fixture', 'descendant')", name=op.f('ck_ledger_role')),
    sa.ForeignKeyConstraint(['attempt_id'], ['attempts.id'], name=op.f('fk_ledger_attempt_id_attempts')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ledger'))
    )
    with op.batch_alter_table('ledger', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_ledger_attempt_id'), ['attempt_id'], unique=False)




def downgrade() -> None:

    with op.batch_alter_table('ledger', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_ledger_attempt_id'))

    op.drop_table('ledger')
    with op.batch_alter_table('attempts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_attempts_campaign_id'))

    op.drop_table('attempts')
    with op.batch_alter_table('trials', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_trials_campaign_id'))

    op.drop_table('trials')
    op.drop_table('campaigns')

