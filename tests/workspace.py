"""A real git source checkout plus operator files outside it, for `campaign coding` tests."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

from click.testing import CliRunner

from campaign import benchmark
from campaign.cli import cli


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false", *args],
        cwd=root,
        check=True,
        capture_output=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    )


@dataclasses.dataclass
class Workspace:
    """A real git source checkout plus operator files kept outside it."""

    root: Path
    source: Path
    config: Path
    out_dir: Path
    db_path: Path

    @property
    def output(self) -> Path:
        return self.out_dir / "plan-template.json"

    def args(self, *extra: str, output: Path | None = None, tasks: str | None = None) -> list[str]:
        return [
            "coding",
            "--paired",
            "--source", str(self.source),
            "--config", str(self.config),
            "--output", str(output or self.output),
            "--tasks", tasks or ",".join(benchmark.task_names()[:2]),
            "--repetitions", "2",
            "--db", str(self.db_path),
            *extra,
        ]

    def nothing_written(self) -> bool:
        leftovers = list(self.out_dir.iterdir()) if self.out_dir.exists() else []
        return not leftovers and not self.db_path.exists() and not self.db_path.parent.exists()


def make_workspace(tmp_path: Path) -> Workspace:
    source = tmp_path / "checkout"
    source.mkdir()
    git(source, "init", "-q")
    (source / ".gitignore").write_text("_build/\n*.log\n")
    (source / "bin").mkdir()
    launcher = source / "bin" / "agent"
    launcher.write_text("#!/bin/sh\nexit 0\n")
    launcher.chmod(0o755)
    (source / "lib.py").write_text("VALUE = 1\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "initial")
    operator = tmp_path / "operator"
    operator.mkdir()
    config = operator / "benchmark-base.toml"
    config.write_text("[runtime]\nport = 0\n\n[runtime.tools]\nallow = ['read']\n")
    return Workspace(root=tmp_path, source=source, config=config, out_dir=tmp_path / "out", db_path=tmp_path / "store" / "campaign.db")


def run(args: list[str]):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def refused(ws: Workspace, args: list[str], *needles: str) -> str:
    result = run(args)
    assert result.exit_code == 2, result.output
    error_lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error_lines) == 1, result.output
    for needle in needles:
        assert needle in error_lines[0], result.output
    assert ws.nothing_written(), list(ws.root.rglob("*"))
    return error_lines[0]


def approve_and_go_live(ws: Workspace, args: list[str], credential: str, *, between=None):
    """Plan with ``args``, approve the extracted plan with generous limits, run it live
    (``between``: called once the plan is approved, before the live run).

    Returns (CLI result, approved plan, live report path).
    """
    import json

    from campaign.canonical import spec_digest

    planned = run(args)
    assert planned.exit_code == 0, planned.output
    plan = json.loads(ws.output.read_text())["plan"]
    plan.update(approved=True, max_spend_usd=10.0, per_attempt_spend_ceiling_usd=1.0, provider_budget_enforced=True, credential_env=[credential])
    plan_path = ws.root / "operator" / "plan.json"
    plan_path.write_text(json.dumps(plan))
    report = ws.root / "reports" / "live.json"
    live = [*args, "--live", "--plan", str(plan_path), "--approve-plan-digest", spec_digest(plan)]
    live[live.index("--output") + 1] = str(report)
    if between is not None:
        between()
    return run(live), plan, report
