import unittest

from wordcount import count_words


class CountWords(unittest.TestCase):
    def test_case_is_ignored(self):
        self.assertEqual(count_words("The cat saw the dog."), {"the": 2, "cat": 1, "saw": 1, "dog": 1})

    def test_punctuation_is_ignored(self):
        self.assertEqual(count_words("Hi! hi? HI."), {"hi": 3})

    def test_empty(self):
        self.assertEqual(count_words(""), {})
