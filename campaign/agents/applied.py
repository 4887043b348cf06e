"""Which disclosure profiles an attempt applied, as the wire shows them.

For a client that cannot report it (``applied_profile_from = "wire"``) the
engine compares the tool catalogs the client sent with the catalogs each
variant's probe run sent: a catalog only one variant produced confirms that
variant's profile.
"""

from __future__ import annotations

from collections.abc import Mapping


def confirmed_profiles(catalog_digests: list[str] | None, expected: Mapping[str, list[str]], variant_profiles: Mapping[str, str]) -> tuple[str, ...] | None:
    """The disclosure profiles the wire confirms: one per observed catalog that a variant's
    probe produced. Any catalog no variant produced confirms nothing (an empty tuple)."""
    if not catalog_digests:
        return None
    applied: list[str] = []
    for digest in catalog_digests:
        owners = [variant for variant, digests in expected.items() if digest in digests]
        if len(owners) != 1:
            return ()
        profile = variant_profiles[owners[0]]
        if profile not in applied:
            applied.append(profile)
    return tuple(applied)
