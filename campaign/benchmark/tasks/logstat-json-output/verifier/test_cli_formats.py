import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

APP_LOG = """\
2024-05-01T12:00:00 INFO service started
2024-05-01T12:00:01 INFO request handled path=/api/users
2024-05-01T12:00:02 ERROR database timeout after 2.5s
2024-05-01T12:00:03 INFO request handled path=/api/users
Traceback (most recent call last):
  File "app.py", line 3, in <module>
2024-05-01T12:00:04 WARNING slow response: 1200 ms
2024-05-01T12:00:05 DEBUG cache miss key=user:42
2024-05-01T12:00:06 ERROR database timeout after 2.5s
2024-05-01T12:00:07 INFO r\u00e9ponse envoy\u00e9e
not a log line
2024-05-01T12:00:08 CRITICAL disk full on /var
2024-05-01T12:00:09 ERROR database timeout after 2.5s
2024-13-01T12:00:10 ERROR bad timestamp
2024-05-01T12:00:11 NOTICE unknown level
"""

OTHER_LOG = """\
2024-05-02T08:00:00 INFO service started
2024-05-02T08:00:01 WARNING slow response: 1200 ms
2024-05-02T08:00:02 INFO request handled path=/api/users
"""

SUMMARY_TEXT = """\
LEVEL        COUNT
DEBUG            1
INFO             6
WARNING          2
ERROR            3
CRITICAL         1
total           13
"""

TOP_TEXT = """\
  COUNT  MESSAGE
      3  request handled path=/api/users
      3  database timeout after 2.5s
      2  service started
      2  slow response: 1200 ms
      1  cache miss key=user:42
      1  r\u00e9ponse envoy\u00e9e
      1  disk full on /var
"""

TOP_2_TEXT = """\
  COUNT  MESSAGE
      3  database timeout after 2.5s
      2  request handled path=/api/users
"""

SUMMARY_OTHER_TEXT = """\
LEVEL        COUNT
INFO             2
WARNING          1
total            3
"""


class CliFormatTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        root = Path(cls._tmp.name)
        cls.app = str(root / "app.log")
        cls.other = str(root / "other.log")
        cls.empty = str(root / "empty.log")
        Path(cls.app).write_text(APP_LOG, encoding="utf-8")
        Path(cls.other).write_text(OTHER_LOG, encoding="utf-8")
        Path(cls.empty).write_text("", encoding="utf-8")
        cls.missing = str(root / "missing.log")

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def run_cli(self, *argv):
        env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
        env["PYTHONIOENCODING"] = "utf-8"
        proc = subprocess.run(
            [sys.executable, "-m", "logstat", *argv],
            cwd=os.getcwd(),
            env=env,
            capture_output=True,
            timeout=60,
        )
        return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")

    def run_json(self, *argv):
        code, out, err = self.run_cli(*argv)
        self.assertEqual(code, 0, err)
        return json.loads(out)

    def test_text_is_unchanged(self):
        cases = [
            (("summary", self.app, self.other), SUMMARY_TEXT),
            (("summary", "--format", "text", self.app, self.other), SUMMARY_TEXT),
            (("summary", self.other), SUMMARY_OTHER_TEXT),
            (("top", self.app, self.other), TOP_TEXT),
            (("top", "-n", "2", self.app), TOP_2_TEXT),
            (("top", "--format", "text", "-n", "2", self.app), TOP_2_TEXT),
            (("top", "-n", "0", self.app), "  COUNT  MESSAGE\n"),
            (("summary", self.empty), "LEVEL        COUNT\ntotal            0\n"),
        ]
        for argv, expected in cases:
            with self.subTest(argv=argv[:-1]):
                code, out, err = self.run_cli(*argv)
                self.assertEqual(code, 0, err)
                self.assertEqual(out, expected)

    def test_summary_json(self):
        data = self.run_json("summary", "--format", "json", self.app, self.other)
        self.assertEqual(data, {"total": 13, "levels": {"DEBUG": 1, "INFO": 6, "WARNING": 2, "ERROR": 3, "CRITICAL": 1}})
        data = self.run_json("summary", self.other, "--format", "json")
        self.assertEqual(data, {"total": 3, "levels": {"INFO": 2, "WARNING": 1}})
        self.assertEqual(self.run_json("summary", "--format", "json", self.empty), {"total": 0, "levels": {}})

    def test_top_json(self):
        data = self.run_json("top", "--format", "json", self.app, self.other)
        self.assertEqual(
            data,
            {
                "top": [
                    {"message": "request handled path=/api/users", "count": 3},
                    {"message": "database timeout after 2.5s", "count": 3},
                    {"message": "service started", "count": 2},
                    {"message": "slow response: 1200 ms", "count": 2},
                    {"message": "cache miss key=user:42", "count": 1},
                    {"message": "r\u00e9ponse envoy\u00e9e", "count": 1},
                    {"message": "disk full on /var", "count": 1},
                ]
            },
        )

    def test_top_json_limit_and_level(self):
        data = self.run_json("top", "--format", "json", "-n", "2", self.app)
        self.assertEqual(data, {"top": [{"message": "database timeout after 2.5s", "count": 3}, {"message": "request handled path=/api/users", "count": 2}]})
        data = self.run_json("top", "--level", "WARNING", "--format", "json", self.app, self.other)
        self.assertEqual(data, {"top": [{"message": "slow response: 1200 ms", "count": 2}]})
        self.assertEqual(self.run_json("top", "--format", "json", "--level", "DEBUG", self.other), {"top": []})

    def test_errors_unchanged(self):
        code, out, err = self.run_cli("summary", "--format", "json", self.missing)
        self.assertEqual(code, 1)
        self.assertEqual(out, "")
        self.assertIn("missing.log: no such file", err)
        code, out, err = self.run_cli("top", "--format", "xml", self.app)
        self.assertEqual(code, 2)
        self.assertIn("--format", err)
        code, _, _ = self.run_cli("summary")
        self.assertEqual(code, 2)


if __name__ == "__main__":
    unittest.main()
