"""A real client solves a task that ships its image, inside the task's own container.

Claude Code (and opencode) runs from its installation on this machine (mounted read-only), talks to the
recording proxy on the container's loopback (the container has no other network), and the
proxy forwards to the replay provider on the host. The evidence is the host task's: the
task's own verifier passes in the container, each variant's fingerprint is the one the
probe bound, the wire counters equal the replay's script, cleanup is proven, and the
runtime keeps nothing. Real podman, the base image scripts/test.sh made, the client
scripts/install_clients.sh installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from campaign import benchmark, containers
from helpers.clients import clients_path, env_with_clients, require, rows
from helpers.containers import base_image, kept_containers
from test_clients_e2e import CLIENTS, scripted
from test_containers import harbor_image_task

# The clients whose profiles say where their installation is (container_install): each is
# one executable that needs only the C library, so it runs in any glibc image. opencode
# also reads its settings and its seeded plugin from the attempt's HOME.
CONTAINER_CLIENTS = ["claude-code", "opencode"]
STEPS = 'RUN printf "1 2 3\\n" > /app/numbers.txt\n'


@pytest.fixture(scope="module")
def image_suite(tmp_path_factory):
    # Built once for both clients; each test only reads it.
    runtime, base = base_image()
    task = harbor_image_task(tmp_path_factory.mktemp("tasks"), base, STEPS)
    (task / "environment" / "nonce.txt").write_text(str(task))  # a tag of this test's own
    yield runtime, task.parent
    for found in benchmark.load_suite(task.parent).tasks:
        try:
            containers.remove_image(runtime, containers.image_tag(found.name, found.image_context))
        except containers.ContainerProblem:
            pass


@pytest.mark.parametrize("client", CONTAINER_CLIENTS)
def test_a_real_client_solves_an_image_task_inside_its_container_through_the_replay(client, image_suite, tmp_path, tokenizer_cache):
    runtime, suite = image_suite
    env = env_with_clients(tokenizer_cache)
    require(client, env)
    # The machine's own tools first (the verifier runs in the container; the probe's on the host).
    env["PATH"] = os.environ.get("PATH", "") + os.pathsep + clients_path()
    out = tmp_path / "out"
    runner_tmp = tmp_path / "runner-tmp"
    runner_tmp.mkdir()
    args = ["coding", "--campaign", "--providers", "replay", "--agent", client, "--model", CLIENTS[client][2], "--task-suite", str(suite),
            "--repetitions", "1", "--live", "--output-dir", str(out), "--failure-dir", str(tmp_path / "failures")]  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "campaign", *args], capture_output=True, text=True, env={**env, "TMPDIR": str(runner_tmp)}, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    db = out / "campaign.db"
    (experiment,) = rows(db, "SELECT experiment_json FROM campaigns")
    provider = json.loads(experiment["experiment_json"])["providers"][0]
    attempts = rows(db, "SELECT t.task, t.variant, a.* FROM attempts a JOIN trials t ON t.id = a.trial_pk ORDER BY a.seq")
    assert len(attempts) == 2
    for a in attempts:
        where = f"{a['variant']}: {a['outcome']} {a['failure_class']}"
        assert a["verified_pass"] == 1, where  # the untouched image fails its verifier (tasks check)
        assert a["flush_complete"] == 1 and a["cleanup_complete"] == 1 and a["disposal_complete"] == 1, where
        diagnostics = json.loads(a["schema_diagnostics"])
        assert diagnostics["unmatched_requests"] == 0, where
        # In its container the client sent the fingerprint the probe bound on the host.
        assert set(diagnostics["fingerprint_digests"]) <= set(provider["wire_catalogs"][a["variant"]]), where
        assert json.loads(a["applied_profiles"]) == [{"baseline": "legacy", "coding": "coding"}[a["variant"]]], where
        assert a["completed_turns"] == diagnostics["request_count"], where
        # opencode asks for a session title in a request of its own, a first step again.
        titles = 1 if client == "opencode" else 0
        usage = scripted(diagnostics["request_count"] - titles, client != "claude-code")
        for key, value in scripted(1, client != "claude-code").items():
            usage[key] += titles * value
        assert {k: a[k] for k in ("uncached_input_tokens", "cached_input_tokens", "output_tokens")} == usage, where
    report = json.loads((out / "report.json").read_text())
    assert all(t["applied_profile_matches_variant"] is True for t in report["trials"])
    assert kept_containers(runtime, db) == []
