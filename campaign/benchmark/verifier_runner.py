"""Run one task's hidden unittest suite; the exit status is the verdict (0 == pass).

``campaign.benchmark.install_verifier`` copies this file next to the hidden tests and
``verifier_argv`` runs it as ``python -I -B <this file>`` with the working copy as
cwd. Standard library only: it runs under whatever interpreter the trial uses.

Import order is standard library, then the working copy, then site-packages: the
hidden tests import the fixture's modules from the working copy, an installed
package of the same name cannot stand in for them, and nothing the agent wrote can
replace a standard module. A suite that runs no test fails, so a missing or empty
verifier can never pass.
"""

from __future__ import annotations

import os
import sys
import unittest


def _site_index(path: list[str]) -> int:
    for index, entry in enumerate(path):
        if os.path.basename(entry) in ("site-packages", "dist-packages"):
            return index
    return len(path)


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    workdir = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".", here, workdir)]
    sys.path.insert(_site_index(sys.path), workdir)
    sys.path.insert(0, here)
    suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py", top_level_dir=here)
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=2).run(suite)
    return 0 if result.wasSuccessful() and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
