import random
import unittest
from collections import OrderedDict

from cachekit import LRUCache, lru_memoize


class ModelCache:
    """Reference behaviour: an OrderedDict with the most recent key last."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.data = OrderedDict()

    def get(self, key, default=None):
        if key not in self.data:
            return default
        self.data.move_to_end(key)
        return self.data[key]

    def put(self, key, value):
        self.data[key] = value
        self.data.move_to_end(key)
        if len(self.data) > self.capacity:
            self.data.popitem(last=False)

    def pop(self, key, default=None):
        return self.data.pop(key, default)

    def order(self):
        return list(reversed(self.data))


class RecencyTest(unittest.TestCase):
    def test_get_protects_entry_from_eviction(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        cache.get("a")
        cache.put("c", 3)
        self.assertEqual(list(cache), ["c", "a"])
        self.assertNotIn("b", cache)
        self.assertEqual(cache.get("a"), 1)

    def test_put_existing_key_refreshes_it(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        cache.put("a", 10)
        cache.put("c", 3)
        self.assertEqual(list(cache), ["c", "a"])
        self.assertEqual(cache.peek("a"), 10)

    def test_peek_does_not_refresh(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        self.assertEqual(cache.peek("a"), 1)
        cache.put("c", 3)
        self.assertEqual(list(cache), ["c", "b"])

    def test_pop_of_oldest_then_overflow(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        self.assertEqual(cache.pop("a"), 1)
        cache.put("c", 3)
        cache.put("d", 4)
        self.assertEqual(list(cache), ["d", "c"])
        self.assertEqual(len(cache), 2)

    def test_pop_of_only_entry(self):
        cache = LRUCache(1)
        cache.put("a", 1)
        cache.pop("a")
        cache.put("b", 2)
        cache.put("c", 3)
        self.assertEqual(list(cache), ["c"])
        self.assertEqual(cache.evictions, 1)

    def test_capacity_one(self):
        cache = LRUCache(1)
        for i in range(5):
            cache.put(i, i)
            self.assertEqual(cache.get(i), i)
        self.assertEqual(list(cache), [4])
        self.assertEqual(cache.evictions, 4)

    def test_random_operations_match_reference(self):
        rng = random.Random(20240501)
        for capacity in (1, 2, 3, 5, 8):
            cache, model = LRUCache(capacity), ModelCache(capacity)
            for step in range(3000):
                key = rng.randrange(capacity * 2 + 2)
                op = rng.random()
                if op < 0.45:
                    value = rng.random()
                    cache.put(key, value)
                    model.put(key, value)
                elif op < 0.85:
                    self.assertEqual(cache.get(key), model.get(key), f"step {step}")
                else:
                    self.assertEqual(cache.pop(key), model.pop(key), f"step {step}")
                self.assertEqual(list(cache), model.order(), f"capacity {capacity}, step {step}")
                self.assertEqual(len(cache), len(model.data))
                self.assertEqual(list(reversed(list(cache))), list(model.data))


class MemoizeNoneTest(unittest.TestCase):
    def test_none_results_are_cached(self):
        calls = []

        @lru_memoize(maxsize=8)
        def lookup(name):
            calls.append(name)
            return None

        for _ in range(3):
            self.assertIsNone(lookup("x"))
        self.assertEqual(calls, ["x"])
        self.assertEqual((lookup.cache.hits, lookup.cache.misses), (2, 1))

    def test_falsy_and_keyword_results(self):
        calls = []

        @lru_memoize(maxsize=8)
        def f(x, *, scale=1):
            calls.append((x, scale))
            return 0 if x == 0 else x * scale

        self.assertEqual([f(0), f(0), f(2, scale=3), f(2, scale=3), f(2)], [0, 0, 6, 6, 2])
        self.assertEqual(calls, [(0, 1), (2, 3), (2, 1)])

    def test_memo_evicts_least_recently_used(self):
        calls = []

        @lru_memoize(maxsize=2)
        def ident(x):
            calls.append(x)
            return x

        ident(1)
        ident(2)
        ident(1)
        ident(3)
        ident(1)
        ident(2)
        self.assertEqual(calls, [1, 2, 3, 2])

    def test_cache_clear(self):
        calls = []

        @lru_memoize(maxsize=2)
        def ident(x):
            calls.append(x)
            return x

        ident(1)
        ident.cache_clear()
        ident(1)
        self.assertEqual(calls, [1, 1])


if __name__ == "__main__":
    unittest.main()
