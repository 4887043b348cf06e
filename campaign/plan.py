"""The plan template and the canonical plan digest (the experiment it binds: ``campaign.experiment``).

The canonical form is the spec's, exactly: ``json.dumps(plan, sort_keys=True,
separators=(',', ':'), allow_nan=False)`` with the default ASCII escaping,
encoded as UTF-8, hashed with SHA-256. It is computed over the parsed JSON
object, never over a file's whitespace or the template wrapper around it.

A plan template's digest is *not* authorization: the plan it holds says
``approved: false`` and has no spend limits. Only an operator who reviewed the
extracted plan, set its limits and ``approved: true`` and hashed that final
object can authorize a live run.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from campaign import inputs
from campaign.canonical import spec_digest
from campaign.errors import UsageProblem
from campaign.experiment import PairedExperiment
from campaign.schedule import ScheduledTrial

SCHEMA_VERSION = 3
TEMPLATE_KIND = "paired_disclosure_plan"
TEMPLATE_NOTE = (
    "Plan template only: no trial ran and no model was called. Its plan_digest is not authorization; "
    "extract the plan, review it, set the spend limits and approved: true, then compute the digest of "
    "that final object for --approve-plan-digest."
)
PENDING_DECISION: Mapping[str, str] = {
    "status": "pending",
    "recommendation": "keep current defaults; keep the coding disclosure profile opt-in",
}
SCHEDULED_TRIAL_FIELDS = ("position", "pair_id", "trial_id", "task", "variant", "repetition", "pair_order")


# --- the template -----------------------------------------------------------


def plan_object(experiment: PairedExperiment, scheduled_count: int) -> dict[str, Any]:
    """The unapproved plan: the experiment plus limits an operator must still set."""
    return {
        "approved": False,
        "experiment": experiment.as_dict(),
        "max_attempts": scheduled_count,
        "max_spend_usd": None,
        "per_attempt_spend_ceiling_usd": None,
        "provider_budget_enforced": False,
        "credential_env": [],
    }


def scheduled_trial_dict(trial: ScheduledTrial) -> dict[str, Any]:
    return {field: getattr(trial, field) for field in SCHEDULED_TRIAL_FIELDS}


def template_document(experiment: PairedExperiment, schedule: Sequence[ScheduledTrial]) -> dict[str, Any]:
    plan = plan_object(experiment, len(schedule))
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": TEMPLATE_KIND,
        "note": TEMPLATE_NOTE,
        "plan": plan,
        "plan_digest": spec_digest(plan),
        "scheduled_trials": [scheduled_trial_dict(t) for t in schedule],
        "live_calls": 0,
        "decision": dict(PENDING_DECISION),
    }


def render_document(document: Mapping[str, Any]) -> str:
    """Stable, human-reviewable file text (same inputs give the same bytes)."""
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def is_template(value: Any) -> bool:
    """True for the wrapper this module writes (not the plan object inside it)."""
    return isinstance(value, dict) and value.get("kind") == TEMPLATE_KIND and "plan" in value


# --- reading JSON the way the digest needs it -------------------------------


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number; the canonical form allows finite numbers only")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"the key {key!r} appears twice in one object; a reviewer and the digest could disagree on its value")
        seen[key] = value
    return seen


def parse_json_object(text: str | bytes, what: str, option: str | None = None) -> dict[str, Any]:
    """Parse strict JSON that must be an object: no NaN/Infinity, no duplicate keys."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_no_duplicate_keys)
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageProblem(f"{what} is not valid JSON for a plan: {exc}", option=option) from None
    except RecursionError:
        value = None
        deep = True
    else:
        deep = inputs.too_deep(value)
    if deep:
        raise UsageProblem(f"{what} nests deeper than {inputs.MAX_NESTING} levels; no plan does", option=option)
    if not isinstance(value, dict):
        raise UsageProblem(f"{what} holds a JSON {_JSON_TYPES.get(type(value), 'value')}, not an object", option=option)
    if _has_non_finite(value):
        # json.loads turns 1e999 into inf without calling parse_constant.
        raise UsageProblem(f"{what} holds a number too large for the canonical form", option=option)
    return value


_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


def read_json_object(path: Path, what: str, option: str | None = None) -> dict[str, Any]:
    text = inputs.read_text(Path(path), option, what.removeprefix("the "))
    return parse_json_object(text, f"{what} {path}", option)


def digest_plan_file(path: Path) -> str:
    """The canonical digest of the plan object in ``path`` (refuses the wrapper)."""
    plan = read_json_object(path, "the plan")
    if is_template(plan):
        raise UsageProblem(f"{path} is a plan template, not a plan; run `campaign plan extract` first and hash the extracted plan")
    return spec_digest(plan)


def extract_plan(template_path: Path, out_path: Path) -> dict[str, Any]:
    """Write the template's plan object to ``out_path`` (the spec's extraction, atomically)."""
    wrapper = read_json_object(template_path, "the template")
    if not is_template(wrapper):
        raise UsageProblem(f"{template_path} is not a {TEMPLATE_KIND} template (no kind/plan wrapper)")
    if wrapper.get("schema_version") != SCHEMA_VERSION:
        raise UsageProblem(f"{template_path} has schema_version {wrapper.get('schema_version')!r}; this campaign reads version {SCHEMA_VERSION}")
    plan = wrapper["plan"]
    if not isinstance(plan, dict):
        raise UsageProblem(f"the plan in {template_path} is not a JSON object")
    if Path(out_path).resolve() == Path(template_path).resolve():
        raise UsageProblem("OUT must differ from TEMPLATE; the template is kept as generated")
    write_atomic(Path(out_path), json.dumps(plan, indent=2) + "\n")
    return plan


# --- files ------------------------------------------------------------------


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` next to ``path`` and rename it into place (never a torn file)."""
    tmp = stage_atomic(path, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def stage_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to a fsynced temporary file beside ``path``; the caller renames it.

    The file keeps ``mkstemp``'s owner-only mode: plans and templates are operator files.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)
