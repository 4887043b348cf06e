import itertools
import unittest

from pkgversions import Version, compare, max_satisfying, parse, satisfies, sort_versions

SPEC_ORDER = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1-0",
    "1.0.1",
    "1.2.0",
    "1.9.0",
    "1.10.0",
    "2.0.0-rc.1",
    "2.0.0",
    "10.0.0",
]


class CompareTest(unittest.TestCase):
    def test_total_order_of_examples(self):
        versions = [parse(text) for text in SPEC_ORDER]
        for (i, a), (j, b) in itertools.product(enumerate(versions), repeat=2):
            expected = (i > j) - (i < j)
            self.assertEqual(compare(a, b), expected, f"compare({a}, {b})")

    def test_returns_exactly_minus_one_zero_one(self):
        self.assertEqual(compare(parse("1.0.0"), parse("9.0.0")), -1)
        self.assertEqual(compare(parse("9.0.0"), parse("1.0.0")), 1)
        self.assertEqual(compare(parse("1.0.0-alpha.5"), parse("1.0.0-alpha.900")), -1)
        self.assertEqual(compare(parse("1.0.0-zeta"), parse("1.0.0-alpha")), 1)

    def test_numeric_identifiers_compare_numerically(self):
        self.assertEqual(compare(parse("1.0.0-alpha.10"), parse("1.0.0-alpha.9")), 1)
        self.assertEqual(compare(parse("1.0.0-2"), parse("1.0.0-10")), -1)

    def test_numeric_lower_than_alphanumeric(self):
        self.assertEqual(compare(parse("1.0.0-1"), parse("1.0.0-a")), -1)
        self.assertEqual(compare(parse("1.0.0-999"), parse("1.0.0--")), -1)
        self.assertEqual(compare(parse("1.0.0-rc.1"), parse("1.0.0-rc.x")), -1)

    def test_alphanumeric_ascii_order(self):
        self.assertEqual(compare(parse("1.0.0-Beta"), parse("1.0.0-alpha")), -1)
        self.assertEqual(compare(parse("1.0.0-alpha-2"), parse("1.0.0-alpha2")), -1)
        self.assertEqual(compare(parse("1.0.0-1a"), parse("1.0.0-2")), 1)

    def test_longer_prerelease_wins_when_prefix_equal(self):
        self.assertEqual(compare(parse("1.0.0-alpha.1"), parse("1.0.0-alpha")), 1)
        self.assertEqual(compare(parse("1.0.0-alpha.1.0"), parse("1.0.0-alpha.1")), 1)

    def test_build_metadata_ignored(self):
        self.assertEqual(compare(parse("1.0.0+build.1"), parse("1.0.0+exp.sha.5114f85")), 0)
        self.assertEqual(compare(parse("1.0.0-rc.1+b"), parse("1.0.0-rc.1")), 0)
        self.assertEqual(compare(parse("1.0.0+zzz"), parse("1.0.1")), -1)
        self.assertEqual(compare(parse("1.0.0-rc.1+zzz"), parse("1.0.0")), -1)

    def test_equal_versions(self):
        for text in SPEC_ORDER:
            self.assertEqual(compare(parse(text), parse(text)), 0)


class OperatorsTest(unittest.TestCase):
    def test_rich_comparisons(self):
        self.assertLess(parse("1.0.0-rc.1"), parse("1.0.0"))
        self.assertGreater(parse("1.10.0"), parse("1.9.9"))
        self.assertLessEqual(parse("1.0.0+a"), parse("1.0.0+b"))
        self.assertEqual(parse("1.0.0+a"), parse("1.0.0+b"))
        self.assertNotEqual(parse("1.0.0"), parse("1.0.0-0"))
        self.assertEqual(len({parse("1.0.0+a"), parse("1.0.0+b"), parse("1.0.0")}), 1)
        self.assertEqual(Version(1, 2, 3), parse("1.2.3"))

    def test_sorted(self):
        shuffled = SPEC_ORDER[1::2][::-1] + SPEC_ORDER[0::2]
        self.assertEqual(sorted(shuffled), sorted(SPEC_ORDER))
        self.assertEqual(sorted(shuffled, key=parse), SPEC_ORDER)


class RangesTest(unittest.TestCase):
    def test_sort_versions(self):
        self.assertEqual(
            sort_versions(["1.10.0", "1.2.0", "1.0.0", "1.0.0-rc.1", "v1.9.0", "1.0.0-beta.11", "1.0.0-beta.2"]),
            ["1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.2.0", "v1.9.0", "1.10.0"],
        )

    def test_satisfies(self):
        self.assertTrue(satisfies("1.4.2", ">=1.2.0, <2.0.0"))
        self.assertFalse(satisfies("2.0.0", ">=1.2.0, <2.0.0"))
        self.assertTrue(satisfies("2.0.0-rc.1", "<2.0.0"))
        self.assertTrue(satisfies("1.0.0+build", "==1.0.0"))
        self.assertTrue(satisfies("1.0.1", "!=1.0.0"))

    def test_max_satisfying(self):
        available = ["1.2.0", "1.10.0", "1.9.3", "2.0.0-rc.1", "2.0.0", "1.11.0-beta.1", "0.9.0"]
        self.assertEqual(max_satisfying(available, ">=1.2.0, <2.0.0"), "1.10.0")
        self.assertEqual(max_satisfying(available, ">=1.2.0, <2.0.0", include_prereleases=True), "2.0.0-rc.1")
        self.assertEqual(max_satisfying(available, ">=1.2.0, <1.11.0", include_prereleases=True), "1.11.0-beta.1")
        self.assertEqual(max_satisfying(available, ">=3.0.0"), None)
        self.assertEqual(max_satisfying(available, ">0.0.0"), "2.0.0")


if __name__ == "__main__":
    unittest.main()
