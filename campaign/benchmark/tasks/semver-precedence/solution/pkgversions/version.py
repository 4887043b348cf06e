"""Semantic versions (https://semver.org, 2.0.0): parsing and precedence."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

_IDENT = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER = re.compile(
    rf"(?P<major>0|[1-9][0-9]*)\.(?P<minor>0|[1-9][0-9]*)\.(?P<patch>0|[1-9][0-9]*)"
    rf"(?:-(?P<pre>{_IDENT}(?:\.{_IDENT})*))?"
    r"(?:\+(?P<build>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
)


class InvalidVersion(ValueError):
    """Text that is not a semantic version."""


@total_ordering
@dataclass(frozen=True, eq=False)
class Version:
    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: tuple[str, ...] = ()

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return compare(self, other) == 0

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return compare(self, other) < 0

    def __hash__(self) -> int:
        # Build metadata does not take part in precedence, so not in the hash either.
        return hash((self.major, self.minor, self.patch, self.prerelease))

    @property
    def is_prerelease(self) -> bool:
        return bool(self.prerelease)


def parse(text: str) -> Version:
    """Parse ``"1.2.3"``, ``"1.0.0-rc.1"``, ``"1.0.0+build.5"``, ``"v1.2.3"``."""
    candidate = text.strip()
    if candidate[:1] in ("v", "V"):
        candidate = candidate[1:]
    match = _SEMVER.fullmatch(candidate)
    if match is None:
        raise InvalidVersion(f"not a semantic version: {text!r}")
    pre = match["pre"]
    build = match["build"]
    return Version(
        int(match["major"]),
        int(match["minor"]),
        int(match["patch"]),
        tuple(pre.split(".")) if pre else (),
        tuple(build.split(".")) if build else (),
    )


def compare(a: Version, b: Version) -> int:
    """Return -1, 0 or 1 as ``a`` has lower, equal or higher precedence than ``b``.

    Precedence follows Semantic Versioning 2.0.0, section 11:

    1. Major, minor and patch are compared numerically, in that order; the first
       difference decides (1.9.0 < 1.10.0 < 2.0.0).
    2. When major, minor and patch are equal, a pre-release version has lower
       precedence than the normal version: 1.0.0-alpha < 1.0.0.
    3. Two pre-release versions with equal major, minor and patch are compared
       identifier by identifier (the dot-separated parts), left to right, until
       a difference is found:

       - identifiers consisting only of digits are compared numerically;
       - identifiers with letters or hyphens are compared lexically in ASCII
         sort order;
       - numeric identifiers always have lower precedence than non-numeric ones;
       - when all identifiers of the shorter list equal the start of the longer
         one, the longer list has higher precedence.

    4. Build metadata (after ``+``) is ignored: 1.0.0+build.1 and 1.0.0+exp.sha
       have equal precedence.

    Example, in ascending order: 1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-alpha.beta
    < 1.0.0-beta < 1.0.0-beta.2 < 1.0.0-beta.11 < 1.0.0-rc.1 < 1.0.0.
    """
    if (a.major, a.minor, a.patch) != (b.major, b.minor, b.patch):
        return -1 if (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch) else 1
    if a.prerelease == b.prerelease:
        return 0
    if not a.prerelease:
        return 1
    if not b.prerelease:
        return -1
    for left, right in zip(a.prerelease, b.prerelease):
        if left == right:
            continue
        return -1 if _identifier_key(left) < _identifier_key(right) else 1
    return -1 if len(a.prerelease) < len(b.prerelease) else 1


def _identifier_key(identifier: str) -> tuple[int, int, str]:
    """Numeric identifiers sort first and by value; others after, in ASCII order."""
    if identifier.isdigit():
        return (0, int(identifier), "")
    return (1, 0, identifier)
