import os
import tempfile
import unittest
from pathlib import Path

from envfile import EnvSyntaxError, load_env, parse_env


class ReportedValuesTest(unittest.TestCase):
    def test_issue_examples(self):
        text = (
            'DB_PASSWORD="pa#ss word"\n'
            'GREETING="say \\"hi\\""\n'
            'WELCOME="line one\\nline two"\n'
            "CALLBACK=https://example.com/cb#done\n"
            "RAW='C:\\new\\table'\n"
        )
        self.assertEqual(
            parse_env(text),
            {
                "DB_PASSWORD": "pa#ss word",
                "GREETING": 'say "hi"',
                "WELCOME": "line one\nline two",
                "CALLBACK": "https://example.com/cb#done",
                "RAW": "C:\\new\\table",
            },
        )


class UnquotedTest(unittest.TestCase):
    def test_hash_without_whitespace_is_value(self):
        self.assertEqual(parse_env("COLOR=#fff\n"), {"COLOR": "#fff"})
        self.assertEqual(parse_env("TAG=v1#2 # the tag\n"), {"TAG": "v1#2"})

    def test_inline_comment_after_whitespace(self):
        self.assertEqual(parse_env("PORT=8080 # default\nHOST=db\t# tab comment\n"), {"PORT": "8080", "HOST": "db"})

    def test_whitespace_and_empty(self):
        self.assertEqual(parse_env("A =  spaced value  \nB=\n"), {"A": "spaced value", "B": ""})

    def test_comment_lines_and_export(self):
        text = "# top\n   # indented comment\nexport TOKEN=abc\n\n"
        self.assertEqual(parse_env(text), {"TOKEN": "abc"})

    def test_quotes_inside_unquoted_value(self):
        self.assertEqual(parse_env("MSG=it's fine\n"), {"MSG": "it's fine"})


class SingleQuoteTest(unittest.TestCase):
    def test_literal(self):
        self.assertEqual(parse_env("A='a\\nb'\n"), {"A": "a\\nb"})
        self.assertEqual(parse_env("A='x # y'\n"), {"A": "x # y"})
        self.assertEqual(parse_env("A='say \"hi\"'\n"), {"A": 'say "hi"'})
        self.assertEqual(parse_env("A=''\n"), {"A": ""})

    def test_comment_after_closing_quote(self):
        self.assertEqual(parse_env("A='v' # note\n"), {"A": "v"})


class DoubleQuoteTest(unittest.TestCase):
    def test_escapes(self):
        self.assertEqual(parse_env('A="tab\\there"\n'), {"A": "tab\there"})
        self.assertEqual(parse_env('A="back\\\\slash"\n'), {"A": "back\\slash"})
        self.assertEqual(parse_env('A="cr\\r"\n'), {"A": "cr\r"})
        self.assertEqual(parse_env('A="\\\\n"\n'), {"A": "\\n"})
        self.assertEqual(parse_env('A="ends with \\\\"\n'), {"A": "ends with \\"})

    def test_whitespace_kept_inside_quotes(self):
        self.assertEqual(parse_env('A="  padded  "\n'), {"A": "  padded  "})
        self.assertEqual(parse_env('A=""\n'), {"A": ""})

    def test_comment_after_closing_quote(self):
        self.assertEqual(parse_env('A="v#1"   # note\n'), {"A": "v#1"})
        self.assertEqual(parse_env('A="v"#note\n'), {"A": "v"})

    def test_unicode(self):
        self.assertEqual(parse_env('NAME="Zoë # ☃"\n'), {"NAME": "Zoë # ☃"})


class ErrorTest(unittest.TestCase):
    def assertSyntaxError(self, text, lineno):
        with self.assertRaises(EnvSyntaxError) as caught:
            parse_env(text)
        self.assertEqual(caught.exception.lineno, lineno)

    def test_unterminated_quotes(self):
        self.assertSyntaxError('A=1\nB=2\nC="abc\n', 3)
        self.assertSyntaxError("A='abc\n", 1)
        self.assertSyntaxError('A="abc\\"\n', 1)

    def test_text_after_closing_quote(self):
        self.assertSyntaxError('A=1\nB="x" y\n', 2)
        self.assertSyntaxError("A='x'y\n", 1)

    def test_existing_errors(self):
        self.assertSyntaxError("A=1\nB=2\nnot an assignment\n", 3)
        self.assertSyntaxError("1BAD=x\n", 1)

    def test_crlf_lines(self):
        self.assertEqual(parse_env('A="x # y"\r\nB=2 # c\r\n'), {"A": "x # y", "B": "2"})


class LoaderTest(unittest.TestCase):
    def test_load_env_respects_existing(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / ".env"
            path.write_text('SECRET="a#b"\nKEEP=file\n', encoding="utf-8")
            environ = {"KEEP": "process"}
            load_env(path, environ=environ)
            self.assertEqual(environ, {"KEEP": "process", "SECRET": "a#b"})
            load_env(os.fspath(path), environ=environ, override=True)
            self.assertEqual(environ["KEEP"], "file")


if __name__ == "__main__":
    unittest.main()
