"""Digests (with acks) and idle-timeout notifications through a running SwitchProcess."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from finsy.proto import p4r

from p4emu.server.client import P4RuntimeClient
from p4emu.server.main import SwitchProcess
from p4emu.server.options import parse_options

PROGRAM = Path(__file__).parent / "programs" / "learning.p4"


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def rig():
    host = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    host.bind(("127.0.0.1", 0))
    switch_side = free_udp_port()
    host.connect(("127.0.0.1", switch_side))
    options = parse_options(
        [
            f"--interface=1@udp:{switch_side}/{host.getsockname()[1]}",
            str(PROGRAM),
            "--",
            "--grpc-server-addr",
            "127.0.0.1:0",
        ]
    )
    process = SwitchProcess(options)
    process.start()
    client = P4RuntimeClient(f"127.0.0.1:{process.grpc_port}").connect()
    client.fetch_p4info()
    yield client, host
    client.close()
    process.close()
    process.close()  # idempotent
    host.close()


def frame(src: int) -> bytes:
    return (0xFFFFFFFFFFFF).to_bytes(6, "big") + src.to_bytes(6, "big") + b"\x88\xb5data"


def enable_digest(client: P4RuntimeClient, ack_timeout_ns: int) -> int:
    digest_id = client.p4info.digests[0].preamble.id
    entity = p4r.Entity()
    entity.digest_entry.digest_id = digest_id
    entity.digest_entry.config.max_timeout_ns = 0
    entity.digest_entry.config.max_list_size = 1
    entity.digest_entry.config.ack_timeout_ns = ack_timeout_ns
    client.insert(entity)
    return digest_id


def test_digest_lists_reach_the_primary_and_acks_release_the_filter(rig) -> None:
    client, host = rig
    host.send(frame(0x111))  # digest not enabled yet: nothing is sent to the controller
    time.sleep(0.2)
    assert client.digests.empty()
    digest_id = enable_digest(client, ack_timeout_ns=10_000_000_000)
    host.send(frame(0x222))
    digest = client.digests.get(timeout=5)
    assert digest.digest_id == digest_id
    (sample,) = digest.data
    assert [int.from_bytes(m.bitstring, "big") for m in sample.struct.members] == [0x222, 1]
    host.send(frame(0x222))  # same sample, not acknowledged: filtered as a duplicate
    time.sleep(0.2)
    assert client.digests.empty()
    ack = p4r.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = digest_id, digest.list_id
    client._requests.put(ack)
    time.sleep(0.1)
    host.send(frame(0x222))
    assert client.digests.get(timeout=5).data[0].struct.members[0].bitstring == b"\x02\x22"
    bad_ack = p4r.StreamMessageRequest()
    bad_ack.digest_ack.digest_id, bad_ack.digest_ack.list_id = digest_id, 987654
    client._requests.put(bad_ack)
    error = client.stream_errors.get(timeout=5)
    assert "987654" in error.message


def test_idle_entries_are_reported_once_until_hit_again(rig) -> None:
    client, host = rig
    entry = client.table_entry(
        "LearnIngress.source", {"hdr.ethernet.src": 0x333}, "LearnIngress.known"
    )
    entry.table_entry.idle_timeout_ns = 100_000_000
    client.insert(entry)
    notifications: list[p4r.IdleTimeoutNotification] = []

    def collect(timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = client.idle_timeouts.get(timeout=0.05)
            except Exception:
                continue
            notifications.append(message)

    collect(0.6)
    assert len(notifications) == 1
    (reported,) = notifications[0].table_entry
    assert reported.match[0].exact.value == b"\x03\x33"
    host.send(frame(0x333))  # a hit re-arms the timeout
    collect(0.6)
    assert len(notifications) == 2


def test_link_delay_holds_frames_in_order() -> None:
    """--link-delay-us: frames leave the port no earlier than the delay, in order."""
    program = Path(__file__).parent / "programs" / "p4rt_demo.p4"
    hosts = []
    specs = []
    for port in (1, 2):
        host = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        host.bind(("127.0.0.1", 0))
        switch_side = free_udp_port()
        host.connect(("127.0.0.1", switch_side))
        host.settimeout(5)
        hosts.append(host)
        specs.append(f"--interface={port}@udp:{switch_side}/{host.getsockname()[1]}")
    delay_s = 0.25
    options = parse_options(
        [
            *specs,
            "--link-delay-us",
            f"2={delay_s * 1e6}",
            str(program),
            "--",
            "--grpc-server-addr",
            "127.0.0.1:0",
        ]
    )
    process = SwitchProcess(options)
    process.start()
    try:
        with P4RuntimeClient(f"127.0.0.1:{process.grpc_port}") as client:
            client.fetch_p4info()
            client.insert(
                client.table_entry(
                    "DemoIngress.l2_fwd",
                    {"hdr.ethernet.dst": 0xB},
                    "DemoIngress.forward",
                    {"port": 2},
                )
            )
        frames = [
            (0xB).to_bytes(6, "big") + bytes(6) + b"\x88\xb5" + bytes([i]) * 20 for i in range(5)
        ]
        sent_at = time.monotonic()
        for item in frames:
            hosts[0].send(item)
        received = [hosts[1].recv(2048)]
        first_arrival = time.monotonic()
        received += [hosts[1].recv(2048) for _ in frames[1:]]
        assert received == frames
        assert first_arrival - sent_at >= delay_s
    finally:
        process.close()
        for host in hosts:
            host.close()
