"""The circuit breaker: an unreachable upstream or faults in a row halt a provider."""

from __future__ import annotations

import socket

import pytest

from campaign.lanes.breaker import Breaker, unreachable


def test_a_listening_upstream_is_reachable_and_a_closed_port_is_not(dead_port):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        assert unreachable(f"http://127.0.0.1:{port}") is None
    port = dead_port.number
    why = unreachable(f"http://127.0.0.1:{port}")
    assert why == f"its upstream 127.0.0.1:{port} refused the connection (Connection refused)"


@pytest.mark.parametrize("upstream", [None, "replay"])
def test_routes_without_a_network_upstream_are_not_checked(upstream):
    def never(host, port, timeout):
        raise AssertionError("no connection may be tried")

    assert unreachable(upstream, never) is None


def test_a_name_without_an_address_and_a_silent_connect():
    def no_name(host, port, timeout):
        raise socket.gaierror(-2, "Name or service not known")

    def silent(host, port, timeout):
        raise TimeoutError

    assert unreachable("https://api.example.invalid", no_name) == "its upstream api.example.invalid has no address"
    assert unreachable("https://api.example.invalid/v1", silent) == "its upstream api.example.invalid:443 did not accept a connection within 5 s"


def test_three_provider_errors_in_a_row_halt_and_anything_else_breaks_the_run():
    breaker = Breaker(connect=lambda *a: None)
    assert breaker.record("zai", "provider_error", {"http_529": 2}) is None
    assert breaker.record("zai", "passed", None) is None  # the run of faults starts over
    assert breaker.record("zai", "provider_error", {"http_529": 1}) is None
    assert breaker.record("zai", "interrupted", None) is None  # the operator's: neither
    assert breaker.record("other", "provider_error", {"http_429": 1}) is None  # per provider
    assert breaker.record("zai", "provider_error", {"stream_cut": 1}) is None
    halt = breaker.record("zai", "provider_error", {"http_529": 3})
    assert halt is not None and halt.line() == "zai: 3 attempts in a row ended on provider errors (HTTP 529 x4, cut stream x1)"
    assert breaker.check("zai", "https://anywhere") is halt  # halted stays halted, no connect
    assert "other" not in breaker.halted
