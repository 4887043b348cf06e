"""Memoize a function's results in an LRU cache."""

from __future__ import annotations

import functools
from typing import Any, Callable, Hashable

from .lru import LRUCache

_KWARGS_MARK = object()
_MISSING = object()


def _make_key(args: tuple, kwargs: dict) -> Hashable:
    if not kwargs:
        return args
    return args + (_KWARGS_MARK,) + tuple(sorted(kwargs.items()))


def lru_memoize(maxsize: int = 128) -> Callable[[Callable], Callable]:
    """Decorator: cache the results of a function of hashable arguments.

    The wrapper exposes the cache as ``wrapper.cache`` (its ``hits``/``misses``
    count calls served from the cache / computed) and ``wrapper.cache_clear()``.
    """

    def decorate(func: Callable) -> Callable:
        cache = LRUCache(maxsize)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = _make_key(args, kwargs)
            result = cache.get(key, _MISSING)
            if result is _MISSING:
                result = func(*args, **kwargs)
                cache.put(key, result)
            return result

        wrapper.cache = cache  # type: ignore[attr-defined]
        wrapper.cache_clear = cache.clear  # type: ignore[attr-defined]
        return wrapper

    return decorate

