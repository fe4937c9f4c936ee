"""The driver contract: the loopback pair and the in-memory fabric drive the same core."""

from __future__ import annotations

import hashlib

from nic_emu.config import NicConfig, TransportMode
from nic_emu.connection.host import WriteCompleted, WriteReceived
from nic_emu.core import NicCore, service
from nic_emu.testing import LoopbackPair
from topologies import AddressPlan, load
from vfabric.eventlist import EventList

from .conftest import payload


def test_loopback_pair_moves_bytes_exactly_in_both_modes() -> None:
    plan = AddressPlan(load("paper-8plane"))
    for mode in TransportMode:
        pair = LoopbackPair(plan, "nic0", "nic5", EventList(), NicConfig(), seed=4)
        sender, _ = pair.connect(mode)
        region = pair.b.register_memory(3 << 20)
        data = payload(3 << 20, 9)
        sender.post_write(data, region.va, region.rkey, 0)
        pair.service(pair.a)
        assert pair.run_until_idle([sender], limit_ns=10_000_000)
        assert hashlib.sha256(region.buffer).digest() == hashlib.sha256(data).digest()
        assert [type(e) for e in pair.app_events["nic0"]] == [WriteCompleted]
        assert [type(e) for e in pair.app_events["nic5"]] == [WriteReceived]
        assert pair.frames > 768


def test_service_flushes_frames_and_reports_timer_and_events() -> None:
    plan = AddressPlan(load("tiny"))
    core = NicCore("nic0", plan, NicConfig(evs_per_connection=4, backup_evs_per_connection=0))
    conn = core.create_connection("nic2", peer_qpn=0x100)
    region_va, rkey = 0x1000, 1
    conn.post_write(b"hello", region_va, rkey, 0)
    sent: list[tuple[int, bytes]] = []
    deadline, events = service(core, 0, lambda plane, frame: sent.append((plane, frame)))
    assert len(sent) == 1 and events == []
    assert deadline is not None and deadline > 0
    assert service(core, 1, lambda plane, frame: sent.append((plane, frame)))[0] == deadline
    assert len(sent) == 1


def test_port_pacing_spreads_a_window_over_time() -> None:
    plan = AddressPlan(load("tiny"))
    core = NicCore("nic0", plan, NicConfig(evs_per_connection=4, backup_evs_per_connection=0))
    conn = core.create_connection("nic2", peer_qpn=0x100)
    conn.post_write(bytes(64 * 4096), 0x1000, 1, 0)
    first = core.frames_to_send(0)
    assert len(first) == 2  # one packet per port (2 planes) at t=0
    assert core.next_timer() == conn.tx.pace_at and conn.tx.pace_at > 0
    t = core.next_timer()
    core.handle_timer(t)
    assert len(core.frames_to_send(t)) == 2
