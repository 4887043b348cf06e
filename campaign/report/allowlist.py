"""The allowlist engine: value types that clean a document down to what it may hold.

A schema is a tree of these types (``report/schema.py`` declares the report's).
It has no type for free text: a leaf is a number, a boolean, null, a member of
a code-authored enum, a timestamp, or a string matching a strict pattern. What
happens to a value that does not fit:

- an enum value outside its vocabulary becomes ``"unlisted"``;
- a string that does not match its pattern becomes ``redacted-<16 hex>`` (a
  SHA-256 prefix, so distinct tasks stay distinct clusters), or null for a
  digest or version;
- a non-finite number or a value of the wrong type becomes null;
- a key outside an object's schema is dropped.

Each of these is counted in ``Stats``. Every type has two faces: ``compile``
(a cleaner returning the allowed copy) and ``checker`` (a predicate true
exactly when cleaning would change nothing, which ``campaign export`` uses).
A scalar leaf states its rule once, as a ``Rule``; both faces, and the
generated object cleaners of ``report/codegen.py``, are built from it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import math
import re
import types
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

UNLISTED = "unlisted"
MAX_ID_LENGTH = 160
TIMESTAMP_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|\+00:00)")


@dataclass
class Stats:
    """What the sanitizer changed; reported so a reader sees the allowlist at work."""

    dropped_keys: int = 0
    unlisted_values: int = 0
    redacted_ids: int = 0
    nulled_values: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"dropped_keys": self.dropped_keys, "unlisted_values": self.unlisted_values, "redacted_ids": self.redacted_ids, "nulled_values": self.nulled_values}


Cleaner = Callable[[Any, Stats], Any]
Check = Callable[[Any], bool]


@dataclass(frozen=True)
class Rule:
    """A scalar leaf's one rule, as code.

    ``test`` is a Python expression over ``{v}``, true for an allowed value (null
    included); a value failing it is counted under ``counter`` and replaced by
    ``replacement``. ``names`` are the values the test refers to by ``{name}``.
    """

    test: str
    counter: str
    replacement: Any = None
    names: tuple[tuple[str, Any], ...] = ()

    def expression(self, var: str, namespace: dict[str, Any], suffix: str) -> str:
        """The test over ``var``, with its names bound in ``namespace`` under unique names."""
        names = {"v": var}
        for name, value in self.names:
            namespace[f"{name}_{suffix}"] = value
            names[name] = f"{name}_{suffix}"
        return self.test.format(**names)


def generate(lines: list[str], namespace: dict[str, Any], name: str) -> Any:
    """Define ``name`` from source built only from schema keys and rules."""
    namespace.setdefault("isfinite", math.isfinite)
    exec("\n".join(lines), namespace)  # noqa: S102 - no value of a document reaches the source
    return namespace[name]


class Type(ABC):
    """A schema node."""

    @abstractmethod
    def compile(self) -> Cleaner: ...

    @abstractmethod
    def checker(self) -> Check: ...

    def rule(self) -> Rule | None:
        """The rule of a leaf whose check can be inlined into generated code; None otherwise."""
        return None


class Leaf(Type):
    """A scalar whose whole behaviour is its ``rule``."""

    @abstractmethod
    def rule(self) -> Rule: ...

    def compile(self) -> Cleaner:
        rule = self.rule()
        namespace: dict[str, Any] = {"REPLACEMENT": rule.replacement}
        test = rule.expression("v", namespace, "0")
        return generate(["def clean(v, s):", f"    if {test}:", "        return v", f"    s.{rule.counter} += 1", "    return REPLACEMENT"], namespace, "clean")

    def checker(self) -> Check:
        namespace: dict[str, Any] = {}
        return generate(["def check(v):", f"    return {self.rule().expression('v', namespace, '0')}"], namespace, "check")


@dataclass(frozen=True)
class Int(Leaf):
    def rule(self) -> Rule:
        return Rule("{v} is None or type({v}) is int", "nulled_values")


@dataclass(frozen=True)
class Num(Leaf):
    def rule(self) -> Rule:
        return Rule("{v} is None or type({v}) is int or (type({v}) is float and isfinite({v}))", "nulled_values")


@dataclass(frozen=True)
class Bool(Leaf):
    def rule(self) -> Rule:
        return Rule("{v} is None or {v} is True or {v} is False", "nulled_values")


@dataclass(frozen=True)
class Enum(Leaf):
    values: tuple[str, ...]

    def rule(self) -> Rule:
        allowed = frozenset(self.values) | {UNLISTED}
        return Rule("{v} is None or (type({v}) is str and {v} in {allowed})", "unlisted_values", UNLISTED, (("allowed", allowed),))


@dataclass(frozen=True)
class Const(Type):
    """A fixed code-authored value; anything else is replaced by it."""

    value: Any

    def compile(self) -> Cleaner:
        value = self.value
        return lambda v, s: value

    def checker(self) -> Check:
        value = self.value
        return lambda v: type(v) is type(value) and v == value


@dataclass(frozen=True)
class Pattern(Type):
    """A string matching ``regex`` in full; otherwise ``redacted-<hash>`` or null."""

    regex: re.Pattern[str]
    redact: bool = True

    def compile(self) -> Cleaner:
        fullmatch = self.regex.fullmatch
        redact = self.redact
        # value -> (its cleaned form, whether cleaning counted something); generated
        # object cleaners read it directly for values seen before.
        cache: dict[str, tuple[str | None, bool]] = {}

        def clean(v: Any, s: Stats) -> str | None:
            if v is None:
                return None
            if type(v) is not str:
                s.nulled_values += 1
                return None
            hit = cache.get(v)
            if hit is None:
                ok = len(v) <= MAX_ID_LENGTH and fullmatch(v) is not None
                hit = (v, False) if ok else (redacted_id(v) if redact else None, True)
                if len(cache) < 100_000:
                    cache[v] = hit
            if hit[1]:
                if redact:
                    s.redacted_ids += 1
                else:
                    s.nulled_values += 1
            return hit[0]

        clean.cache = cache  # type: ignore[attr-defined]
        return clean

    def checker(self) -> Check:
        fullmatch = self.regex.fullmatch
        return lambda v: v is None or (type(v) is str and len(v) <= MAX_ID_LENGTH and fullmatch(v) is not None)


def redacted_id(value: str) -> str:
    return "redacted-" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class Timestamp(Type):
    """UTC ISO-8601; datetimes are converted, strings must already be in that form."""

    def compile(self) -> Cleaner:
        def clean(v: Any, s: Stats) -> str | None:
            if v is None:
                return None
            if isinstance(v, dt.datetime) and v.tzinfo is not None:
                return v.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")
            if type(v) is str and TIMESTAMP_RE.fullmatch(v):
                return v
            s.nulled_values += 1
            return None

        return clean

    def checker(self) -> Check:
        return lambda v: v is None or (type(v) is str and TIMESTAMP_RE.fullmatch(v) is not None)


# A generator lets the report stream its per-trial rows through the schema.
_SEQUENCES = (list, tuple, types.GeneratorType)


@dataclass(frozen=True)
class List(Type):
    item: Type
    max_items: int | None = None

    def compile(self) -> Cleaner:
        item = self.item.compile()
        limit = self.max_items

        def clean(v: Any, s: Stats) -> list[Any] | None:
            if v is None:
                return None
            if type(v) not in _SEQUENCES:
                s.nulled_values += 1
                return None
            out = [item(x, s) for x in (v if limit is None else itertools.islice(v, limit))]
            if limit is not None:
                s.dropped_keys += sum(1 for _ in v) if isinstance(v, types.GeneratorType) else max(0, len(v) - limit)
            return out

        return clean

    def checker(self) -> Check:
        item, limit = self.item.checker(), self.max_items
        return lambda v: v is None or (type(v) is list and (limit is None or len(v) <= limit) and all(map(item, v)))


@dataclass(frozen=True)
class Map(Type):
    """An object with data-dependent keys; keys must themselves fit ``key`` (else dropped)."""

    key: Type
    value: Type
    max_items: int | None = None

    def compile(self) -> Cleaner:
        key_fn = self.key.compile()
        value_fn = self.value.compile()
        limit = self.max_items

        def clean(v: Any, s: Stats) -> dict[str, Any] | None:
            if v is None:
                return None
            if type(v) is not dict:
                s.nulled_values += 1
                return None
            out: dict[str, Any] = {}
            for raw_key, raw_value in v.items():
                if limit is not None and len(out) >= limit:
                    s.dropped_keys += 1
                    continue
                key = key_fn(raw_key, s)
                if key is None or key in out:
                    s.dropped_keys += 1
                    continue
                out[key] = value_fn(raw_value, s)
            return out

        return clean

    def checker(self) -> Check:
        key, value, limit = self.key.checker(), self.value.checker(), self.max_items
        return lambda v: v is None or (type(v) is dict and (limit is None or len(v) <= limit) and all(k is not None and key(k) and value(x) for k, x in v.items()))


# Compiled once per schema object: a report passes the same schema many times.
_COMPILED: dict[int, tuple[Type, Cleaner]] = {}
_CHECKERS: dict[int, tuple[Type, Check]] = {}


def sanitize(doc: Any, schema: Type) -> tuple[Any, Stats]:
    """The allowlisted copy of ``doc`` and what had to change to get it."""
    entry = _COMPILED.get(id(schema))
    if entry is None or entry[0] is not schema:
        entry = _COMPILED[id(schema)] = (schema, schema.compile())
    stats = Stats()
    return entry[1](doc, stats), stats


def is_allowlisted(doc: Any, schema: Type) -> bool:
    """True when ``doc`` passes ``schema`` unchanged (``sanitize`` would return an equal copy, counting nothing)."""
    entry = _CHECKERS.get(id(schema))
    if entry is None or entry[0] is not schema:
        entry = _CHECKERS[id(schema)] = (schema, schema.checker())
    return entry[1](doc)


def enum_or_unlisted(value: Any, vocabulary: tuple[str, ...]) -> str | None:
    """For code that must group by an enum before sanitizing (counts by reason)."""
    if value is None:
        return None
    return value if isinstance(value, str) and value in vocabulary else UNLISTED
