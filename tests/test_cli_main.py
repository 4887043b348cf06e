"""The command line's entry (``campaign.cli.main``): a stop signal, whenever it lands, ends
the process the operator's way (exit 130 with the line that continues, or the exit the
command already chose), never by the signal's default action or a traceback.

Real processes and real signals; the offline agent and a real SQLite store.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> list[str]:
    """The command line of a finished one-task campaign: run again, it has nothing to do."""
    out = tmp_path_factory.mktemp("finished") / "out"
    argv = [sys.executable, "-m", "campaign", "coding", "--campaign", "--providers", "offline", "--tasks", "semver-precedence",
            "--repetitions", "1", "--live", "--resume", "--output-dir", str(out)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return argv


@pytest.mark.slow  # a signal timed into shut-down, many times: 10 s
def test_a_stop_while_the_process_shuts_down_never_kills_it(finished):
    """SIGTERM the moment the last line is read lands while Python tears itself down, where
    its own shutdown has put the default handlers back: the exit stays the command's."""
    codes = []
    for _ in range(8):  # the window is a fraction of a second: try it more than once
        proc = subprocess.Popen(finished, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in proc.stdout:
            if "every scheduled trial has a result" in line:
                proc.send_signal(signal.SIGTERM)
                break
        _, err = proc.communicate(timeout=120)
        codes.append(proc.returncode)
        assert proc.returncode in (0, 130), (codes, err)
        if proc.returncode == 130:  # it landed before the command had ended: the operator's stop
            assert "received SIGTERM" in err and "to continue, run:" in err, err


def test_a_stop_that_lands_inside_code_wrapping_it_in_its_own_error_is_still_a_stop(tmp_path: Path):
    """A signal during the commands' import, inside code that turns the exception it meets
    into an error of its own (SQLAlchemy mapping a class, ``__set_name__``): exit 130 with
    the line, not that error's traceback and exit 1."""
    script = tmp_path / "entry.py"
    script.write_text(
        textwrap.dedent(
            """
            import builtins, os, signal, sys
            import campaign.cli

            real_import = builtins.__import__

            def importing(name, *args, **kwargs):
                if name == "campaign.cli.commands":
                    try:
                        os.kill(os.getpid(), signal.SIGTERM)
                        for _ in range(1000):  # the handler runs between bytecodes
                            pass
                    except BaseException as exc:
                        raise RuntimeError("Error calling __set_name__ on 'Field' instance") from exc
                return real_import(name, *args, **kwargs)

            builtins.__import__ = importing
            sys.argv = ["campaign", "tasks", "list"]
            campaign.cli.main()
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "interrupted: received SIGTERM; to continue, run:" in done.stderr, done.stderr
