"""Bad input from the wire or the API: counted or refused clearly, never a crash."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrc_wire import DataPacket, Probe, Sack, decode, encode
from nic_emu.config import NicConfig
from nic_emu.connection.host import ConnectionFailed
from nic_emu.core import NicCore
from nic_emu.exceptions import (
    ConfigError,
    ConnectionSetupError,
    FabricError,
    MemoryAccessError,
    UnknownConnectionError,
)
from nic_emu.testing.model_fabric import LinkFault
from topologies import AddressPlan, load

from .conftest import finish, make_net, start_transfer
from .harness import QPN_A, QPN_B, Pair, decoded

MTU = 4096


def _reencode(frame: bytes, **changes: object) -> bytes:
    return encode(dataclasses.replace(decode(frame), **changes))


def _sample_frames() -> list[bytes]:
    pair = Pair()
    pair.write(bytes(3 * MTU))
    data = [f for _, f in pair.a.frames_to_send(0)]
    pair.deliver(pair.b, [(0, f) for f in data], 1)
    return data + [f for _, f in pair.b.frames_to_send(1)]


SAMPLES = _sample_frames()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(junk: bytes) -> None:
    pair = Pair()
    pair.b.receive_frame(junk, 0, 0)
    counters = pair.b.counters
    assert counters["rx_frames"] == 1
    assert counters["rx_malformed"] + counters["rx_foreign"] + counters["rx_unknown_qpn"] <= 1


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(range(len(SAMPLES))),
    st.lists(st.tuples(st.integers(0, 130), st.integers(0, 255)), min_size=1, max_size=6),
    st.integers(0, 4300),
)
def test_mutated_headers_and_truncation_never_raise(
    index: int, edits: list[tuple[int, int]], cut: int
) -> None:
    frame = bytearray(SAMPLES[index])
    for pos, value in edits:
        if pos < len(frame):
            frame[pos] = value
    pair = Pair()
    pair.write(bytes(3 * MTU))
    pair.a.frames_to_send(0)
    for core in (pair.a, pair.b):
        core.receive_frame(bytes(frame[:cut]), 0, 5)
        core.receive_frame(bytes(frame), 1, 6)
        core.frames_to_send(7)
        core.handle_timer(10**9)


def test_malformed_and_foreign_frames_are_counted_and_a_transfer_survives_them() -> None:
    net = make_net()
    t = start_transfer(net, size=2 << 20)
    net.run(until_ns=5_000)
    b = net.cores["nic2"]
    plan = net.plan
    data = next(f for f in SAMPLES if isinstance(decode(f), DataPacket))
    sack = next(f for f in SAMPLES if isinstance(decode(f), Sack))
    nic4 = plan.nic_address("nic4", 0).packed
    outside = bytes.fromhex("20010db8" + "00" * 12)
    qpn = t.receiver.qpn
    to_receiver = [
        b"",
        b"\x00" * 60,
        data[:70],  # truncated
        data[:12] + b"\x08\x00" + data[14:],  # IPv4 ethertype
        _reencode(data, inner_dst=nic4, dqpn=qpn),  # for another NIC
        _reencode(data, dqpn=0xABCDE),  # unknown QPN
        _reencode(data, dqpn=qpn, inner_src=nic4),  # our QPN, wrong peer
        _reencode(data, dqpn=qpn, rkey=0xDEAD),  # bad R_Key from the right peer
        encode(Probe(**_envelope(data, inner_src=outside), dqpn=2)),  # probe from outside
        encode(Probe(**_envelope(data), dqpn=2, reply=True, probe_id=999)),  # unknown reply
    ]
    to_sender = [
        _reencode(sack, dqpn=t.sender.qpn, inner_src=nic4),  # a SACK from a stranger
        _reencode(sack, dqpn=t.sender.qpn, cum_psn=0x7FFFFF),  # acks data never sent
    ]
    a = net.cores["nic0"]
    for frame in to_receiver:
        b.receive_frame(frame, 0, net.now)
    for frame in to_sender:
        a.receive_frame(frame, 0, net.now)
    b.receive_frame(data, 99, net.now)  # a port this NIC does not have
    assert finish(t) and t.delivered
    assert b.counters["rx_malformed"] == 4
    assert b.counters["rx_foreign"] == 2 and b.counters["rx_unknown_qpn"] == 1
    assert b.counters["rx_probe_reply_unknown"] == 1
    assert t.receiver.counters["rx_access_error"] == 1
    assert t.sender.counters["rx_bad_ack"] == 1
    assert b.drop_reasons["foreign_source"] == 1 and a.drop_reasons["foreign_source"] == 1
    assert b.drop_reasons["bad_port"] == 1
    assert {
        "malformed",
        "not_for_this_nic",
        "unknown_qpn",
        "memory_access",
        "probe_from_unknown_nic",
    } <= set(b.drop_reasons)
    assert "ack_outside_window" in a.drop_reasons


def _envelope(frame: bytes, **changes: object) -> dict[str, object]:
    m = decode(frame)
    fields = {
        f: getattr(m, f)
        for f in ("dst_mac", "src_mac", "outer_src", "outer_dst", "inner_src", "inner_dst", "ev")
    }
    fields.update(changes)
    return fields


def test_write_to_a_bad_rkey_fails_the_connection_clearly() -> None:
    net = make_net(max_retries=2)
    a, b = net.connect("nic0", "nic2")
    region = net.register_memory("nic2", 4096)
    a.post_write(b"x" * 100, region.va, region.rkey + 7, net.now)
    net.service("nic0")
    assert net.run_until_idle([a], limit_ns=100_000_000)
    (failure,) = net.failures("nic0")
    assert isinstance(failure, ConnectionFailed) and failure.reason == "max_retries"
    assert b.counters["rx_access_error"] >= 1


def test_all_ports_down_fails_with_no_usable_ev() -> None:
    net = make_net(no_usable_ev_timeout_ns=200_000)
    t = start_transfer(net, size=1 << 20, post=False)
    for plane in range(4):
        net.fabric.set_link_state("nic0", f"p{plane}-t0-0", False)
    t.post()
    assert finish(t)
    (failure,) = net.failures("nic0")
    assert failure.reason == "no_usable_ev" and "every plane down" in failure.message


def test_a_silent_peer_is_reported_unreachable_within_peer_timeout_never_hangs() -> None:
    net = make_net()
    t = start_transfer(net, size=1 << 20, post=False)
    net.fabric.set_fault_everywhere(LinkFault(drop_prob=1.0))
    t.post()
    assert finish(t, limit_ns=1_000_000_000)
    (failure,) = net.failures("nic0")
    assert failure.reason == "peer_unreachable"
    assert "nic2 is unreachable" in failure.message and "probes answered 0/" in failure.message
    assert failure.t_ns <= net.cores["nic0"].config.peer_timeout_ns + 100_000
    assert t.sender.state.value == "error" and net.events.pending() < 100


def test_api_errors_are_specific() -> None:
    plan = AddressPlan(load("small"))
    with pytest.raises(ConfigError, match="cannot build NIC 'nic99'"):
        NicCore("nic99", plan)
    with pytest.raises(ConfigError, match="cannot be split across 4 planes"):
        NicCore("nic0", plan, NicConfig(evs_per_connection=2))
    core = NicCore("nic0", plan, NicConfig(evs_per_connection=8))
    with pytest.raises(ConnectionSetupError, match="unknown peer"):
        core.create_connection("nicX", peer_qpn=0x100)
    with pytest.raises(ConnectionSetupError, match="to itself"):
        core.create_connection("nic0", peer_qpn=0x100)
    with pytest.raises(ConnectionSetupError, match="reserved"):
        core.create_connection("nic2", peer_qpn=2)
    with pytest.raises(ConnectionSetupError, match="24-bit PSN"):
        core.create_connection("nic2", peer_qpn=0x100, send_psn=1 << 24)
    conn = core.create_connection("nic2", qpn=0x300, peer_qpn=0x100)
    with pytest.raises(ConnectionSetupError, match="already in use"):
        core.create_connection("nic2", qpn=0x300, peer_qpn=0x100)
    with pytest.raises(UnknownConnectionError, match="no connection with QPN"):
        core.post_write(0x999, b"x", 0, 1, 0)
    with pytest.raises(MemoryAccessError, match="bytes-like"):
        conn.post_write("text", 0, 1, 0)  # type: ignore[arg-type]
    with pytest.raises(MemoryAccessError, match="64-bit"):
        conn.post_write(b"x", -1, 1, 0)
    with pytest.raises(MemoryAccessError, match="64-bit"):
        conn.post_write(b"xy", (1 << 64) - 1, 1, 0)
    with pytest.raises(MemoryAccessError, match="R_Key"):
        conn.post_write(b"x", 0, 1 << 32, 0)
    with pytest.raises(ConfigError, match=r"ports 0\.\.3"):
        core.set_port_state(7, False, 0)


def test_fabric_api_errors_are_specific() -> None:
    net = make_net()
    with pytest.raises(FabricError, match="no link from nic0 to p0-t1-0"):
        net.fabric.channel("nic0", "p0-t1-0")
    with pytest.raises(FabricError, match="drop_prob must be a probability"):
        LinkFault(drop_prob=2.0)
    with pytest.raises(FabricError, match="positive"):
        net.fabric.flap("nic0", "p0-t0-0", start_ns=0, down_ns=0, up_ns=1, cycles=1)
    with pytest.raises(FabricError, match="no switch"):
        net.fabric.set_switch_state("p9-t0-0", False)
    net.run(until_ns=100)
    with pytest.raises(
        FabricError, match="flap cannot start at 99 ns: virtual time is already 100"
    ):
        net.fabric.flap("nic0", "p0-t0-0", start_ns=99, down_ns=1, up_ns=1, cycles=1)
    with pytest.raises(FabricError, match="has no port on plane 9"):
        net.fabric.transmit("nic0", 9, b"")


def test_probe_traffic_is_answered_only_for_known_nics() -> None:
    pair = Pair()
    ev = pair.ca.evs.ring[0]
    pair.ca.evs.mark_bad(ev, "loss", 0)
    pair.a.handle_timer(pair.ca.probes.next_ns)
    probes = pair.a.frames_to_send(pair.ca.probes.next_ns)
    assert [m.dqpn for m in decoded(probes)] == [2]
    pair.deliver(pair.b, probes, 1)
    (reply,) = decoded(pair.b.frames_to_send(1))
    assert reply.reply and reply.probe_ev == ev.ev and reply.dqpn == 2
    assert QPN_A != QPN_B


def _first_data_frame(pair: Pair) -> bytes:
    pair.write(bytes(MTU))
    return next(f for _, f in pair.a.frames_to_send(0) if isinstance(decode(f), DataPacket))


def test_a_frame_for_any_of_this_nics_addresses_is_taken_on_any_port() -> None:
    """receive_frame checks the arriving port's own address first and the NIC's other
    addresses after: a data packet addressed to any of them, arriving on any port, is
    taken exactly as one for the port's own address (the same counters, log and reply)."""
    data = _first_data_frame(Pair())
    planes = range(Pair().b.plane_count)
    assert len(planes) > 1
    for port in planes:
        for to in planes:
            reference, pair = Pair(), Pair()
            assert _first_data_frame(reference) == _first_data_frame(pair) == data
            own = pair.b.addrs
            reference.b.receive_frame(_reencode(data, inner_dst=own[port]), port, 1)
            pair.b.receive_frame(_reencode(data, inner_dst=own[to]), port, 1)
            assert pair.b.counters == reference.b.counters
            assert pair.b.counters["rx_foreign"] == pair.b.counters["rx_dropped"] == 0
            assert pair.b.plane_rx == reference.b.plane_rx == [int(p == port) for p in planes]
            assert [r.as_dict() for r in pair.log.records] == [
                r.as_dict() for r in reference.log.records
            ]
            assert pair.b.frames_to_send(2) == reference.b.frames_to_send(2) != []


def test_a_frame_for_another_nic_is_dropped_on_every_port() -> None:
    """A frame for another NIC's address (on any plane) is counted as foreign and dropped
    as ``not_for_this_nic`` on the port it came in on, whichever port that is."""
    pair = Pair()
    data = _first_data_frame(pair)
    b = pair.b
    planes = range(b.plane_count)
    others = [pair.plan.nic_address(name, p).packed for name in ("nic0", "nic4") for p in planes]
    assert not set(others) & set(b.addrs)
    drops = 0
    for port in planes:
        for addr in others:
            before = len(pair.log.of_kind("rx_drop"))
            b.receive_frame(_reencode(data, inner_dst=addr), port, 1)
            drops += 1
            assert b.counters["rx_frames"] == drops
            assert b.counters["rx_foreign"] == b.counters["rx_dropped"] == drops
            assert b.drop_reasons == {"not_for_this_nic": drops}
            (event,) = pair.log.of_kind("rx_drop")[before:]
            assert event.plane == port and event.detail == {"reason": "not_for_this_nic"}
    assert b.plane_rx == [0] * b.plane_count
