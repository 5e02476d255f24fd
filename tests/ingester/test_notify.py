"""The systemd notification protocol, spoken to a real datagram socket."""

from __future__ import annotations

import os
import socket

import pytest

from haiku.ingester.notify import SystemdNotifier


@pytest.fixture
def listener(tmp_path):
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(2)
    yield str(path), sock
    sock.close()


def test_ready_sends_ready_1_to_notify_socket(listener):
    path, sock = listener
    SystemdNotifier({"NOTIFY_SOCKET": path}).ready()
    assert sock.recv(1024).decode().splitlines()[0] == "READY=1"


def test_reloading_carries_the_monotonic_time(listener):
    path, sock = listener
    SystemdNotifier({"NOTIFY_SOCKET": path}).reloading()
    lines = sock.recv(1024).decode().splitlines()
    assert lines[0] == "RELOADING=1" and lines[1].startswith("MONOTONIC_USEC=")


def test_an_abstract_socket_address_starts_with_at(listener):
    name = f"haiku-test-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(2)
    try:
        SystemdNotifier({"NOTIFY_SOCKET": "@" + name}).stopping()
        assert sock.recv(1024) == b"STOPPING=1"
    finally:
        sock.close()


def test_without_notify_socket_every_call_is_a_no_op():
    notifier = SystemdNotifier({})
    assert (notifier.enabled, notifier.ready(), notifier.watchdog()) == (False, False, False)


def test_the_watchdog_is_pinged_at_half_its_timeout():
    assert SystemdNotifier({"WATCHDOG_USEC": "10000000"}).watchdog_interval_s == 5.0


def test_a_watchdog_meant_for_another_process_is_ignored():
    assert SystemdNotifier({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "1"}).watchdog_interval_s is None
