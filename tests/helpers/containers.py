"""The container runtime and offline base image scripts/test.sh prepared
(scripts/install_containers.sh): podman configured by CONTAINERS_CONF, and the base image
named by CAMPAIGN_TEST_BASE_IMAGE. CI sets CAMPAIGN_REQUIRE_CONTAINERS=1, so a missing
runtime fails there instead of skipping."""

from __future__ import annotations

import os

import pytest

from campaign import containers
from campaign.errors import UsageProblem


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
