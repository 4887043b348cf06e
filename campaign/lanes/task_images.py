"""The images a run's tasks ship, ready before its first trial, bound to its experiment.

A task whose environment is an image (a Harbor ``environment/Dockerfile`` that does more
than copy files, or a prebuilt ``docker_image``) runs each attempt in a fresh container
of it (``attempt_container``). Its image is built once, with the machine's runtime and no
network, tagged by the digest of its build context; a tag already in the runtime's store
is used as it is, never rebuilt behind the experiment's back (a resume, a worker, finds
the image the campaign ran). The image's ID is part of the task's fixture digest in the
experiment and in every attempt row, so a rebuilt image is a different experiment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from campaign import containers
from campaign.agents.profile_model import AgentProfile
from campaign.benchmark import Task
from campaign.errors import UsageProblem
from campaign.lanes import container_client
from campaign.lanes.attempt_plan import ContainerSpec, fixture_digest


def prepare(
    tasks: Sequence[Task],
    profiles: Sequence[AgentProfile],
    choice: str | None = None,
    *,
    build: bool = True,
    live: bool = False,
    environ: Mapping[str, str] = os.environ,
) -> dict[str, ContainerSpec]:
    """{task: its runtime and image} for the tasks that ship one (none: no runtime needed).
    ``build=False`` (a dry run) only finds images built before, and leaves the others out.
    One line, before any trial, for what cannot be: a client that cannot run in a
    container (``container_client``), no runtime, a build that fails, a prebuilt image
    not on this machine (nothing is pulled), and for a ``live`` run a prebuilt image named
    by a tag (a tag can move under an approved plan; a digest or an image ID cannot)."""
    shipping = [t for t in tasks if t.ships_image]
    if not shipping:
        return {}
    moving = next((t for t in shipping if live and t.image_ref is not None and not _immutable(t.image_ref)), None)
    if moving is not None:
        raise UsageProblem(
            f"task {moving.name}: task.toml names the image {moving.image_ref} by a tag, which can move under an approved plan; "
            "name it by digest for a live run (NAME@sha256:..., which `podman image inspect --format '{{.Digest}}' IMAGE` prints)",
            option="--task-suite",
        )
    for profile in profiles:
        container_client.installation(profile, environ)
    runtime = containers.find_runtime(choice)
    found = {task.name: _image(runtime, task, build) for task in shipping}
    return {name: ContainerSpec(runtime, image) for name, image in found.items() if image is not None}


def _immutable(ref: str) -> bool:
    """Whether ``ref`` names one image for good: by digest, or by the image's own ID."""
    return "@sha256:" in ref or re.fullmatch(r"(sha256:)?[0-9a-f]{64}", ref) is not None


def _image(runtime: containers.Runtime, task: Task, build: bool) -> str | None:
    try:
        if task.image_ref is not None:
            return containers.image_id(runtime, task.image_ref)
        assert task.image_context is not None
        tag = containers.image_tag(task.name, task.image_context)
        try:
            return containers.image_id(runtime, tag)  # built before: used as it is
        except containers.ContainerProblem:
            if not build:
                return None
            return containers.build_image(runtime, task.image_context, tag, task=task.name)
    except containers.ContainerProblem as exc:
        where = f"task.toml names {task.image_ref}, which is not on this machine (nothing is pulled)" if task.image_ref is not None else str(exc)
        raise UsageProblem(where if where.startswith("task ") else f"task {task.name}: {where}", option="--task-suite") from None


def rebuilt_since(approved: Mapping[str, str], tasks: Sequence[Task], images: Mapping[str, ContainerSpec]) -> str | None:
    """The first image task whose image is not the one ``approved`` (a plan's fixture
    digests) bound: its tag now names another image (rebuilt or retagged). Checked before
    anything runs in it, the probe included, so the refusal names the image."""
    now = digests(tasks, images)
    return next((name for name in sorted(images) if name in approved and approved[name] != now[name]), None)


def digests(tasks: Sequence[Task], images: Mapping[str, ContainerSpec]) -> dict[str, str]:
    """Each task's fixture digest as the experiment records it (its image's ID in it)."""
    return {t.name: fixture_digest(t, images.get(t.name)) for t in tasks}
