"""Listening sockets one process makes and hands to another.

The engine binds a server's loopback socket itself and hands it over as the server's
stdin (``inherited``): the port is known before the server runs, so whoever talks to it
can start alongside, and connections wait in the socket's backlog meanwhile.

A task's container has no network (``--network none``: a loopback of its own, nothing
else), yet its client must reach the attempt's recording proxy, and only that. The
runner binds the proxy's socket on the loopback *of the container's network namespace*
(``loopback_in``) and hands it over: the proxy accepts there and forwards to its
upstream from the host's namespace, so the container gains one address and no route.
A socket keeps the namespace it was made in, and setns(2) moves only the calling
thread: a thread of its own does it, and the runner's namespace never changes.
"""

from __future__ import annotations

import ctypes
import os
import socket
import threading

from campaign.errors import CampaignError

LOOPBACK = "127.0.0.1"
_CLONE_NEWNET = 0x40000000


def inherited(fd: int = 0) -> socket.socket:
    """The listening stream socket handed over as ``fd`` (stdin); ``fd`` is then pointed at
    /dev/null (the server reads no stdin: the socket is held by its own descriptor)."""
    try:
        sock = socket.socket(fileno=os.dup(fd))
    except OSError as exc:
        raise CampaignError(f"no socket on fd {fd}: {exc.strerror or exc}") from None
    if sock.type != socket.SOCK_STREAM or sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) != 1:
        sock.close()
        raise CampaignError(f"fd {fd} is not a listening stream socket")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    return sock


def loopback_in(netns_fd: int) -> socket.socket:
    """A socket listening on 127.0.0.1 (a port the kernel picks) in the network namespace
    ``netns_fd`` refers to (e.g. ``/proc/PID/ns/net``, opened by the caller)."""
    made: list[socket.socket] = []
    failed: list[OSError] = []

    def bind_there() -> None:
        try:
            _setns(netns_fd)
            made.append(socket.create_server((LOOPBACK, 0)))
        except OSError as exc:
            failed.append(exc)

    # The thread ends once the socket is made: nothing else ever runs in that namespace.
    thread = threading.Thread(target=bind_there, name="campaign-netns-bind")
    thread.start()
    thread.join()
    if failed:
        raise CampaignError(f"cannot listen in the container's network namespace: {failed[0].strerror or failed[0]}")
    return made[0]


def _setns(fd: int) -> None:
    if hasattr(os, "setns"):  # Python 3.12 and later
        os.setns(fd, _CLONE_NEWNET)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, _CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
