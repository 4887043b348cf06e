"""Word counting."""

import re


def count_words(text: str) -> dict[str, int]:
    """How often each word occurs, case-insensitively, punctuation ignored."""
    counts: dict[str, int] = {}
    for word in re.findall(r"[A-Za-z']+", text):
        key = word.lower()
        counts[key] = counts.get(key, 0) + 1
    return counts
