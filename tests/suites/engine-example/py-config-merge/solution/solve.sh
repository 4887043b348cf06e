#!/usr/bin/env bash
# The reference fix, applied in the working copy.
set -euo pipefail
cat > merge.py <<'PY'
"""Config merging."""


def deep_merge(base: dict, override: dict) -> dict:
    """A new dict: override wins; nested dicts are merged key by key."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
PY
