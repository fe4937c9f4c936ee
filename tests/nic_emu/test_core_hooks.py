"""The core's hooks for out-of-band QP setup: accepting unknown QPNs, responder memory of
a QP's own, destroying a QP."""

from __future__ import annotations

import gc
import hashlib
import weakref

import pytest

from mrc_wire import DataPacket, Sack, encode_data
from nic_emu.config import NicConfig
from nic_emu.connection import Connection
from nic_emu.core import NicCore
from nic_emu.event_log import EventLog
from nic_emu.exceptions import ConnectionSetupError, UnknownConnectionError
from nic_emu.streams import StreamReceiver
from nic_emu.transfers import MemoryBudget

from .harness import HARNESS_CONFIG, PLAN, QPN_A, Pair, decoded


def sender_frames(data: bytes, qpn: int = QPN_A) -> tuple[NicCore, list[tuple[int, bytes]]]:
    """nic0's frames for a WRITE of ``data`` at VA 0 / R_Key ``qpn`` on QP ``qpn``."""
    a = NicCore("nic0", PLAN, HARNESS_CONFIG, seed=1)
    conn = a.create_connection("nic2", qpn=qpn, peer_qpn=qpn)
    conn.post_write(data, 0, qpn, 0)
    return a, a.frames_to_send(0)


class Acceptor:
    """A receiving NIC that opens a QP for any unknown QPN, checked into a sink of its own."""

    def __init__(self, refuse: bool = False, name: str = "nic2") -> None:
        self.core = NicCore(name, PLAN, HARNESS_CONFIG, seed=2, log=EventLog())
        self.core.accept_unknown_qp = self.accept
        self.refuse = refuse
        self.calls: list[tuple[str, int]] = []
        self.budget = MemoryBudget(limit=1 << 20)
        self.sink: StreamReceiver | None = None

    def accept(self, peer: str, qpn: int, now: int) -> Connection | None:
        self.calls.append((peer, qpn))
        if self.refuse:
            return None
        conn = self.core.create_connection(peer, qpn=qpn, peer_qpn=qpn, now=now)
        self.sink = StreamReceiver(0, self.budget, max_va=1 << 20)
        conn.attach_responder_sink(self.sink)
        return conn


def test_an_unknown_qpn_is_accepted_and_checked_into_its_own_sink() -> None:
    data = bytes(range(256)) * 40  # 3 packets of 4096 B
    _, frames = sender_frames(data)
    b = Acceptor()
    for plane, frame in reversed(frames):  # the last first: held until the gap fills
        b.core.receive_frame(frame, plane, 10)
    assert b.calls == [("nic0", QPN_A)]  # once, then the QP exists
    assert b.sink is not None and b.sink.pop_message() == (
        len(data),
        hashlib.sha256(data).hexdigest(),
    )
    assert b.sink.held_bytes == 0 and b.sink.peak_held_bytes == len(data) - 4096
    assert b.core.connection(QPN_A).counters["bytes_placed"] == len(data)
    sacks = [m for m in decoded(b.core.frames_to_send(10)) if isinstance(m, Sack)]
    assert sacks and all(s.dqpn == QPN_A for s in sacks)
    assert not b.core.memory.regions  # nothing registered on the NIC itself


def test_a_refused_qpn_is_dropped_as_unknown() -> None:
    _, frames = sender_frames(b"x" * 100)
    b = Acceptor(refuse=True)
    b.core.receive_frame(frames[0][1], frames[0][0], 0)
    assert b.calls == [("nic0", QPN_A)]
    assert b.core.counters["rx_unknown_qpn"] == 1 and not b.core.connections


def test_acceptance_errors_and_feedback_frames_never_open_a_qp() -> None:
    # A reserved QPN makes create_connection raise: refused, nothing escapes.
    _, frames = sender_frames(b"x" * 100)
    b = Acceptor()
    (m,) = decoded(frames[:1])
    assert isinstance(m, DataPacket)
    m.dqpn = 0x10
    b.core.receive_frame(encode_data(m), 0, 0)
    assert b.core.counters["rx_unknown_qpn"] == 1 and not b.core.connections
    # A SACK for an unknown QPN is not a reason to open a QP.
    pair = Pair()
    pair.write(b"y" * 100)
    pair.deliver(pair.b, pair.a.frames_to_send(0), 1)
    sack = pair.b.frames_to_send(1)
    b2 = Acceptor(name="nic0")  # the SACK's addressee, without the QP
    assert sack
    for plane, frame in sack:
        b2.core.receive_frame(frame, plane, 2)
    assert b2.calls == [] and b2.core.counters["rx_unknown_qpn"] == len(sack)


def test_memory_the_sink_refuses_is_an_access_error() -> None:
    b = Acceptor()
    _, frames = sender_frames(b"z" * 10)
    (m,) = decoded(frames)
    assert isinstance(m, DataPacket)
    m.va = 2 << 20  # beyond what the sink accepts
    b.core.receive_frame(encode_data(m), 0, 0)
    conn = b.core.connection(QPN_A)
    assert conn.counters["rx_access_error"] == 1 and conn.counters["rx_data"] == 0


def test_destroy_connection_forgets_the_qp() -> None:
    a = NicCore("nic0", PLAN, NicConfig(evs_per_connection=8, backup_evs_per_connection=8))
    conn = a.create_connection("nic2", qpn=0x300, peer_qpn=0x300)
    entry = next(iter(conn.evs.entries()))
    entry.probe_seq = a.register_probe(conn, entry)
    assert a.destroy_connection(0x300) is conn
    assert 0x300 not in a.connections and entry.probe_seq == -1 and not a._probes
    with pytest.raises(UnknownConnectionError):
        a.destroy_connection(0x300)
    with pytest.raises(ConnectionSetupError):
        a.create_connection("nic2", qpn=0x10, peer_qpn=0x300)


class _Buffer(bytearray):
    """A bytearray that can be watched with a weak reference."""


def test_a_destroyed_qp_keeps_no_reference_to_the_data_it_sent() -> None:
    """A process keeps its finished transfers (and their QP objects) for reports; their
    data must be freed with the QP (the soak showed 4 MB kept per transfer)."""
    data = _Buffer(b"x" * 20_000)
    watch = weakref.ref(data)
    a, _frames = sender_frames(bytes(0))
    conn = a.connection(QPN_A)
    conn.post_write(memoryview(data)[:10_000], 0, QPN_A, 0)
    assert a.frames_to_send(0)
    del data
    gc.collect()
    assert watch() is not None  # still in flight: the QP needs it
    entry = next(e for e in conn.evs.entries() if e.tx_packets)
    entry.acked_packets = 7  # as if acknowledged
    acked = conn.acked_per_plane()
    a.destroy_connection(QPN_A)
    gc.collect()
    assert watch() is None and conn.counters["tx_data"] >= 1
    # The EV set goes too (hundreds of entries per QP); what reports need stays.
    assert not list(conn.evs.entries()) and conn.acked_per_plane() == acked
    assert acked[entry.plane] == 7
