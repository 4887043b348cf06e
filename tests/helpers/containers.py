"""The container runtime and offline base image scripts/test.sh prepared
(scripts/install_containers.sh): podman configured by CONTAINERS_CONF, and the base image
named by CAMPAIGN_TEST_BASE_IMAGE. CI sets CAMPAIGN_REQUIRE_CONTAINERS=1, so a missing
runtime fails there instead of skipping."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from pathlib import Path

import pytest

from campaign import containers
from campaign.errors import UsageProblem
from campaign.supervise.cgroup import attempt_cgroup_name


def base_image() -> tuple[containers.Runtime, str]:
    image = os.environ.get("CAMPAIGN_TEST_BASE_IMAGE")
    runtime = None
    try:
        runtime = containers.find_runtime("podman")
    except UsageProblem:
        pass
    if image and runtime is not None:
        try:
            containers.image_id(runtime, image)
            return runtime, image
        except containers.ContainerProblem:
            pass
    why = "no podman with the offline base image here; scripts/test.sh makes it (scripts/install_containers.sh)"
    if os.environ.get("CAMPAIGN_REQUIRE_CONTAINERS"):
        pytest.fail(why)
    pytest.skip(why)


def kept_containers(runtime: containers.Runtime, db: Path) -> list[str]:
    """The containers of the store's attempts the runtime still has: each named from its
    row, as recovery finds it (``containers.attempt_container_name``)."""
    with sqlite3.connect(db) as conn:
        found = conn.execute("SELECT id, campaign_id, started_at FROM attempts").fetchall()
    names = [containers.attempt_container_name(attempt_cgroup_name(a, c, dt.datetime.fromisoformat(s))) for a, c, s in found]
    return [name for name in names if containers.exists(runtime, name) is not False]
