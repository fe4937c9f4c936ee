"""Port drivers: the loopback-UDP link format, errors and lost frames."""

from __future__ import annotations

import os
import socket
import time

import pytest

from nic_emu.exceptions import PortError
from nic_emu.ports import AfPacketPort, UdpPort

from .serve_helpers import free_udp_ports


def test_a_udp_link_carries_one_frame_per_datagram_both_ways() -> None:
    pa, pb = free_udp_ports(2)
    a = UdpPort(0, ("127.0.0.1", pa), ("127.0.0.1", pb))
    b = UdpPort(0, ("127.0.0.1", pb), ("127.0.0.1", pa))
    try:
        frames = [bytes([i]) * (60 + i) for i in range(5)]
        for frame in frames:
            assert a.send(frame)
        got = [wait_frame(b) for _ in frames]
        assert got == frames and b.receive() is None
        assert b.send(b"back" * 20) and wait_frame(a) == b"back" * 20
        assert a.counters["tx_frames"] == 5 and b.counters["rx_frames"] == 5
        assert a.description == f"udp:127.0.0.1:{pa}->127.0.0.1:{pb}"
    finally:
        a.close()
        b.close()


def wait_frame(port: UdpPort) -> bytes:
    deadline = time.monotonic() + 30
    while (frame := port.receive()) is None:
        assert time.monotonic() < deadline
        time.sleep(0.001)
    return frame


def test_datagrams_from_strangers_are_ignored() -> None:
    pa, pb = free_udp_ports(2)
    a = UdpPort(0, ("127.0.0.1", pa), ("127.0.0.1", pb))
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger:
            stranger.sendto(b"not from the peer", ("127.0.0.1", pa))
        time.sleep(0.05)
        assert a.receive() is None
    finally:
        a.close()


def test_an_absent_peer_loses_frames_without_an_error() -> None:
    pa, pb = free_udp_ports(2)
    a = UdpPort(0, ("127.0.0.1", pa), ("127.0.0.1", pb))
    try:
        results = [a.send(b"x" * 100) for _ in range(5)]
        time.sleep(0.05)
        assert a.receive() is None  # the ICMP errors are swallowed
        lost = a.counters["tx_lost"] + a.counters["rx_refused"]
        assert lost >= 1 and results[0] is True
    finally:
        a.close()


def test_a_port_in_use_is_a_port_error() -> None:
    pa, pb = free_udp_ports(2)
    a = UdpPort(0, ("127.0.0.1", pa), ("127.0.0.1", pb))
    try:
        with pytest.raises(PortError, match=f"127.0.0.1:{pa} in use"):
            UdpPort(1, ("127.0.0.1", pa), ("127.0.0.1", pb))
    finally:
        a.close()


def test_a_send_that_cannot_be_a_datagram_is_a_port_error_naming_the_port() -> None:
    pa, pb = free_udp_ports(2)
    a = UdpPort(3, ("127.0.0.1", pa), ("127.0.0.1", pb))
    try:
        with pytest.raises(PortError, match=rf"plane 3 \(udp:127.0.0.1:{pa}->"):
            a.send(bytes(70_000))  # over a UDP datagram's 65,507 bytes: EMSGSIZE
        assert a.counters["tx_frames"] == 0 and a.counters["tx_lost"] == 0
    finally:
        a.close()


def test_afpacket_errors_are_specific() -> None:
    if os.geteuid() != 0:
        with pytest.raises(PortError, match="needs root"):
            AfPacketPort(0, "lo")
        return
    with pytest.raises(PortError, match="cannot bind to interface 'nonexist0'"):
        AfPacketPort(0, "nonexist0")
    port = AfPacketPort(0, "lo")  # loopback exists everywhere
    try:
        assert port.mtu > 0 and port.max_frame == port.mtu + 14
        assert port.description == "afpacket:lo"
    finally:
        port.close()
