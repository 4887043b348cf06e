import json
import os
import stat
import tempfile
import unittest
from pathlib import Path

from statefile import Checkpointer, load_state, save_state


def expected_bytes(state):
    return (json.dumps(state, indent=2, sort_keys=True) + "\n").encode("utf-8")


class Unserializable:
    pass


class AtomicSaveTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.dir = Path(self._tmp.name)
        self.path = self.dir / "state.json"

    def listing(self):
        return sorted(os.listdir(self.dir))

    def test_round_trip_and_format(self):
        state = {"cursor": 17, "done": ["a", "b"], "name": "Zo\u00eb"}
        save_state(self.path, state)
        self.assertEqual(load_state(self.path), state)
        self.assertEqual(self.path.read_bytes(), expected_bytes(state))
        save_state(str(self.path), {"cursor": 18})
        self.assertEqual(load_state(str(self.path)), {"cursor": 18})
        self.assertEqual(self.listing(), ["state.json"])

    def test_failed_save_keeps_previous_file(self):
        save_state(self.path, {"cursor": 1, "done": ["x"] * 50})
        before = self.path.read_bytes()
        with self.assertRaises(TypeError):
            save_state(self.path, {"cursor": 2, "done": ["y"] * 50, "zzz": Unserializable()})
        self.assertEqual(self.path.read_bytes(), before)
        self.assertEqual(self.listing(), ["state.json"])

    def test_failed_first_save_leaves_nothing(self):
        with self.assertRaises(TypeError):
            save_state(self.path, {"a": 1, "b": Unserializable()})
        self.assertEqual(self.listing(), [])
        self.assertEqual(load_state(self.path, default="absent"), "absent")

    def test_open_reader_keeps_complete_old_document(self):
        save_state(self.path, {"generation": 1, "payload": "a" * 10000})
        old = self.path.read_bytes()
        with open(self.path, "rb") as reader:
            save_state(self.path, {"generation": 2, "payload": "b" * 10})
            self.assertEqual(reader.read(), old)
        self.assertEqual(load_state(self.path)["generation"], 2)

    def test_existing_mode_is_kept(self):
        for mode in (0o600, 0o640, 0o644):
            with self.subTest(mode=oct(mode)):
                save_state(self.path, {"v": 1})
                os.chmod(self.path, mode)
                save_state(self.path, {"v": 2})
                self.assertEqual(stat.S_IMODE(os.stat(self.path).st_mode), mode)
                self.assertEqual(load_state(self.path), {"v": 2})

    def test_new_file_respects_umask(self):
        for umask, mode in ((0o022, 0o644), (0o027, 0o640), (0o077, 0o600)):
            with self.subTest(umask=oct(umask)):
                target = self.dir / f"new-{umask:o}.json"
                previous = os.umask(umask)
                try:
                    save_state(target, [1, 2, 3])
                finally:
                    os.umask(previous)
                self.assertEqual(stat.S_IMODE(os.stat(target).st_mode), mode)

    def test_relative_path_in_current_directory(self):
        previous = os.getcwd()
        os.chdir(self.dir)
        try:
            save_state("relative.json", {"ok": True})
            with self.assertRaises(TypeError):
                save_state("relative.json", {"ok": Unserializable()})
        finally:
            os.chdir(previous)
        self.assertEqual(load_state(self.dir / "relative.json"), {"ok": True})
        self.assertEqual(self.listing(), ["relative.json"])

    def test_many_saves_leave_one_file(self):
        for i in range(50):
            save_state(self.path, {"i": i})
        self.assertEqual(load_state(self.path), {"i": 49})
        self.assertEqual(self.listing(), ["state.json"])


class CheckpointerTest(unittest.TestCase):
    def test_failed_record_keeps_last_checkpoint(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "crawl.json")
            worker = Checkpointer(path)
            worker.record("cursor", 10)
            worker.mark_done("https://example.com/a")
            with self.assertRaises(TypeError):
                worker.record("session", Unserializable())
            restarted = Checkpointer(path)
            self.assertEqual(restarted.get("cursor"), 10)
            self.assertEqual(restarted.get("done"), ["https://example.com/a"])
            self.assertIsNone(restarted.get("session"))
            self.assertEqual(os.listdir(tmp), ["crawl.json"])


if __name__ == "__main__":
    unittest.main()
