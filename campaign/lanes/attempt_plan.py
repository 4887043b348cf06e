"""One attempt as plain values: what defines it (``AttemptPlan``) and what it came to
(``AttemptOutcome``), and the row status each outcome gives its trial."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from campaign.agents.profile_model import AgentProfile
from campaign.agents.profiles import confirmation_label, variant_disclosure
from campaign.agents.record import AgentRecord
from campaign import benchmark
from campaign.benchmark import Task
from campaign.containers import Runtime
from campaign.lanes.wire import WireRoute
from campaign.providers import Provider
from campaign.supervise.teardown import TeardownBudget
from campaign.vocabulary import VERDICTS


@dataclass(frozen=True)
class ContainerSpec:
    """Where a task that ships an image runs: the runtime, and the image the run bound."""

    runtime: Runtime
    image: str  # the image's ID


def fixture_digest(task: Task, container: ContainerSpec | None) -> str:
    """What the attempt starts from: the task's fixture, and, for a task that ships an
    image, that image too (a rebuilt image is a different experiment, as a recompiled
    artifact is). The experiment records the same digest per task as each attempt row."""
    own = benchmark.fixture_digest(task)
    return own if container is None else hashlib.sha256(f"{own}:image:{container.image}".encode()).hexdigest()


@dataclass(frozen=True)
class AttemptPlan:
    """Everything that defines one attempt, as plain values."""

    task: Task
    profile: AgentProfile
    model: str
    seed: int
    timeout_s: float
    variant: str | None = None  # None: the nonpaired lane, the agent's own configuration
    config_text: str | None = None
    credential_names: tuple[str, ...] = ()
    launcher: str | None = None
    python: str = sys.executable
    # Set when the profile routes through {proxy_url}: the recording proxy runs.
    wire: WireRoute | None = None
    # applied_profile_from = "wire": {variant: catalog digests} the probe measured.
    expected_catalogs: Mapping[str, list[str]] | None = None
    # The format those digests were made in (profiler.wire.CATALOG_DIGEST_KEYS).
    catalog_format: int = 1
    # The wire probe's own runs: they measure the catalogs, so there is nothing to confirm yet.
    probe: bool = False
    failure_dir: Path | None = None
    tmp_base: Path | None = None
    teardown_budget: TeardownBudget = field(default_factory=TeardownBudget)
    extra_client_args: tuple[str, ...] = ()
    extra_env: tuple[tuple[str, str], ...] = ()
    # The provider's list prices, for the "list-price equivalent, not billed" column.
    provider: Provider | None = None
    # A task that ships an image: the attempt runs in a fresh container of it.
    container: ContainerSpec | None = None

    @property
    def profiling(self) -> bool:
        return self.wire is not None

    @property
    def fixture_digest(self) -> str:
        return fixture_digest(self.task, self.container)

    @property
    def expected_disclosure(self) -> str | None:
        """The disclosure profile (not the agent ``profile``) the variant's config applies;
        None for a run without variants, or a variant whose config applies none."""
        return variant_disclosure(self.profile, self.variant) if self.variant else None

    @property
    def expected_label(self) -> str | None:
        """What the attempt must be seen to apply (``profiles.confirmation_label``); None
        for a run without variants, or a variant this client cannot confirm."""
        return confirmation_label(self.profile, self.variant) if self.variant else None


@dataclass(frozen=True)
class AttemptSource:
    """What every attempt of one provider in a run shares. The paired lane, the campaign
    lane's workers and the wire probe each build one and take every attempt from it
    (``plan``), so two lanes cannot build the same attempt two ways."""

    profile: AgentProfile
    model: str
    seed: int
    timeout_s: float
    configs: Mapping[str, str]  # each variant's rendered config text
    credential_names: tuple[str, ...] = ()
    provider: Provider | None = None
    wire: WireRoute | None = None
    expected_catalogs: Mapping[str, list[str]] | None = None
    catalog_format: int = 1
    launcher: str | None = None
    failure_dir: Path | None = None
    extra_env: tuple[tuple[str, str], ...] = ()
    python: str = sys.executable
    probe: bool = False
    # {task: where it runs} for the tasks that ship an image (built once per run).
    images: Mapping[str, ContainerSpec] = field(default_factory=dict)

    def plan(self, task: Task, variant: str) -> AttemptPlan:
        return AttemptPlan(
            task=task,
            profile=self.profile,
            model=self.model,
            seed=self.seed,
            timeout_s=self.timeout_s,
            variant=variant,
            config_text=self.configs[variant],
            credential_names=self.credential_names,
            launcher=self.launcher,
            python=self.python,
            wire=self.wire,
            expected_catalogs=self.expected_catalogs,
            catalog_format=self.catalog_format,
            probe=self.probe,
            failure_dir=self.failure_dir,
            extra_env=self.extra_env,
            provider=self.provider,
            container=self.images.get(task.name),
        )


@dataclass(frozen=True)
class Verdict:
    """What the verifier itself said, whatever the outcome made of it (`campaign tasks check`)."""

    exit_code: int | None = None
    reward: bool | None = None  # a Harbor reward file's verdict; None: it wrote none
    timed_out: bool = False
    could_not_start: bool = False

    @property
    def passed(self) -> bool | None:
        """The verifier's verdict (None: it gave none)."""
        if self.could_not_start or self.timed_out or self.exit_code is None:
            return None
        return self.reward if self.reward is not None else self.exit_code == 0


@dataclass(frozen=True)
class AttemptOutcome:
    attempt_id: int
    outcome: str  # a verdict (passed | failed | timeout), or interrupted | provider_error | engine_error
    failure_class: str | None
    verified_pass: bool | None
    wall_seconds: float | None
    record: AgentRecord
    spend_complete: bool
    cleanup_complete: bool
    disposal_complete: bool
    finalization_failed: bool
    # What stopped an engine_error attempt ("FileNotFoundError: ..."), for the operator; never stored.
    error: str | None = None
    # The list-price equivalent of the recorded counters, when the attempt has a provider.
    equivalent_spend_usd: float | None = None
    # For a provider_error: what the wire saw the provider do ({fault: requests}).
    provider_faults: Mapping[str, int] | None = None
    verifier: Verdict = field(default_factory=Verdict)
    # Why spend_complete is false (campaign.spend.SPEND_GAPS), for the operator's stop
    # line; derived from the row's own columns, so never stored apart.
    spend_gap: str | None = None

    @property
    def stop_reason(self) -> str | None:
        """Why later trials must not start (the spec's fail-closed stops), if any."""
        if not self.cleanup_complete:
            return "cleanup_unverified"
        if self.finalization_failed:
            return "finalization_failed"
        if not self.disposal_complete:
            return "disposal_failed"
        if self.outcome == "engine_error":
            return "engine_error"
        return None


def attempt_status(outcome: str) -> str:
    """The row's status for an outcome: a verdict finishes its trial, anything else
    sends the trial back to the queue (interrupted by the operator, faulted otherwise)."""
    if outcome in VERDICTS:
        return "finished"
    return "interrupted" if outcome == "interrupted" else "faulted"


def config_text_digest(config_text: str | None) -> str | None:
    return hashlib.sha256(config_text.encode("utf-8")).hexdigest() if config_text is not None else None
