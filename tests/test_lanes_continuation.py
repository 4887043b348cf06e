"""The way forward after a kill: which blockers there are, and the evidence each one keeps."""

from __future__ import annotations

import os

from campaign.lanes import continuation
from campaign.store import repository


def killed(engine, make_attempt, root: str | None, task: str = "task-a") -> int:
    """An attempt whose runner was killed: recovery proved it clean, finalization never ran."""
    attempt_id, trial = make_attempt(task)
    repository.update_attempt(engine, attempt_id, private_root=root)
    repository.finish_attempt(
        engine, attempt_id, trial.id, status="interrupted", outcome="interrupted", cleanup_complete=True,
        teardown_outcome="recovered", disposal_complete=False, finalization_failed=True,
    )  # fmt: skip
    return attempt_id


def test_a_root_still_there_is_named_with_how_to_inspect_and_remove_it(engine, make_attempt, tmp_path):
    root = tmp_path / "campaign-paired-runtime-x1"
    root.mkdir(mode=0o700)
    attempt_id = killed(engine, make_attempt, str(root))
    campaign_id = repository.get_attempt(engine, attempt_id).campaign_id
    (blocker,) = continuation.blockers(engine, campaign_id)
    assert blocker.facts == ("finalization_failed", "disposal_failed") and blocker.proven_gone
    text = continuation.CampaignBlocked(campaign_id, "finalization_failed", [blocker], carried=0, db="db", reports=[]).describe()
    assert f"attempt {attempt_id} kept {root}: inspect it (ls -la), then remove it (rm -rf) once you no longer need it: a client killed there may have left its credential in it" in text
    notice = continuation.continued(campaign_id, "finalization_failed", [blocker], carried=3)
    assert "continuing the experiment in a new campaign that carries over its 3 finished, verified trials" in notice
    assert notice.count(f"kept {root}") == 1


def test_a_root_that_is_gone_or_replaced_by_a_link_is_never_claimed_as_kept(engine, make_attempt, tmp_path):
    # The killed runner disposed of it before it could record that; or someone swapped it.
    gone = killed(engine, make_attempt, str(tmp_path / "campaign-paired-runtime-gone"), "task-a")
    os.symlink(tmp_path, tmp_path / "campaign-paired-runtime-link")
    linked = killed(engine, make_attempt, str(tmp_path / "campaign-paired-runtime-link"), "task-b")
    for attempt_id in (gone, linked):
        campaign_id = repository.get_attempt(engine, attempt_id).campaign_id
        (blocker,) = continuation.blockers(engine, campaign_id)
        assert blocker.private_root is None and blocker.kept_line() is None
        text = continuation.CampaignBlocked(campaign_id, "finalization_failed", [blocker], carried=0, db="db", reports=[]).describe()
        assert " kept " not in text
