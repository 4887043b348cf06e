import re
import unittest

from blogtools import MAX_LENGTH, slugify, unique_slug

SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class FoldingTest(unittest.TestCase):
    def test_accents_become_ascii(self):
        cases = {
            "Crème Brûlée for Beginners": "creme-brulee-for-beginners",
            "Ångström units": "angstrom-units",
            "naïve café — déjà vu": "naive-cafe-deja-vu",
            "ÉCOLE NORMALE": "ecole-normale",
            "Zürich über alles": "zurich-uber-alles",
            "São Paulo, Kraków": "sao-paulo-krakow",
        }
        for title, expected in cases.items():
            with self.subTest(title=title):
                self.assertEqual(slugify(title), expected)

    def test_decomposed_input(self):
        self.assertEqual(slugify("Cafe\u0301 au lait"), "cafe-au-lait")

    def test_sharp_s(self):
        self.assertEqual(slugify("Straße"), "strasse")
        self.assertEqual(slugify("GROẞE Pläne"), "grosse-plane")

    def test_compatibility_forms(self):
        self.assertEqual(slugify("ﬁnal ﬂag"), "final-flag")
        self.assertEqual(slugify("ＦＵＬＬ width ＡＢＣ"), "full-width-abc")

    def test_non_ascii_scripts_separate_words(self):
        self.assertEqual(slugify("日本語 and English"), "and-english")
        self.assertEqual(slugify("Party🎉time"), "party-time")

    def test_empty_result_falls_back(self):
        for title in ("🎉🎉🎉", "日本語", "", "   ", "--!!--"):
            with self.subTest(title=title):
                self.assertEqual(slugify(title), "post")

    def test_existing_behaviour(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")
        self.assertEqual(slugify("  Python 3.12 -- what's new?  "), "python-3-12-what-s-new")


class TruncationTest(unittest.TestCase):
    def test_cut_at_word_boundary(self):
        self.assertEqual(slugify("The quick brown fox jumps", max_length=12), "the-quick")
        self.assertEqual(slugify("The quick brown fox jumps", max_length=15), "the-quick-brown")
        self.assertEqual(slugify("The quick brown fox jumps", max_length=14), "the-quick")
        self.assertEqual(slugify("abc def", max_length=3), "abc")
        self.assertEqual(slugify("abc def", max_length=4), "abc")

    def test_long_first_word(self):
        self.assertEqual(slugify("Supercalifragilistic expialidocious", max_length=10), "supercalif")

    def test_default_limit(self):
        title = "A very long title " * 10
        slug = slugify(title)
        self.assertLessEqual(len(slug), MAX_LENGTH)
        self.assertTrue(title.lower().replace(" ", "-").startswith(slug + "-"))

    def test_every_limit_gives_a_clean_prefix(self):
        title = "Crème brûlée: the definitive guide to caramelised sugar, custard and ramekins"
        full = slugify(title, max_length=1000)
        words = full.split("-")
        for limit in range(1, len(full) + 2):
            with self.subTest(limit=limit):
                slug = slugify(title, max_length=limit)
                self.assertLessEqual(len(slug), limit)
                self.assertRegex(slug, SLUG)
                if len(words[0]) > limit:
                    self.assertEqual(slug, words[0][:limit])
                else:
                    kept = slug.split("-")
                    self.assertEqual(kept, words[: len(kept)])
                    if len(kept) < len(words):
                        self.assertGreater(len(slug) + 1 + len(words[len(kept)]), limit)


class UniqueSlugTest(unittest.TestCase):
    def test_existing_behaviour(self):
        taken = {"hello-world", "hello-world-2"}
        self.assertEqual(unique_slug("Hello world", taken), "hello-world-3")
        self.assertEqual(unique_slug("Something new", taken), "something-new")

    def test_suffix_fits_max_length(self):
        self.assertEqual(unique_slug("Hello world", {"hello-world"}, max_length=12), "hello-2")
        self.assertEqual(unique_slug("Hello world", {"hello-world", "hello-2"}, max_length=12), "hello-3")
        self.assertEqual(unique_slug("Hello world", {"hello-world"}, max_length=13), "hello-world-2")

    def test_suffix_on_long_single_word(self):
        slug = unique_slug("Supercalifragilistic", {"supercalif"}, max_length=10)
        self.assertEqual(slug, "supercal-2")

    def test_many_collisions_stay_within_limit(self):
        taken = set()
        for _ in range(15):
            slug = unique_slug("Crème Brûlée recipes", taken, max_length=14)
            self.assertLessEqual(len(slug), 14)
            self.assertRegex(slug, SLUG)
            self.assertNotIn(slug, taken)
            taken.add(slug)
        self.assertIn("creme-brulee", taken)
        self.assertIn("creme-15", taken)

    def test_fallback_slug_is_numbered(self):
        self.assertEqual(unique_slug("🎉", {"post"}), "post-2")


if __name__ == "__main__":
    unittest.main()
