from __future__ import annotations

import os
import struct
import subprocess
import threading
import time
import uuid

import capabilities
import pytest

from p4emu.io import (
    AfPacketPort,
    PortIOError,
    PortSpecError,
    Reactor,
    UdpLinkPort,
    parse_interface_spec,
)
from p4emu.io.drivers import (
    PACKET_AUXDATA,
    SOL_PACKET,
    TP_STATUS_VLAN_TPID_VALID,
    TP_STATUS_VLAN_VALID,
    restore_vlan_tag,
)


def free_udp_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


def test_parse_linux_interface() -> None:
    spec = parse_interface_spec("3@veth0")
    assert (spec.port, spec.interface, spec.udp_local) == (3, "veth0", None)


def test_parse_udp_link_with_and_without_hosts() -> None:
    spec = parse_interface_spec("1@udp:40001/40002")
    assert spec.udp_local == ("127.0.0.1", 40001)
    assert spec.udp_peer == ("127.0.0.1", 40002)
    spec = parse_interface_spec("7@udp:127.0.0.2:5000/127.0.0.3:6000")
    assert (spec.port, spec.udp_local, spec.udp_peer) == (
        7,
        ("127.0.0.2", 5000),
        ("127.0.0.3", 6000),
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("veth0", "expected PORT@IFACE"),
        ("x@veth0", "port 'x' is not a number"),
        ("600@veth0", "port 600 is outside"),
        ("1@udp:abc", "expected udp:"),
        ("1@udp:70000/1", "UDP port 70000 out of range"),
        ("1@bad/name", "not a valid interface name"),
        ("1@", "expected PORT@IFACE"),
    ],
)
def test_parse_errors_are_specific(spec: str, message: str) -> None:
    with pytest.raises(PortSpecError, match=message):
        parse_interface_spec(spec)


def test_udp_link_carries_frames_both_ways_and_ignores_strangers() -> None:
    a_port, b_port = free_udp_port(), free_udp_port()
    a = UdpLinkPort(1, ("127.0.0.1", a_port), ("127.0.0.1", b_port))
    b = UdpLinkPort(2, ("127.0.0.1", b_port), ("127.0.0.1", a_port))
    stranger = UdpLinkPort(3, ("127.0.0.1", 0), ("127.0.0.1", b_port))
    try:
        a.send(b"\x01" * 60)
        stranger.send(b"\x09" * 60)
        b.send(b"\x02" * 1500)
        assert wait_for(lambda: True)
        received_b = []
        assert wait_for(
            lambda: (frame := b.receive()) is not None and received_b.append(frame) is None
        )
        assert received_b == [b"\x01" * 60]
        time.sleep(0.05)
        assert b.receive() is None  # the stranger's datagram is not on this cable
        received_a = []
        assert wait_for(
            lambda: (frame := a.receive()) is not None and received_a.append(frame) is None
        )
        assert received_a == [b"\x02" * 1500]
    finally:
        for port in (a, b, stranger):
            port.close()


def test_udp_send_to_dead_peer_loses_the_frame_and_counts_it() -> None:
    a = UdpLinkPort(1, ("127.0.0.1", 0), ("127.0.0.1", free_udp_port()))
    try:
        for _ in range(3):
            a.send(b"x" * 64)
            time.sleep(0.01)
        assert a.receive() is None
        assert a.frames_lost_unreachable >= 1
    finally:
        a.close()


def test_udp_bind_conflict_names_the_port() -> None:
    a = UdpLinkPort(1, ("127.0.0.1", 0), ("127.0.0.1", 9))
    try:
        with pytest.raises(PortIOError, match=r"port 2: cannot bind UDP 127\.0\.0\.1:"):
            UdpLinkPort(2, a.local, ("127.0.0.1", 9))
    finally:
        a.close()


def test_reactor_delivers_frames_runs_callbacks_and_stops_twice() -> None:
    a_port, b_port = free_udp_port(), free_udp_port()
    received: list[tuple[int, bytes]] = []
    reactor = Reactor(lambda port, frame: received.append((port, frame)))
    reactor.add(UdpLinkPort(5, ("127.0.0.1", a_port), ("127.0.0.1", b_port)))
    sender = UdpLinkPort(6, ("127.0.0.1", b_port), ("127.0.0.1", a_port))
    ran = threading.Event()
    reactor.start()
    try:
        sender.send(b"hello-frame")
        reactor.call_soon(ran.set)
        assert wait_for(lambda: received == [(5, b"hello-frame")])
        assert ran.wait(2)
        with pytest.raises(PortIOError, match="port 5 already has a driver"):
            reactor.add(UdpLinkPort(5, ("127.0.0.1", 0), ("127.0.0.1", b_port)))
    finally:
        sender.close()
        reactor.stop()
        reactor.stop()
    assert reactor.ports == []


def test_af_packet_missing_interface_is_a_clear_error() -> None:
    if os.geteuid() != 0:
        with pytest.raises(PortIOError, match="needs root"):
            AfPacketPort(1, "lo")
        return
    with pytest.raises(PortIOError, match="cannot bind to interface 'nosuch0'"):
        AfPacketPort(1, "nosuch0")


@pytest.mark.integration
@pytest.mark.skipif(
    capabilities.veth_missing() is not None, reason=str(capabilities.veth_missing())
)
def test_af_packet_port_over_a_veth_pair() -> None:
    suffix = uuid.uuid4().hex[:6]
    left, right = f"p4eA{suffix}", f"p4eB{suffix}"
    subprocess.run(["ip", "link", "add", left, "type", "veth", "peer", "name", right], check=True)
    try:
        for name in (left, right):
            subprocess.run(["ip", "link", "set", name, "up"], check=True)
            subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{name}.disable_ipv6=1"], check=False)
        a, b = AfPacketPort(1, left), AfPacketPort(2, right)
        try:
            frame = bytes.fromhex("02000000000202000000000188b5") + b"payload" * 8
            a.send(frame)
            got: list[bytes] = []

            def arrived() -> bool:
                while (data := b.receive()) is not None:
                    got.append(data)
                return frame in got

            assert wait_for(arrived)
            assert a.receive() is None  # our own transmission is not echoed back
        finally:
            a.close()
            b.close()
    finally:
        subprocess.run(["ip", "link", "del", left], check=False)


def _auxdata(status: int, tci: int = 0, tpid: int = 0) -> list[tuple[int, int, bytes]]:
    return [(SOL_PACKET, PACKET_AUXDATA, struct.pack("=IIIHHHH", status, 60, 60, 0, 14, tci, tpid))]


def test_restore_vlan_tag_puts_the_stripped_tag_back_after_the_macs() -> None:
    untagged = bytes(range(12)) + b"\x86\xdd" + b"payload"
    tagged = restore_vlan_tag(untagged, _auxdata(TP_STATUS_VLAN_VALID, tci=0x2064))
    assert tagged == untagged[:12] + b"\x81\x00\x20\x64" + untagged[12:]
    qinq = restore_vlan_tag(
        untagged, _auxdata(TP_STATUS_VLAN_VALID | TP_STATUS_VLAN_TPID_VALID, 5, 0x88A8)
    )
    assert qinq == untagged[:12] + b"\x88\xa8\x00\x05" + untagged[12:]
    # No tag reported (or no auxdata at all): the frame is unchanged.
    assert restore_vlan_tag(untagged, _auxdata(0, tci=7)) == untagged
    assert restore_vlan_tag(untagged, []) == untagged


@pytest.mark.integration
@pytest.mark.skipif(
    capabilities.veth_missing() is not None, reason=str(capabilities.veth_missing())
)
def test_af_packet_port_receives_vlan_tagged_frames_as_they_were_on_the_wire() -> None:
    """The kernel strips the 802.1Q tag before AF_PACKET sees the frame; the port restores it
    from PACKET_AUXDATA (as libpcap does), so the program sees the wire bytes."""
    suffix = uuid.uuid4().hex[:6]
    left, right = f"p4vA{suffix}", f"p4vB{suffix}"
    subprocess.run(["ip", "link", "add", left, "type", "veth", "peer", "name", right], check=True)
    try:
        for name in (left, right):
            subprocess.run(["ip", "link", "set", name, "up"], check=True)
            subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{name}.disable_ipv6=1"], check=False)
        a, b = AfPacketPort(1, left), AfPacketPort(2, right)
        try:
            macs = bytes.fromhex("020000000002020000000001")
            frames = [
                macs + bytes.fromhex("8100a064") + bytes.fromhex("86dd") + b"tagged" * 8,
                macs + bytes.fromhex("88a80005") + bytes.fromhex("8100000a0800") + b"qinq" * 8,
                macs + bytes.fromhex("88b5") + b"plain" * 10,
            ]
            for frame in frames:
                a.send(frame)
            got: list[bytes] = []

            def arrived() -> bool:
                while (data := b.receive()) is not None:
                    got.append(data)
                return len(got) >= len(frames)

            assert wait_for(arrived)
            assert got == frames
        finally:
            a.close()
            b.close()
    finally:
        subprocess.run(["ip", "link", "del", left], check=False)
