"""Load the configuration: defaults, then a TOML file, then environment variables."""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path

from .defaults import DEFAULTS

ENV_PREFIX = "SVC_"

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class ConfigError(Exception):
    """The configuration is invalid; the message names the offending setting."""


def load_config(path: str | Path | None = None, environ: Mapping[str, str] | None = None) -> dict:
    """Return the effective configuration as a nested dict.

    ``environ`` defaults to ``os.environ``; variables look like
    ``SVC_SERVER__PORT=9000`` (section and key separated by a double underscore).
    Each layer overrides only the settings it names.
    """
    config = copy.deepcopy(DEFAULTS)
    if path is not None:
        _merge_file(config, _read_toml(Path(path)))

    env = os.environ if environ is None else environ
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX):
            continue
        section, _, key = name[len(ENV_PREFIX):].lower().partition("__")
        if section not in config or key not in config[section]:
            raise ConfigError(f"{name}: unknown setting {section}.{key}")
        config[section][key] = _coerce(raw, DEFAULTS[section][key], name)
    return config


def _read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc


def _merge_file(config: dict, data: dict) -> None:
    for section, values in data.items():
        if section not in config:
            raise ConfigError(f"unknown section [{section}]")
        if not isinstance(values, dict):
            raise ConfigError(f"{section} must be a table, like [{section}]")
        for key, value in values.items():
            if key not in config[section]:
                raise ConfigError(f"unknown setting {section}.{key}")
            config[section][key] = value


def _coerce(raw: str, default: object, name: str) -> object:
    """Convert an environment string to the type of the default it replaces."""
    text = raw.strip()
    if isinstance(default, bool):
        lowered = text.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ConfigError(f"{name}: expected a boolean (true/false, 1/0, yes/no, on/off), got {raw!r}")
    try:
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
    except ValueError:
        raise ConfigError(f"{name}: expected {type(default).__name__}, got {raw!r}") from None
    return raw
