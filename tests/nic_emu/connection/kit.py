"""Builders for the tests of a connection's parts on their own: the queue pair as a
recording :class:`~nic_emu.connection.common.QpStatus`, and the parts a part is built
with (a bare NicCore as the host of routes, probes and frames; no Connection)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from nic_emu.config import NicConfig
from nic_emu.congestion import CongestionControl, make_congestion_control
from nic_emu.connection.common import QpState
from nic_emu.connection.events import AppEvent
from nic_emu.connection.feedback import Losses, TailProbe
from nic_emu.connection.probes import PathProbes
from nic_emu.connection.records import ConnectionCounters, ConnectionLog
from nic_emu.connection.repath import build_evs
from nic_emu.connection.rtt import RttTimers
from nic_emu.connection.templates import data_templates, probe_templates
from nic_emu.connection.transmit import DataTransmitter
from nic_emu.core import NicCore
from nic_emu.ev_set import EvEntry, EvSet
from nic_emu.nic_host import NicHost
from nic_emu.sender import BufferPayload, SendState, TxPacket, WriteRequest
from topologies import AddressPlan, load

PLAN = AddressPlan(load("tiny"))  # immutable: shared
PEER = "nic3"
QPN = 0x100
PEER_QPN = 0x300
MTU = 1024
# Few EVs (two planes, two T1s each), fixed timers, no congestion control: the tests
# read exact deadlines and windows.
CFG = NicConfig(
    evs_per_connection=4,
    backup_evs_per_connection=4,
    mtu_payload=MTU,
    adaptive_timers=False,
    trace_packets=True,
    reorder_threshold_pkts=3,
    path_quarantine=False,  # the quarantine's own tests turn it on
)
CFG = replace(CFG, cc=replace(CFG.cc, enabled=False))


class RecordingQp:
    """The queue pair as its parts see it (QpStatus): READY until failed, once."""

    def __init__(self) -> None:
        self.state = QpState.READY
        self.failures: list[tuple[str, str, int]] = []

    def fail(self, reason: str, detail: str, now: int) -> None:
        if self.state is QpState.ERROR:
            return
        self.state = QpState.ERROR
        self.failures.append((reason, detail, now))


class RecordingHost(NicHost):
    """What the acknowledgements ask of the NIC (FeedbackHost), recorded. A NicHost (the
    native build's parts take their host as one), its calls overridden."""

    def __init__(self) -> None:
        super().__init__(PLAN.topology.plane_count, [p.t1_count for p in PLAN.topology.planes])
        self.calls: list[tuple[object, ...]] = []
        self.events: list[AppEvent] = []

    def note_peer_ports(self, peer: str, bits: int, now: int) -> None:
        self.calls.append(("ports", peer, bits, now))

    def heard_from(self, peer: str, ev: int, now: int) -> None:
        self.calls.append(("heard", peer, ev, now))

    def drop(self, now: int, reason: str, plane: int | None, **detail: object) -> None:
        self.calls.append(("drop", reason, plane, detail))

    def emit(self, event: AppEvent) -> None:
        self.events.append(event)


@dataclass
class Parts:
    """The state a send-side part is built with, and the parts below it."""

    core: NicCore
    cfg: NicConfig
    qp: RecordingQp
    send: SendState
    evs: EvSet
    cc: CongestionControl
    timers: RttTimers
    frames: DataTransmitter
    probes: PathProbes
    losses: Losses
    tail: TailProbe
    counters: ConnectionCounters
    log: ConnectionLog
    out: list[tuple[int, bytes]] = field(default_factory=list)


def make_parts(cfg: NicConfig = CFG, *, mrc: bool = True, now: int = 0) -> Parts:
    core = NicCore("nic0", PLAN, cfg)
    qp = RecordingQp()
    counters = ConnectionCounters()
    log = ConnectionLog(core.log, core.name, QPN)
    send = SendState(0, cfg.mtu_payload, cfg.receive_window_psns)
    evs = build_evs(core, cfg, PEER, qpn=QPN, peer_qpn=PEER_QPN, mrc=mrc, rng=random.Random(1))
    cc = make_congestion_control(cfg.cc, cfg.mtu_payload, 64 * cfg.mtu_payload, 12_000, now)
    timers = RttTimers(cfg, now, adaptive=cfg.adaptive_timers)
    peer_addrs = [PLAN.nic_address(PEER, p).packed for p in range(core.plane_count)]
    frames = DataTransmitter(
        core,
        data_templates(core, peer_addrs, PEER_QPN),
        trace=cfg.trace_packets,
        counters=counters,
        log=log,
        now=now,
    )
    probes = PathProbes(
        core,
        cfg,
        evs,
        timers,
        probe_templates(core, peer_addrs),
        peer_qpn=PEER_QPN,
        counters=counters,
        log=log,
    )
    losses = Losses(qp, cfg, send, evs, cc, timers, probes, mrc=mrc, counters=counters, log=log)
    tail = TailProbe(
        qp,
        send,
        evs,
        cc,
        timers,
        frames,
        probes,
        losses,
        mrc=mrc,
        mtu=cfg.mtu_payload,
        window=cfg.receive_window_psns,
    )
    return Parts(core, cfg, qp, send, evs, cc, timers, frames, probes, losses, tail, counters, log)


def post(parts: Parts, packets: int, now: int = 0, wr_id: int = 1) -> WriteRequest:
    """Post a WRITE of ``packets`` full packets."""
    size = packets * parts.cfg.mtu_payload
    data = bytes(range(256)) * (size // 256)
    wr = WriteRequest(wr_id, BufferPayload(memoryview(data)), size, 0x1000, 7, packets, now)
    parts.send.post(wr)
    return wr


def transmit(parts: Parts, now: int, entry: EvEntry | None = None) -> TxPacket:
    """The next packet of the send state, on ``entry`` (default: the EV set's pick)."""
    pkt = parts.send.next_packet()
    assert pkt is not None
    if entry is None:
        entry = parts.evs.pick(now)
        assert entry is not None
    parts.out.append(parts.frames.transmit(pkt, entry, parts.send, now))
    return pkt
