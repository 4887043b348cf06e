"""A least-recently-used cache with O(1) get and put.

Entries live in a dict for lookup and in a doubly linked list for recency: the
head is the most recently used entry, the tail the least recently used one, which
is the next to be evicted.
"""

from __future__ import annotations

from typing import Any, Hashable, Iterator


class _Node:
    __slots__ = ("key", "value", "prev", "next")

    def __init__(self, key: Hashable, value: Any) -> None:
        self.key = key
        self.value = value
        self.prev: _Node | None = None
        self.next: _Node | None = None


class LRUCache:
    """Map up to ``capacity`` keys to values, evicting the least recently used.

    ``get`` and ``put`` count as a use of the key; ``peek``, ``in`` and iteration
    do not. Iteration yields keys from most to least recently used.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._nodes: dict[Hashable, _Node] = {}
        self._head: _Node | None = None
        self._tail: _Node | None = None
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._nodes

    def __iter__(self) -> Iterator[Hashable]:
        node = self._head
        while node is not None:
            yield node.key
            node = node.next

    def get(self, key: Hashable, default: Any = None) -> Any:
        node = self._nodes.get(key)
        if node is None:
            self.misses += 1
            return default
        self.hits += 1
        self._move_to_front(node)
        return node.value

    def peek(self, key: Hashable, default: Any = None) -> Any:
        node = self._nodes.get(key)
        return default if node is None else node.value

    def put(self, key: Hashable, value: Any) -> None:
        node = self._nodes.get(key)
        if node is not None:
            node.value = value
            self._move_to_front(node)
            return
        node = _Node(key, value)
        self._nodes[key] = node
        self._push_front(node)
        if len(self._nodes) > self.capacity:
            self._evict_lru()

    def pop(self, key: Hashable, default: Any = None) -> Any:
        node = self._nodes.pop(key, None)
        if node is None:
            return default
        self._unlink(node)
        return node.value

    def clear(self) -> None:
        self._nodes.clear()
        self._head = self._tail = None

    def _push_front(self, node: _Node) -> None:
        node.prev = None
        node.next = self._head
        if self._head is not None:
            self._head.prev = node
        self._head = node
        if self._tail is None:
            self._tail = node

    def _unlink(self, node: _Node) -> None:
        if node.prev is not None:
            node.prev.next = node.next
        else:
            self._head = node.next
        if node.next is not None:
            node.next.prev = node.prev
        else:
            self._tail = node.prev
        node.prev = node.next = None

    def _move_to_front(self, node: _Node) -> None:
        if node is self._head:
            return
        self._unlink(node)
        self._push_front(node)

    def _evict_lru(self) -> None:
        node = self._tail
        assert node is not None
        self._unlink(node)
        del self._nodes[node.key]
        self.evictions += 1
