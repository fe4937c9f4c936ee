"""Link delay emulation of a NIC port: the timed FIFO itself, and the serving process that
holds each transmitted frame for its port's ``delay_us`` (times passed in, not measured)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from nic_emu.delay_line import DelayLine, delay_ns
from nic_emu.process import NicProcess
from nic_emu.serve_config import parse_serve_config

from .serve_helpers import free_udp_ports, nic_config

T0 = 5_000_000_000  # an arbitrary transmit time, ns


def test_delay_us_becomes_whole_nanoseconds() -> None:
    assert delay_ns(2.0) == 2000
    assert delay_ns(5.5) == 5500
    assert delay_ns(0.0004) == 0


def test_a_frame_is_due_exactly_the_delay_after_it_was_transmitted() -> None:
    line = DelayLine(2000)
    assert line.next_due() is None and line.pop_due(T0) == []
    assert line.push(b"a", T0) == T0 + 2000
    assert line.next_due() == T0 + 2000
    assert line.pop_due(T0 + 1999) == []  # not a nanosecond early
    assert len(line) == 1
    assert line.pop_due(T0 + 2000) == [b"a"]
    assert len(line) == 0 and line.next_due() is None


def test_frames_leave_in_the_order_they_were_transmitted() -> None:
    line = DelayLine(1000)
    for i in range(5):
        line.push(bytes([i]), T0 + 100 * i)
    assert line.pop_due(T0 + 1250) == [b"\x00", b"\x01", b"\x02"]
    assert line.next_due() == T0 + 1300
    assert line.pop_due(T0 + 10_000) == [b"\x03", b"\x04"]


def test_clear_drops_what_is_held_and_counts_it() -> None:
    line = DelayLine(1000)
    line.push(b"a", T0)
    line.push(b"b", T0 + 1)
    assert line.clear() == 2
    assert len(line) == 0 and line.next_due() is None and line.pop_due(T0 + 10**9) == []


def test_a_negative_delay_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        DelayLine(-1)


# ---------------------------------------------------------------------- the process


@pytest.fixture
def delayed_nic(tmp_path: Path) -> Iterator[tuple[NicProcess, socket.socket, socket.socket]]:
    """nic0 with plane 0 delayed 2.5 us and plane 1 undelayed; the two peer sockets."""
    ports = free_udp_ports(4)
    config = nic_config(tmp_path, "nic0", {0: (ports[0], ports[1]), 1: (ports[2], ports[3])})
    config["ports"]["0"]["delay_us"] = 2.5
    peers = []
    for local, peer in ((ports[1], ports[0]), (ports[3], ports[2])):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", local))
        sock.connect(("127.0.0.1", peer))
        sock.setblocking(False)
        peers.append(sock)
    process = NicProcess(parse_serve_config(config))
    process.open()
    try:
        yield process, peers[0], peers[1]
    finally:
        process.close()
        for sock in peers:
            sock.close()


def waiting(sock: socket.socket) -> list[bytes]:
    """Every datagram already delivered to ``sock`` (loopback delivers within send())."""
    out = []
    while True:
        try:
            out.append(sock.recv(65535))
        except BlockingIOError:
            return out


def test_the_process_holds_frames_for_the_ports_delay_in_order(
    delayed_nic: tuple[NicProcess, socket.socket, socket.socket],
) -> None:
    process, peer0, peer1 = delayed_nic
    assert set(process.delay_lines) == {0}
    process.transmit(0, b"first", T0)
    process.transmit(1, b"undelayed", T0)
    process.transmit(0, b"second", T0 + 1000)
    assert waiting(peer1) == [b"undelayed"]  # a port without delay sends at once
    assert waiting(peer0) == []
    assert process.release_at == T0 + 2500
    process.release_due(T0 + 2499)
    assert waiting(peer0) == []
    process.release_due(T0 + 2500)
    assert waiting(peer0) == [b"first"]
    assert process.release_at == T0 + 3500
    process.release_due(T0 + 3500)
    assert waiting(peer0) == [b"second"]
    assert process.release_at is None
    assert process.counters["tx_delayed"] == 2


def test_the_service_step_releases_due_frames_before_new_ones(
    delayed_nic: tuple[NicProcess, socket.socket, socket.socket],
) -> None:
    process, peer0, _ = delayed_nic
    process.transmit(0, b"old", T0)
    process.service(T0 + 2500)  # any step after the due time puts the frame out
    assert waiting(peer0) == [b"old"]


def test_a_port_taken_down_drops_what_it_holds(
    delayed_nic: tuple[NicProcess, socket.socket, socket.socket],
) -> None:
    process, peer0, _ = delayed_nic
    process.transmit(0, b"a", T0)
    process.transmit(0, b"b", T0 + 1)
    assert process.handle_request({"op": "port", "plane": 0, "up": False}) == {
        "plane": 0,
        "up": False,
    }
    assert process.counters["tx_held_dropped"] == 2
    assert process.release_at is None
    process.release_due(T0 + 10**9)
    assert waiting(peer0) == []
    stats = process.handle_request({"op": "stats"})
    assert stats["planes"]["0"]["delay_us"] == 2.5 and stats["planes"]["0"]["frames_held"] == 0
    assert stats["planes"]["1"]["delay_us"] == 0.0
    assert stats["process"]["tx_held_dropped"] == 2
    # Up again: new frames are delayed and delivered as before.
    process.handle_request({"op": "port", "plane": 0, "up": True})
    process.transmit(0, b"c", T0 + 5000)
    process.release_due(T0 + 7500)
    assert waiting(peer0) == [b"c"]
