"""Providers catalog: routes, the one credential per provider, and list prices.

The catalog is a TOML file (``providers.toml`` ships with the engine; an
operator may give another with ``--providers-catalog``). It is validated
strictly at load time: an unknown key, a missing price or a malformed
credential name is an error before anything runs. Its SHA-256 over the file's
bytes, ``catalog_digest``, is the report's
``runtime_versions.pricing_catalog_digest``.

Equivalent spend
----------------
For one attempt through provider ``p``, with the recorded counters::

    usd = ( uncached_input_tokens * p.prices.uncached_input
          + cached_input_tokens   * p.prices.cached_input
          + cache_write_tokens    * p.prices.cache_write
          + output_tokens         * p.prices.output ) / 1_000_000

rounded to 1e-6 USD (what the offline agent does for its synthetic cost). The
prices are USD per million tokens. When ANY of the four counters is unknown
(``None``) the result is ``None``: an unknown counter is never read as zero,
even where its price is 0.0. The one exception is a category the wire format
cannot carry at all (``unbilled``: cache writes on the OpenAI formats) whose
catalog price is 0.0, which says the provider bills no such category apart. The figure carries the provider's ``basis``
("public list price", or "synthetic" for the offline route) and the label
"list-price equivalent, not billed": it sits beside measured spend (the cost
the client reported) and never replaces it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.vocabulary import PRICE_BASIS_NAMES, PRICE_CATEGORIES, SPEND_COUNTERS
from campaign.vocabulary import REPLAY as REPLAY  # where the lanes have always imported it from
from campaign import inputs
from campaign.agents.profiles import builtin_profile_names
from campaign.credential_shapes import credential_shaped
from campaign.errors import UsageProblem
from campaign.profiler.wire import DEFAULT_SILENCE_S

BUILTIN_CATALOG = Path(__file__).resolve().parent / "providers.toml"
# Without --providers a campaign runs only the free offline route; paid ones must be named.
DEFAULT_PROVIDERS = ("offline",)
EQUIVALENT_SPEND_LABEL = "list-price equivalent, not billed"
BASES = PRICE_BASIS_NAMES

_CATALOG_OPTION = "--providers-catalog"
_PROVIDERS_OPTION = "--providers"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_ROUTE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_CREDENTIAL = re.compile(r"^[A-Z][A-Z0-9_]*(API_KEY|ACCESS_TOKEN|AUTH_TOKEN)$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_PROVIDER_KEYS = {"route", "default_model", "credential_env", "agent", "basis", "price_source", "price_date", "prices", "upstream", "silence_s"}
_OPTIONAL_KEYS = {"credential_env", "upstream", "silence_s"}
_UPSTREAM = re.compile(r"^(replay|https?://[A-Za-z0-9.\-]+(:\d{1,5})?(/[A-Za-z0-9._~/\-]*)?)$")


# A dollar a token. Far above any list price, and low enough that no token count priced
# at it leaves the floats an attempt row is sealed with (1e308 did, after the attempt
# was paid for, and its row could then never be written).
MAX_PRICE = 1_000_000


@dataclass(frozen=True)
class Prices:
    """Public list prices, USD per million tokens."""

    uncached_input: float
    cached_input: float
    cache_write: float
    output: float
    # Anthropic's 1-hour cache writes, priced apart from cache_write (the 5-minute ones);
    # None: the catalog gives no such price, so a 1-hour write seen leaves spend unknown.
    cache_write_1h: float | None = None


@dataclass(frozen=True)
class Provider:
    name: str
    # The PROVIDER part of the PROVIDER:MODEL route.
    route: str
    default_model: str
    # The one variable forwarded to this provider's attempts; None: none needed.
    credential_env: str | None
    # The agent profile used by default (a built-in profile name).
    agent: str
    basis: str
    price_source: str
    price_date: str
    prices: Prices
    # Where the recording proxy forwards this provider's model requests: a base URL,
    # or REPLAY (the engine's replay provider, started per attempt). None: not profiled.
    upstream: str | None = None
    # Seconds without a byte from the upstream after which a request is given up on.
    silence_s: float = DEFAULT_SILENCE_S

    @property
    def model(self) -> str:
        """The default PROVIDER:MODEL route."""
        return f"{self.route}:{self.default_model}"


@dataclass(frozen=True)
class Catalog:
    providers: tuple[Provider, ...]
    # The file it was read from and the SHA-256 of exactly the bytes parsed.
    path: Path
    digest: str

    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.providers)

    def get(self, name: str) -> Provider | None:
        return next((p for p in self.providers if p.name == name), None)


@dataclass(frozen=True)
class EquivalentSpend:
    usd: float | None
    basis: str
    label: str = EQUIVALENT_SPEND_LABEL


def catalog_digest(path: Path | None = None) -> str:
    """SHA-256 of the catalog file's bytes: the pricing catalog digest."""
    return hashlib.sha256(_read(path or BUILTIN_CATALOG)).hexdigest()


def load_catalog(path: Path | None = None) -> Catalog:
    """The shipped catalog, or the one at ``path``; UsageProblem names what is wrong."""
    given = Path(path).expanduser() if path is not None else BUILTIN_CATALOG
    raw = _read(given)
    source = given.resolve()
    try:
        data = inputs.toml_loads(inputs.decode_text(raw, source, _CATALOG_OPTION, "providers catalog"))
    except tomllib.TOMLDecodeError as exc:
        raise UsageProblem(f"cannot parse providers catalog {source}: {exc}", option=_CATALOG_OPTION) from None
    try:
        providers = parse_catalog(data)
    except ValueError as exc:
        raise UsageProblem(f"providers catalog {source}: {exc}", option=_CATALOG_OPTION) from None
    return Catalog(providers=providers, path=source, digest=hashlib.sha256(raw).hexdigest())


def resolve_providers(spec: str | None, catalog: Catalog) -> tuple[Provider, ...]:
    """``--providers NAME,NAME`` in the given order; None means DEFAULT_PROVIDERS."""
    names = list(DEFAULT_PROVIDERS) if spec is None else [part.strip() for part in spec.split(",")]
    if not names or any(not n for n in names):
        raise UsageProblem(f"give provider names separated by commas, e.g. {','.join(catalog.names()[:2])}", option=_PROVIDERS_OPTION)
    seen: set[str] = set()
    out: list[Provider] = []
    for name in names:
        if name in seen:
            raise UsageProblem(f"provider {name!r} is named twice", option=_PROVIDERS_OPTION)
        seen.add(name)
        provider = catalog.get(name)
        if provider is None:
            raise UsageProblem(f"unknown provider {name!r}; the catalog has: {', '.join(catalog.names())}", option=_PROVIDERS_OPTION)
        out.append(provider)
    return tuple(out)


def provider_for_route(catalog: Catalog, route: str) -> Provider | None:
    """The catalog's provider for a PROVIDER:MODEL route's PROVIDER part (a catalog gives each route one)."""
    return next((p for p in catalog.providers if p.route == route), None)


def equivalent_spend(counters: Any, provider: Provider, *, unbilled: Iterable[str] = (), cache_write_1h_tokens: int | None = None) -> EquivalentSpend:
    """Recorded counters x list prices (formula in the module docstring).

    ``counters`` is anything carrying the four SPEND_COUNTERS: a mapping, an
    AgentRecord, or an attempt row. ``unbilled`` names counters the wire format
    cannot carry; such a counter that is unknown counts as 0 where its price is 0.0.
    ``cache_write_1h_tokens``: the part of ``cache_write_tokens`` written to the 1-hour
    cache, priced at ``cache_write_1h`` instead; with no such price it is unknown spend.
    """
    prices = (provider.prices.uncached_input, provider.prices.cached_input, provider.prices.cache_write, provider.prices.output)
    unbilled = set(unbilled)
    values = [_counter(counters, name) for name in SPEND_COUNTERS]
    values = [0 if v is None and name in unbilled and price == 0.0 else v for v, name, price in zip(values, SPEND_COUNTERS, prices)]
    if any(v is None for v in values):
        return EquivalentSpend(None, provider.basis)
    usd = sum(tokens * price for tokens, price in zip(values, prices))
    if cache_write_1h_tokens:
        if provider.prices.cache_write_1h is None:
            return EquivalentSpend(None, provider.basis)  # never at the 5-minute rate
        usd += cache_write_1h_tokens * (provider.prices.cache_write_1h - provider.prices.cache_write)
    return EquivalentSpend(round(usd / 1_000_000, 6), provider.basis)


# --- validation -------------------------------------------------------------------


def parse_catalog(data: Mapping[str, Any]) -> tuple[Provider, ...]:
    """Validate a parsed catalog; ValueError names the first thing wrong."""
    _no_unknown_keys(data, {"providers"}, "")
    table = data.get("providers")
    if not isinstance(table, dict) or not table:
        raise ValueError("needs at least one [providers.NAME] table")
    providers = tuple(_provider(name, entry) for name, entry in table.items())
    by_route: dict[str, str] = {}
    for provider in providers:
        first = by_route.setdefault(provider.route, provider.name)
        if first != provider.name:
            # provider_for_route would silently pick the first: which provider a route means must be unambiguous.
            raise ValueError(f"providers.{first} and providers.{provider.name} both take the route {provider.route!r}; give each route one provider")
    return providers


def _provider(name: str, entry: Any) -> Provider:
    where = f"providers.{name}"
    if not _NAME.match(name):
        raise ValueError(f"{where}: name must be lowercase letters, digits, '.', '_' or '-'")
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be a table")
    _no_unknown_keys(entry, _PROVIDER_KEYS, f"{where}.")
    missing = sorted(_PROVIDER_KEYS - _OPTIONAL_KEYS - set(entry))
    if missing:
        raise ValueError(f"{where}: missing key {missing[0]}")
    text = {key: _text(entry, key, where) for key in ("route", "default_model", "agent", "basis", "price_source", "price_date")}
    if not _ROUTE.match(text["route"]):
        raise ValueError(f"{where}.route {text['route']!r} must be letters, digits, '.', '_' or '-' (no ':')")
    if text["basis"] not in BASES:
        raise ValueError(f"{where}.basis must be one of {', '.join(repr(b) for b in BASES)}")
    if credential_shaped(text["default_model"]):
        raise ValueError(f"{where}.default_model looks like an API key or token; name the key's variable in credential_env instead")
    if not _DATE.match(text["price_date"]) or not _is_date(text["price_date"]):
        raise ValueError(f"{where}.price_date must be a date written YYYY-MM-DD")
    credential = entry.get("credential_env")
    if credential is not None and not (isinstance(credential, str) and _CREDENTIAL.match(credential)):
        raise ValueError(f"{where}.credential_env must be an uppercase name ending in API_KEY, ACCESS_TOKEN or AUTH_TOKEN")
    if text["agent"] not in builtin_profile_names():
        raise ValueError(f"{where}.agent {text['agent']!r} is not a built-in agent profile ({', '.join(builtin_profile_names())})")
    if credential is None and text["basis"] != "synthetic":
        raise ValueError(f"{where}: a provider priced at a public list price needs its credential_env")
    return Provider(
        name=name,
        route=text["route"],
        default_model=text["default_model"],
        credential_env=credential,
        agent=text["agent"],
        basis=text["basis"],
        price_source=text["price_source"],
        price_date=text["price_date"],
        prices=_prices(entry["prices"], f"{where}.prices"),
        upstream=_upstream(entry.get("upstream"), where),
        silence_s=_silence(entry.get("silence_s", DEFAULT_SILENCE_S), where),
    )


def _silence(value: Any, where: str) -> float:
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not (numeric and math.isfinite(value) and 0 < value <= 3600):
        raise ValueError(f"{where}.silence_s must be a number of seconds in (0, 3600]")
    return float(value)


def _upstream(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not (isinstance(value, str) and _UPSTREAM.match(value)):
        raise ValueError(f'{where}.upstream must be "replay" or an http(s) base URL without credentials or query')
    return value.rstrip("/")


def _prices(table: Any, where: str) -> Prices:
    if not isinstance(table, dict):
        raise ValueError(f"{where} must be a table of USD per million tokens")
    _no_unknown_keys(table, {*PRICE_CATEGORIES, "cache_write_1h"}, f"{where}.")
    values = {}
    for key in (*PRICE_CATEGORIES, "cache_write_1h"):
        if key not in table:
            if key == "cache_write_1h":
                continue  # optional: only routes that bill 1-hour cache writes apart
            raise ValueError(f"{where}: missing key {key}")
        value = table[key]
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not (numeric and math.isfinite(value) and 0 <= value <= MAX_PRICE):
            raise ValueError(f"{where}.{key} must be a non-negative number of USD per million tokens, at most {MAX_PRICE:,}")
        values[key] = float(value)
    return Prices(**values)


def _text(entry: Mapping[str, Any], key: str, where: str) -> str:
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}.{key} must be a non-empty string")
    return value


def _is_date(value: str) -> bool:
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _no_unknown_keys(table: Mapping[str, Any], allowed: set[str], prefix: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ValueError(f"unknown key {prefix}{unknown[0]} (allowed: {', '.join(sorted(allowed))})")


def _counter(counters: Any, name: str) -> int | None:
    value = counters.get(name) if isinstance(counters, Mapping) else getattr(counters, name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative int or None, got {value!r}")
    return value


def _read(path: Path) -> bytes:
    return inputs.read_bytes(path, _CATALOG_OPTION, "providers catalog")
