"""A sans-IO harness: two NIC cores driven by hand, frame by frame (no driver at all)."""

from __future__ import annotations

from dataclasses import replace

from mrc_wire import DataPacket, Message, decode
from nic_emu.config import NicConfig, TransportMode
from nic_emu.core import NicCore
from nic_emu.event_log import EventLog
from topologies import AddressPlan, load

QPN_A = 0x100
QPN_B = 0x200

# Ports so fast that pacing never holds a packet back: every frame of a window comes out
# of one frames_to_send() call, which keeps these tests about protocol reactions.
HARNESS_CONFIG = NicConfig(
    evs_per_connection=8,
    backup_evs_per_connection=8,
    port_rate_bps=10**15,
    base_rtt_ns=12_000,
)

Frames = list[tuple[int, bytes]]
PLAN = AddressPlan(load("small"))  # immutable: shared by every Pair


class Pair:
    """nic0 (sender side, ``a``) and nic2 (receiver side, ``b``) of the ``small`` fabric."""

    def __init__(self, mode: TransportMode = TransportMode.MRC, **overrides: object) -> None:
        plan = PLAN
        self.plan = plan
        config = replace(HARNESS_CONFIG, **overrides)  # type: ignore[arg-type]
        self.log = EventLog()
        self.a = NicCore("nic0", plan, config, seed=1, log=self.log)
        self.b = NicCore("nic2", plan, config, seed=2, log=self.log)
        self.ca = self.a.create_connection("nic2", qpn=QPN_A, peer_qpn=QPN_B, mode=mode)
        self.cb = self.b.create_connection("nic0", qpn=QPN_B, peer_qpn=QPN_A, mode=mode)
        self.region = self.b.register_memory(1 << 20)

    def write(self, data: bytes, now: int = 0, offset: int = 0) -> int:
        return self.a.post_write(QPN_A, data, self.region.va + offset, self.region.rkey, now)

    @staticmethod
    def deliver(core: NicCore, frames: Frames, now: int) -> None:
        for plane, frame in frames:
            core.receive_frame(frame, plane, now)

    def kinds(self, *kinds: str) -> list:
        return self.log.of_kind(*kinds)


def decoded(frames: Frames) -> list[Message]:
    return [decode(f) for _, f in frames]


def data_psns(frames: Frames) -> list[int]:
    return [m.psn for m in decoded(frames) if isinstance(m, DataPacket)]
