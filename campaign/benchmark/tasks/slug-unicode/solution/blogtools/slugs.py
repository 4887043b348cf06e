"""URL slugs: a post title as lowercase ASCII words joined by hyphens."""

from __future__ import annotations

import re
import unicodedata

MAX_LENGTH = 60
FALLBACK = "post"

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def _ascii_fold(title: str) -> str:
    """Lowercase ASCII approximation: casefold ("ß" -> "ss"), then NFKD splits "é"
    into "e" + combining accent and "ﬁ" into "fi"; whatever is still not ASCII
    (combining marks, CJK, emoji) is dropped here and later acts as a separator."""
    decomposed = unicodedata.normalize("NFKD", title.casefold())
    return "".join(ch if ch.isascii() else ("" if unicodedata.combining(ch) else " ") for ch in decomposed)


def truncate(slug: str, max_length: int) -> str:
    """Cut ``slug`` back to the last whole word within ``max_length`` characters;
    a first word longer than that is cut at ``max_length``."""
    if len(slug) <= max_length:
        return slug
    cut = slug.rfind("-", 0, max_length + 1)
    if cut <= 0:
        return slug[:max_length].rstrip("-")
    return slug[:cut]


def slugify(title: str, max_length: int = MAX_LENGTH) -> str:
    """Return the slug for ``title``, at most ``max_length`` characters long.

    >>> slugify("Hello, World!")
    'hello-world'
    >>> slugify("Crème Brûlée")
    'creme-brulee'
    """
    slug = _SEPARATORS.sub("-", _ascii_fold(title)).strip("-")
    return truncate(slug, max_length) if slug else FALLBACK
