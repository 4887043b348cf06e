"""Objects of the allowlist, cleaned and checked by generated code.

An object is where the time goes: a 100,000-trial report is 100,000 objects of
forty fields. So ``Obj`` generates one function per schema object, with every
scalar leaf's ``Rule`` inlined and the other fields calling their own cleaner;
``compile_rows`` does the same straight from database tuples, never building
the intermediate dict. The generated code applies exactly the rules the leaves
state (``report/allowlist.py``), with the same counts: a property test holds
the two ways to the same answer. Only schema keys (checked to be plain
identifiers) and the rules' fixed code go into the generated source.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from campaign.report.allowlist import Check, Cleaner, Const, Pattern, Stats, Type, generate

RowsCleaner = Callable[[Any, Stats], list[dict[str, Any]]]
_KEY_RE = re.compile(r"[a-z_][a-z0-9_]{0,63}")


@dataclass(frozen=True)
class Obj(Type):
    """An object with exactly these keys (missing ones become null, extra ones are dropped).

    A key in ``optional`` is left out where the value has none rather than made null,
    so a section can grow a key for new runs (an experiment of more than the built-in
    two variants) and every report written before stays the same, byte for byte."""

    fields: Mapping[str, Type] = field(default_factory=dict)
    optional: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not self.optional <= set(self.fields):
            raise ValueError(f"optional keys {sorted(self.optional - set(self.fields))} are not fields")

    def compile(self) -> Cleaner:
        namespace: dict[str, Any] = {"keys": frozenset(self.fields)}
        body = [
            "def clean(v, s):",
            "    if v is None:",
            "        return None",
            "    if type(v) is not dict:",
            "        s.nulled_values += 1",
            "        return None",
            "    if not keys.issuperset(v):",
            "        s.dropped_keys += len(set(v) - keys)",
            "    get = v.get",
        ]
        for i, (key, node) in enumerate(self.fields.items()):
            body += _field_code(namespace, i, key, node, f"get({key!r})", "    ")
        keys = list(self.fields)
        if all(key in self.optional for key in keys[len(keys) - len(self.optional) :]):
            # Optional keys only at the end: the required ones in one literal, then those present.
            body.append("    out = {" + self._literal() + "}")
            body += [f"    if {key!r} in v:\n        out[{key!r}] = a{i}" for i, key in enumerate(keys) if key in self.optional]
        else:
            # One in the middle keeps its place among the others (reports are written unsorted).
            body.append("    out = {}")
            body += [f"    if {key!r} in v:\n        out[{key!r}] = a{i}" if key in self.optional else f"    out[{key!r}] = a{i}" for i, key in enumerate(keys)]
        body.append("    return out")
        return generate(body, namespace, "clean")

    def compile_rows(
        self,
        columns: Sequence[str],
        derived: Mapping[str, tuple[Callable[..., Any], tuple[str, ...]]] | None = None,
        memoized: Mapping[str, tuple[Callable[..., Any], tuple[str, ...]]] | None = None,
        stored_booleans: Sequence[str] = (),
    ) -> RowsCleaner:
        """A generated function cleaning whole database rows (tuples) into this object's dicts.

        ``columns`` names the tuple positions; a field found there is read from
        its position, a field in ``derived`` is ``fn(*those columns)`` (e.g. a JSON
        text parsed), and any other field is null. Each value then passes the
        same checks ``compile`` applies, with the same counts, so
        ``compile_rows(cols)(rows, s)`` equals ``[compile()(dict(zip(cols, r)), s)
        for r in rows]`` for rows holding only the schema's keys. A field in
        ``memoized`` is like one in ``derived``, computed and cleaned once per
        distinct set of column values (see ``Memoized``). A column in
        ``stored_booleans`` holds a boolean as the database stores it (0/1 in
        SQLite) and is read the way SQLAlchemy's Boolean reads one (``bool(value)``,
        None kept) before its check.
        """
        if self.optional:
            raise ValueError("a row has every column: an object with optional keys is cleaned with compile()")
        derived = dict(derived or {})
        memoized = dict(memoized or {})
        index = {name: i for i, name in enumerate(columns)}
        namespace: dict[str, Any] = {"memo_keys": Memoized.KEY_TYPES}
        body = ["def clean_rows(rows, s):", "    out = []", "    append = out.append", "    for r in rows:"]
        for i, (key, node) in enumerate(self.fields.items()):
            if key in memoized:
                fn, args = memoized[key]
                memo = namespace[f"m{i}"] = Memoized(node, fn)
                namespace[f"k{i}"] = memo.cache
                parts = [f"r[{index[a]}]" for a in args]
                arg = parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"
                body += [
                    f"        x = {arg}",
                    f"        h = k{i}.get(x) if type(x) in memo_keys else None",
                    f"        a{i} = (list(h[0]) if h[2] else h[0]) if h is not None and not h[1] else m{i}(x, s)",
                ]
                continue
            if key in derived:
                fn, args = derived[key]
                namespace[f"d{i}"] = fn
                source = f"d{i}(" + ", ".join(f"r[{index[a]}]" for a in args) + ")"
            elif key in index and key in stored_booleans:
                source = f"(None if r[{index[key]}] is None else bool(r[{index[key]}]))"
            elif key in index:
                source = f"r[{index[key]}]"
            else:
                source = "None"
            body += _field_code(namespace, i, key, node, source, "        ")
        body.append("        append({" + self._literal() + "})")
        body.append("    return out")
        return generate(body, namespace, "clean_rows")

    def checker(self) -> Check:
        required = frozenset(self.fields) - self.optional
        namespace: dict[str, Any] = {"keys": frozenset(self.fields), "required": required}
        body = [
            "def check(v):",
            "    if v is None:",
            "        return True",
            "    if type(v) is not dict or not keys.issuperset(v) or not required.issubset(v):",
            "        return False",
        ]
        for i, (key, child) in enumerate(self.fields.items()):
            _plain(key)
            # An optional key that is absent has nothing to check; present, it is null or valid.
            pad = "    " if key in self.optional else ""
            if pad:
                body.append(f"    if {key!r} in v:")
            body.append(f"    {pad}x = v[{key!r}]")
            rule = child.rule()
            if rule is not None:
                body.append(f"    {pad}if not ({rule.expression('x', namespace, str(i))}):")
            else:
                namespace[f"f{i}"] = child.checker()
                body.append(f"    {pad}if not f{i}(x):")
            body.append(f"    {pad}    return False")
        body.append("    return True")
        return generate(body, namespace, "check")

    def _literal(self) -> str:
        return ", ".join(f"{key!r}: a{i}" for i, key in enumerate(self.fields) if key not in self.optional)


class Memoized:
    """``node``'s cleaner applied to ``fn(*key)``, once per distinct key.

    For columns with a handful of distinct values over many rows (the applied
    profiles' JSON, with the trial's variant). Each call still adds that value's
    counts to the caller's Stats, so the redaction block counts every
    occurrence, and a list comes back as a fresh copy (its items must be
    scalars), never shared between rows. ``cache`` maps a key to (value, whether
    cleaning counted anything, whether it is a list); generated row cleaners read
    it directly and call the object only for a key not seen before or one whose
    cleaning counted something.
    """

    KEY_TYPES = frozenset({str, type(None), tuple, int, bool})
    _LIMIT = 4096

    def __init__(self, node: Type, fn: Callable[..., Any]) -> None:
        self._clean = node.compile()
        self._fn = fn
        self.cache: dict[Any, tuple[Any, tuple[int, int, int, int] | None, bool]] = {}

    def __call__(self, key: Any, s: Stats) -> Any:
        hit = self.cache.get(key) if type(key) in self.KEY_TYPES else None
        if hit is None:
            counts = Stats()
            value = self._clean(self._fn(*key) if type(key) is tuple else self._fn(key), counts)
            counted = (counts.dropped_keys, counts.unlisted_values, counts.redacted_ids, counts.nulled_values)
            hit = (tuple(value) if type(value) is list else value, counted if any(counted) else None, type(value) is list)
            if type(key) in self.KEY_TYPES and len(self.cache) < self._LIMIT:
                self.cache[key] = hit
        value, counted, is_list = hit
        if counted:
            s.dropped_keys += counted[0]
            s.unlisted_values += counted[1]
            s.redacted_ids += counted[2]
            s.nulled_values += counted[3]
        return list(value) if is_list else value


def _plain(key: str) -> None:
    if not _KEY_RE.fullmatch(key):
        raise ValueError(f"schema key {key!r} is not a plain identifier")


def _field_code(namespace: dict[str, Any], i: int, key: str, node: Type, source: str, indent: str) -> list[str]:
    """Source lines setting ``a{i}`` to the cleaned value of ``source`` for one schema field."""
    _plain(key)
    var = f"a{i}"
    lines = [f"{var} = {source}"]
    rule = node.rule()
    if rule is not None:
        namespace[f"r{i}"] = rule.replacement
        lines += [f"if not ({rule.expression(var, namespace, str(i))}):", f"    s.{rule.counter} += 1", f"    {var} = r{i}"]
    elif isinstance(node, Const):
        namespace[f"c{i}"] = node.value
        lines = [f"{var} = c{i}"]
    elif isinstance(node, Pattern):
        # A value seen before and allowed is taken from the cleaner's cache; anything
        # else (new, refused, not a string) goes through the cleaner itself.
        cleaner = node.compile()
        namespace[f"f{i}"], namespace[f"k{i}"] = cleaner, cleaner.cache  # type: ignore[attr-defined]
        lines += [
            f"if {var} is not None:",
            f"    h = k{i}.get({var}) if type({var}) is str else None",
            f"    {var} = h[0] if h is not None and not h[1] else f{i}({var}, s)",
        ]
    else:
        # Every cleaner maps None to None: only call it for a value.
        namespace[f"f{i}"] = node.compile()
        lines += [f"if {var} is not None:", f"    {var} = f{i}({var}, s)"]
    return [indent + line for line in lines]
