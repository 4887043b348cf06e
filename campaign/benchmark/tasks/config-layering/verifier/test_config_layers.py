import copy
import os
import tempfile
import unittest
from pathlib import Path

from svcconfig import DEFAULTS, ConfigError, load_config

PRISTINE = copy.deepcopy(DEFAULTS)


class FileLayerTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.dir = Path(self._tmp.name)

    def write(self, text, name="service.toml"):
        path = self.dir / name
        path.write_text(text, encoding="utf-8")
        return path

    def test_file_is_read(self):
        path = self.write('[server]\nport = 9000\nhost = "0.0.0.0"\n')
        config = load_config(path, environ={})
        self.assertEqual(config["server"]["port"], 9000)
        self.assertEqual(config["server"]["host"], "0.0.0.0")

    def test_str_path_accepted(self):
        path = self.write("[cache]\nenabled = false\n")
        self.assertIs(load_config(os.fspath(path), environ={})["cache"]["enabled"], False)

    def test_file_overrides_only_named_settings(self):
        path = self.write("[server]\nport = 9000\n\n[database]\ntimeout = 10.0\n")
        config = load_config(path, environ={})
        expected = copy.deepcopy(PRISTINE)
        expected["server"]["port"] = 9000
        expected["database"]["timeout"] = 10.0
        self.assertEqual(config, expected)

    def test_unknown_section_in_file(self):
        path = self.write("[sever]\nport = 9000\n")
        with self.assertRaises(ConfigError) as caught:
            load_config(path, environ={})
        self.assertIn("sever", str(caught.exception))

    def test_unknown_key_in_file(self):
        path = self.write("[database]\npool = 3\n")
        with self.assertRaises(ConfigError) as caught:
            load_config(path, environ={})
        self.assertIn("pool", str(caught.exception))

    def test_invalid_toml(self):
        path = self.write("[server\nport = 9000\n", name="broken.toml")
        with self.assertRaises(ConfigError) as caught:
            load_config(path, environ={})
        self.assertIn("broken.toml", str(caught.exception))

    def test_environment_beats_file(self):
        path = self.write("[server]\nport = 9000\nworkers = 4\n")
        config = load_config(path, environ={"SVC_SERVER__PORT": "9100"})
        self.assertEqual(config["server"]["port"], 9100)
        self.assertEqual(config["server"]["workers"], 4)
        self.assertEqual(config["server"]["host"], "127.0.0.1")

    def test_defaults_not_modified(self):
        path = self.write("[server]\nport = 9000\n[cache]\nbackend = \"redis\"\n")
        config = load_config(path, environ={"SVC_DATABASE__POOL_SIZE": "20"})
        config["server"]["host"] = "mutated"
        self.assertEqual(DEFAULTS, PRISTINE)
        self.assertEqual(load_config(environ={}), PRISTINE)


class EnvironmentLayerTest(unittest.TestCase):
    def test_booleans(self):
        for raw, expected in [("false", False), ("FALSE", False), ("0", False), ("no", False), ("Off", False),
                              ("true", True), ("True", True), ("1", True), ("yes", True), ("ON", True)]:
            with self.subTest(raw=raw):
                config = load_config(environ={"SVC_SERVER__DEBUG": raw, "SVC_CACHE__ENABLED": raw})
                self.assertIs(config["server"]["debug"], expected)
                self.assertIs(config["cache"]["enabled"], expected)

    def test_numbers(self):
        config = load_config(environ={"SVC_SERVER__PORT": "9000", "SVC_DATABASE__TIMEOUT": "7.5", "SVC_DATABASE__POOL_SIZE": "12"})
        self.assertEqual(config["server"]["port"], 9000)
        self.assertIsInstance(config["server"]["port"], int)
        self.assertEqual(config["database"]["timeout"], 7.5)
        self.assertIsInstance(config["database"]["timeout"], float)
        self.assertEqual(config["database"]["pool_size"], 12)

    def test_float_setting_accepts_integer_text(self):
        config = load_config(environ={"SVC_DATABASE__TIMEOUT": "3"})
        self.assertEqual(config["database"]["timeout"], 3.0)
        self.assertIsInstance(config["database"]["timeout"], float)

    def test_strings_unchanged(self):
        config = load_config(environ={"SVC_DATABASE__URL": "postgresql://db/prod", "SVC_CACHE__BACKEND": "123"})
        self.assertEqual(config["database"]["url"], "postgresql://db/prod")
        self.assertEqual(config["cache"]["backend"], "123")

    def test_env_overrides_only_named_settings(self):
        config = load_config(environ={"SVC_SERVER__PORT": "9000"})
        expected = copy.deepcopy(PRISTINE)
        expected["server"]["port"] = 9000
        self.assertEqual(config, expected)

    def test_bad_values_name_the_variable(self):
        for name, raw in [("SVC_SERVER__PORT", "eighty"), ("SVC_SERVER__DEBUG", "maybe"), ("SVC_DATABASE__TIMEOUT", "soon")]:
            with self.subTest(name=name):
                with self.assertRaises(ConfigError) as caught:
                    load_config(environ={name: raw})
                self.assertIn(name, str(caught.exception))

    def test_unknown_and_unrelated_variables(self):
        with self.assertRaises(ConfigError):
            load_config(environ={"SVC_SERVER__PROT": "1"})
        self.assertEqual(load_config(environ={"PATH": "/bin", "SERVICE_X": "1"}), PRISTINE)


if __name__ == "__main__":
    unittest.main()
