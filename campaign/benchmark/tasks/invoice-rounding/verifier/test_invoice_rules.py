import unittest

from billing import Invoice, format_amount, parse_amount, round_cents


def cents(text):
    return format_amount(round_cents(parse_amount(text)))


class RoundingTest(unittest.TestCase):
    def test_halves_round_away_from_zero(self):
        cases = {
            "2.675": "2.68",
            "1.005": "1.01",
            "0.125": "0.13",
            "0.115": "0.12",
            "-0.125": "-0.13",
            "-2.675": "-2.68",
            "2.674": "2.67",
            "1,234.565": "1,234.57",
            "12,345,678.905": "12,345,678.91",
        }
        for text, expected in cases.items():
            with self.subTest(text=text):
                self.assertEqual(cents(text), expected)

    def test_existing_formatting_kept(self):
        self.assertEqual(cents("1234.5"), "1,234.50")
        self.assertEqual(cents("-3"), "-3.00")
        self.assertEqual(cents("0"), "0.00")

    def test_parse_still_rejects_empty(self):
        with self.assertRaises(ValueError):
            parse_amount("   ")


class InvoiceRulesTest(unittest.TestCase):
    def test_fuel_example(self):
        invoice = Invoice("F-1")
        invoice.add("Diesel", 5, "1.609")
        self.assertEqual(invoice.summary(), {"subtotal": "8.05", "tax": "0.00", "total": "8.05"})
        invoice = Invoice("F-2")
        invoice.add("Petrol", 1, "2.675")
        invoice.add("Petrol", 3, "1.675")
        self.assertEqual(invoice.summary(), {"subtotal": "7.71", "tax": "0.00", "total": "7.71"})

    def test_sticker_example_tax_per_line(self):
        invoice = Invoice("S-1")
        for _ in range(3):
            invoice.add("Sticker", 1, "0.05", "10")
        self.assertEqual(invoice.summary(), {"subtotal": "0.15", "tax": "0.03", "total": "0.18"})

    def test_mixed_rates(self):
        invoice = Invoice("M-1")
        invoice.add("Service", 1, "10.00", "7.5")
        invoice.add("Parts", 2, "3.335", "7.5")
        invoice.add("Booklet", 1, "0.99", "19")
        self.assertEqual(invoice.summary(), {"subtotal": "17.66", "tax": "1.44", "total": "19.10"})

    def test_fractional_rate(self):
        invoice = Invoice("R-1")
        invoice.add("Ticket", 1, "19.99", "8.875")
        self.assertEqual(invoice.summary(), {"subtotal": "19.99", "tax": "1.77", "total": "21.76"})

    def test_credit_line(self):
        invoice = Invoice("C-1")
        invoice.add("Refund", -1, "2.675", "10")
        invoice.add("Item", 1, "5.00", "10")
        self.assertEqual(invoice.summary(), {"subtotal": "2.32", "tax": "0.23", "total": "2.55"})

    def test_large_amount(self):
        invoice = Invoice("L-1")
        invoice.add("Building", 1, "12,345,678.905", "0")
        invoice.add("Fee", 1, "0.10", "0")
        self.assertEqual(invoice.summary()["total"], "12,345,679.01")

    def test_many_small_lines(self):
        invoice = Invoice("N-1")
        for _ in range(1000):
            invoice.add("Screw", 1, "0.1", "5")
        self.assertEqual(invoice.summary(), {"subtotal": "100.00", "tax": "10.00", "total": "110.00"})

    def test_existing_behaviour(self):
        invoice = Invoice("2024-0001")
        invoice.add("Widget", 2, "19.99", "20")
        invoice.add("Manual", 1, "5.00")
        self.assertEqual(invoice.summary(), {"subtotal": "44.98", "tax": "8.00", "total": "52.98"})
        self.assertEqual(Invoice("E").summary(), {"subtotal": "0.00", "tax": "0.00", "total": "0.00"})


if __name__ == "__main__":
    unittest.main()
