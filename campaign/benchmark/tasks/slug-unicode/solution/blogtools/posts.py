"""Choosing the slug of a new post."""

from __future__ import annotations

from collections.abc import Container

from .slugs import MAX_LENGTH, slugify, truncate


def unique_slug(title: str, taken: Container[str], max_length: int = MAX_LENGTH) -> str:
    """A slug for ``title`` that is not in ``taken``: "title", "title-2", "title-3", ...

    Every candidate fits in ``max_length``: the base is shortened to make room
    for the number.
    """
    base = slugify(title, max_length)
    slug = base
    number = 2
    while slug in taken:
        suffix = f"-{number}"
        slug = truncate(base, max_length - len(suffix)) + suffix
        number += 1
    return slug
