"""Hidden checks, run with the working copy as cwd; exit 0 is a pass."""

import copy
import os
import sys

sys.path.insert(0, os.getcwd())
from merge import deep_merge  # noqa: E402

base = {"db": {"host": "localhost", "port": 5432}, "debug": False}
override = {"db": {"port": 6543}, "debug": True}
before = copy.deepcopy((base, override))
got = deep_merge(base, override)
assert got == {"db": {"host": "localhost", "port": 6543}, "debug": True}, got
assert (base, override) == before, "the arguments were changed"
assert deep_merge({"a": {"b": {"c": 1}}}, {"a": {"b": {"d": 2}}}) == {"a": {"b": {"c": 1, "d": 2}}}
assert deep_merge({"a": 1}, {"a": {"b": 2}}) == {"a": {"b": 2}}
print("ok")
