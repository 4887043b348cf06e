"""Agent stand-in: misbehaves the way a real agent might and reports every pid it creates.

Usage: agent.py MODE PIDS_FILE [ARG]. Each process it creates appends
"label pid start_ticks" to PIDS_FILE before doing anything else, so a test
knows exactly which processes it must later find dead. Standard library only.
"""

import os
import signal
import sys
import time


def note(pids_file: str, label: str) -> None:
    with open(f"/proc/{os.getpid()}/stat", "rb") as fh:
        ticks = fh.read().rsplit(b")", 1)[1].split()[19].decode()
    fd = os.open(pids_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, f"{label} {os.getpid()} {ticks}\n".encode())
    os.close(fd)


def forever() -> None:
    while True:
        time.sleep(60)


def main() -> None:
    mode, pids = sys.argv[1], sys.argv[2]
    arg = sys.argv[3] if len(sys.argv) > 3 else None
    if mode == "exit":
        note(pids, "self")
        sys.exit(int(arg or 0))
    if mode == "sleep":
        note(pids, "self")
        forever()
    if mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        note(pids, "self")
        forever()
    if mode == "fifo":
        note(pids, "self")
        os.mkfifo(arg)
        with open(arg, "rb"):  # blocks in open(): nobody will ever write
            forever()
    if mode in ("double-fork", "double-fork-exit"):
        note(pids, "self")
        child = os.fork()
        if child == 0:
            os.setsid()
            if os.fork() == 0:
                note(pids, "escaped")
                os.execvp("sleep", ["sleep", "300"])
            os._exit(0)
        os.waitpid(child, 0)
        if mode == "double-fork-exit":
            sys.exit(0)
        forever()
    if mode in ("grandchild", "grandchild-stay"):
        note(pids, "self")
        if os.fork() == 0:  # same process group as its parent
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            note(pids, "grandchild")
            forever()
        if mode == "grandchild-stay":
            forever()
        os._exit(0)
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
