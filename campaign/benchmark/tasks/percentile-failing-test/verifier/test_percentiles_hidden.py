import unittest

from perfstats import latency_report, mean, percentile

SAMPLES = [12, 15, 11, 30, 22, 18, 14, 95, 16, 13]


def percentile_inc(values, p):
    """Independent PERCENTILE.INC: rank r = 1 + (n - 1) * p / 100, interpolate."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    whole = int(rank)
    if whole + 1 >= len(ordered):
        return float(ordered[-1])
    return ordered[whole] + (rank - whole) * (ordered[whole + 1] - ordered[whole])


class ReportTest(unittest.TestCase):
    def test_known_values(self):
        report = latency_report(SAMPLES)
        self.assertEqual(report["count"], 10)
        self.assertEqual(report["timeouts"], 0)
        self.assertAlmostEqual(report["mean"], 24.6)
        self.assertAlmostEqual(report["p50"], 15.5)
        self.assertAlmostEqual(report["p90"], 36.5)
        self.assertAlmostEqual(report["p99"], 89.15)
        self.assertEqual(report["max"], 95)

    def test_timeouts_are_excluded(self):
        report = latency_report(SAMPLES[:4] + [None, None])
        self.assertEqual((report["count"], report["timeouts"]), (4, 2))
        self.assertAlmostEqual(report["p50"], 13.5)
        self.assertEqual(report["max"], 30)

    def test_only_timeouts(self):
        report = latency_report([None, None])
        self.assertEqual((report["count"], report["timeouts"]), (0, 2))
        for key in ("mean", "p50", "p90", "p99", "max"):
            self.assertIsNone(report[key])

    def test_samples_not_modified(self):
        samples = list(SAMPLES) + [None]
        latency_report(samples)
        self.assertEqual(samples, SAMPLES + [None])


class PercentileTest(unittest.TestCase):
    def test_matches_percentile_inc(self):
        datasets = [SAMPLES, [5], [1, 2], [3, 1, 2], [2.5, 2.5, 2.5, 7.25], list(range(100, 0, -7)), [-4, 10, 0.5, 8, -1]]
        for values in datasets:
            for p in (0, 1, 10, 25, 33.3, 50, 66, 75, 90, 95, 99, 99.9, 100):
                with self.subTest(values=values, p=p):
                    self.assertAlmostEqual(percentile(values, p), percentile_inc(values, p), places=9)

    def test_extremes(self):
        self.assertEqual(percentile(SAMPLES, 0), 11)
        self.assertEqual(percentile(SAMPLES, 100), 95)
        self.assertEqual(percentile([42], 73), 42)
        self.assertAlmostEqual(percentile([1, 2], 25), 1.25)

    def test_input_not_modified_and_tuples_accepted(self):
        values = [3, 1, 2]
        percentile(values, 50)
        self.assertEqual(values, [3, 1, 2])
        self.assertEqual(percentile((3, 1, 2), 50), 2)

    def test_invalid(self):
        with self.assertRaises(ValueError):
            percentile([], 50)
        for p in (-1, 100.5):
            with self.assertRaises(ValueError):
                percentile([1, 2], p)

    def test_mean(self):
        self.assertAlmostEqual(mean(SAMPLES), 24.6)
        with self.assertRaises(ValueError):
            mean([])


if __name__ == "__main__":
    unittest.main()
