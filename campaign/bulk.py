"""Working through many rows at once (a report's or a chain check's 100,000)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector while building many small acyclic objects.

    Reading 100,000 rows makes hundreds of thousands of tuples and strings and no
    reference cycles; the collector's repeated full passes over them cost about as
    much as the work itself.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
