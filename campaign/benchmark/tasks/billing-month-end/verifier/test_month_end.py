import calendar
import unittest
from datetime import date, timedelta

from subscriptions import add_months, billing_dates, next_billing_date


def expected_add(day, months):
    index = day.year * 12 + day.month - 1 + months
    year, month0 = divmod(index, 12)
    last = calendar.monthrange(year, month0 + 1)[1]
    return date(year, month0 + 1, min(day.day, last))


class AddMonthsTest(unittest.TestCase):
    def test_examples(self):
        self.assertEqual(add_months(date(2024, 1, 31), 1), date(2024, 2, 29))
        self.assertEqual(add_months(date(2023, 1, 31), 1), date(2023, 2, 28))
        self.assertEqual(add_months(date(2024, 2, 29), 12), date(2025, 2, 28))
        self.assertEqual(add_months(date(2024, 2, 29), 48), date(2028, 2, 29))
        self.assertEqual(add_months(date(2024, 3, 31), -1), date(2024, 2, 29))
        self.assertEqual(add_months(date(2024, 5, 31), 1), date(2024, 6, 30))
        self.assertEqual(add_months(date(2024, 12, 31), 2), date(2025, 2, 28))
        self.assertEqual(add_months(date(2025, 1, 30), -2), date(2024, 11, 30))
        self.assertEqual(add_months(date(2024, 8, 31), 0), date(2024, 8, 31))

    def test_mid_month_unchanged(self):
        self.assertEqual(add_months(date(2024, 5, 15), 1), date(2024, 6, 15))
        self.assertEqual(add_months(date(2024, 11, 3), 2), date(2025, 1, 3))
        self.assertEqual(add_months(date(2024, 1, 10), -1), date(2023, 12, 10))
        self.assertEqual(add_months(date(2024, 1, 10), -25), date(2021, 12, 10))

    def test_every_day_of_four_years(self):
        day = date(2023, 1, 1)
        while day < date(2027, 1, 1):
            for months in (-13, -1, 1, 2, 11, 12, 13, 25):
                self.assertEqual(add_months(day, months), expected_add(day, months), f"{day} {months:+d}")
            day += timedelta(days=1)


class BillingDatesTest(unittest.TestCase):
    def test_end_of_month_subscription(self):
        self.assertEqual(
            billing_dates(date(2024, 1, 31), 6),
            [date(2024, 1, 31), date(2024, 2, 29), date(2024, 3, 31), date(2024, 4, 30), date(2024, 5, 31), date(2024, 6, 30)],
        )

    def test_thirtieth_across_february(self):
        self.assertEqual(
            billing_dates(date(2022, 12, 30), 4),
            [date(2022, 12, 30), date(2023, 1, 30), date(2023, 2, 28), date(2023, 3, 30)],
        )

    def test_leap_day_start(self):
        dates = billing_dates(date(2024, 2, 29), 25)
        self.assertEqual(dates[12], date(2025, 2, 28))
        self.assertEqual(dates[13], date(2025, 3, 29))
        self.assertEqual(dates[24], date(2026, 2, 28))

    def test_edge_counts(self):
        self.assertEqual(billing_dates(date(2024, 1, 31), 0), [])
        self.assertEqual(billing_dates(date(2024, 1, 31), 1), [date(2024, 1, 31)])

    def test_every_start_day(self):
        day = date(2023, 1, 1)
        while day < date(2025, 1, 1):
            dates = billing_dates(day, 26)
            self.assertEqual(dates, [expected_add(day, n) for n in range(26)], str(day))
            day += timedelta(days=1)


class NextBillingDateTest(unittest.TestCase):
    def test_examples(self):
        self.assertEqual(next_billing_date(date(2024, 1, 31), date(2024, 2, 29)), date(2024, 3, 31))
        self.assertEqual(next_billing_date(date(2024, 1, 31), date(2024, 2, 28)), date(2024, 2, 29))
        self.assertEqual(next_billing_date(date(2024, 1, 31), date(2024, 1, 30)), date(2024, 1, 31))
        self.assertEqual(next_billing_date(date(2024, 1, 31), date(2023, 6, 1)), date(2024, 1, 31))
        self.assertEqual(next_billing_date(date(2024, 1, 5), date(2024, 3, 5)), date(2024, 4, 5))

    def test_agrees_with_billing_dates(self):
        for start in (date(2023, 1, 29), date(2023, 1, 30), date(2023, 1, 31), date(2023, 3, 31), date(2024, 2, 29), date(2023, 8, 15)):
            dates = billing_dates(start, 40)
            after = start - timedelta(days=3)
            while after < dates[-2]:
                expected = next(d for d in dates if d > after)
                self.assertEqual(next_billing_date(start, after), expected, f"start {start}, after {after}")
                after += timedelta(days=1)


if __name__ == "__main__":
    unittest.main()
