"""NicCore's incremental scheduling (who may send, when the next timer is) decides exactly
what scanning every connection on every call decides.

``ScanningCore`` is the plain version: every call asks every READY connection to send and
takes the minimum of every connection's deadline. The same runs (many connections over the
model fabric, with losses, ECN, a plane cut and restored, a destroyed queue pair) must give
the same frames, the same timers and the same event log with either core.
"""

from __future__ import annotations

import hashlib

import pytest

from nic_emu.config import NicConfig
from nic_emu.connection import QpState
from nic_emu.core import NicCore, service
from nic_emu.testing import sim
from nic_emu.testing.model_fabric import LinkFault
from topologies import load
from vfabric.eventlist import EventList


class ScanningCore(NicCore):
    """The reference: scans every connection on every call."""

    def frames_to_send(self, now: int) -> list[tuple[int, bytes]]:
        out = self.out
        ready = [c for c in self.connections.values() if c.state is QpState.READY]
        for conn in ready:
            conn.tx.pace_at = None
        if len(ready) > 1:
            start = self._rr % len(ready)
            self._rr += 1
            ready = ready[start:] + ready[:start]
        while ready:
            sent = [(c, c.send_one(now)) for c in ready]
            out.extend(frame for _, frame in sent if frame is not None)
            ready = [c for c, frame in sent if frame is not None]
        self.out = []
        return out

    def next_timer(self) -> int | None:
        deadlines = [c.next_deadline() for c in self.connections.values()]
        found = [t for t in deadlines if t is not None]
        return min(found) if found else None

    def handle_timer(self, now: int) -> None:
        for conn in list(self.connections.values()):
            t = conn.next_deadline()
            if t is not None and t <= now:
                self.out.extend(conn.on_timer(now))


def run(
    core_class: type[NicCore], config: NicConfig, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, list]:
    """All-to-all among four NICs of ``small`` with faults; (log digest, timer trace)."""
    monkeypatch.setattr(sim, "NicCore", core_class)
    trace: list[tuple[str, int, int | None]] = []

    def traced(core: NicCore, now: int, transmit):  # type: ignore[no-untyped-def]
        deadline, events = service(core, now, transmit)
        trace.append((core.name, now, deadline))
        if core_class is NicCore:
            # The incremental answer is the scan's answer at every single call.
            scan = [c.next_deadline() for c in core.connections.values()]
            found = [t for t in scan if t is not None]
            assert deadline == (min(found) if found else None)
            for conn in core.connections.values():
                if conn.state is QpState.READY and not conn.window_blocked():
                    # It may send: the core must still ask it (queued or waiting for a port).
                    assert conn in core._sendable or conn.parked_plane >= 0
        return deadline, events

    monkeypatch.setattr(sim, "service", traced)
    net = sim.SimNetwork(load("small"), EventList(), config=config, seed=7)
    names = ["nic0", "nic1", "nic4", "nic6"]
    conns = []
    for a in names:
        for b in names:
            if a != b:  # two queue pairs per pair of NICs: they share what is heard
                conns.extend(net.connect(a, b))
    regions = {n: net.register_memory(n, 4 << 20) for n in names}
    net.fabric.set_fault_everywhere(
        LinkFault(drop_prob=0.01, reorder_prob=0.05, reorder_delay_ns=3000)
    )
    for i, conn in enumerate(conns):
        data = bytes([i]) * (160 << 10)  # an incast into every NIC: queues, ECN, trims
        net.write(conn, data, regions[conn.peer], offset=(i % 24) * (160 << 10))
    net.events.at(40_000, lambda _: net.fabric.fail_plane(1, ports=True))
    net.events.at(140_000, net.fabric.restore_plane, 1)
    victim = conns[-1]

    def destroy(_: None) -> None:
        victim.nic.destroy_connection(victim.qpn)
        net.service(victim.nic.name)

    net.events.at(90_000, destroy)
    net.run_until_idle(conns[:-1], limit_ns=50_000_000)
    digest = hashlib.sha256("\n".join(r.to_json() for r in net.log).encode()).hexdigest()
    assert net.completed("nic0"), "the run should complete writes"
    return digest, trace


CONFIGS = {
    "default": NicConfig(),
    # One EV per plane, no backups, long ECN skips: connections run out of GOOD
    # EVs and send on SKIP ones (picked by time), and lose every EV of a cut plane.
    "few_evs": NicConfig(evs_per_connection=4, backup_evs_per_connection=0, ev_skip_ns=400_000),
    # A peer timeout shorter than the RTO: the shared "last heard from the peer" time
    # decides deadlines.
    "short_peer_timeout": NicConfig(peer_timeout_ns=20_000, ack_timeout_exp=8),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_incremental_scheduling_matches_scanning(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    digest, trace = run(NicCore, CONFIGS[name], monkeypatch)
    ref_digest, ref_trace = run(ScanningCore, CONFIGS[name], monkeypatch)
    assert trace == ref_trace
    assert digest == ref_digest


def test_refresh_hands_out_the_stale_set_and_earliest_gives_the_connection() -> None:
    net = sim.SimNetwork(load("small"), EventList(), seed=7)
    a, _ = net.connect("nic0", "nic1")
    c, _ = net.connect("nic0", "nic4")
    region = net.register_memory("nic1", 1 << 16)
    net.write(a, b"x" * 8192, region)  # in flight: a has a retransmission deadline
    core = a.nic
    assert c.nic is core and core._stale == set()
    core.touch(a)
    core.touch(c)
    fresh = core._refresh_timers()
    assert fresh == {a, c} and core._stale == set() and core._stale is not fresh
    earliest = core._earliest(fresh)
    assert earliest is a and a.sched_deadline == a.deadlines.timer_deadline()
    assert core.next_timer() == a.sched_deadline
    core.touch(c)  # collected apart from the set handed out, which stays as it was
    assert core._stale == {c} and fresh == {a, c}
    again = core._refresh_timers()
    assert again == {c} and again is not fresh and core._stale == set()
    core.destroy_connection(a.qpn)
    assert a not in core._fresh and a not in core._stale
    assert core._earliest(set()) is not a
    net.run_until_idle([c], limit_ns=1_000_000)
    assert core._earliest(set()) is None  # nothing in flight, nothing pending


@pytest.mark.parametrize("seed", range(6))
def test_the_timer_heap_keeps_each_connection_once_in_deadline_order(seed: int) -> None:
    """The core's timer heap (_schedule, compiled on the native build): every connection
    with a deadline in it once, at the place it records; the first has the earliest
    deadline, equal ones the oldest connection first; deadlines that are ints (C keys),
    floats and ints too large for a C key (compared as objects), moved, removed and
    re-added in any order."""
    import random

    from nic_emu import core as core_module
    from nic_emu.connection.timers import INEXACT, time_key

    rng = random.Random(seed)
    net = sim.SimNetwork(load("small"), EventList(), seed=7)
    conns = [net.connect("nic0", peer)[0] for peer in ("nic1", "nic4", "nic6") for _ in range(4)]
    heap: list = []
    for conn in conns:
        conn.sched_deadline, conn.sched_key, conn.heap_pos = None, time_key(None), -1
    choices = [
        lambda: rng.randrange(40),
        lambda: rng.randrange(40) + 0.5,
        lambda: float(rng.randrange(40)),  # equal to an int deadline
        lambda: (1 << 61) + rng.randrange(3),  # no C key
        lambda: None,
    ]
    for _ in range(2000):
        conn = rng.choice(conns)
        core_module._schedule(heap, conn, rng.choice(choices)())
        scheduled = [c for c in conns if c.sched_deadline is not None]
        assert sorted(heap, key=id) == sorted(scheduled, key=id)
        for pos, c in enumerate(heap):
            assert c.heap_pos == pos
            assert c.sched_key == time_key(c.sched_deadline)
            assert (c.sched_key == INEXACT) == (
                type(c.sched_deadline) is not int or c.sched_deadline >= 1 << 60
            )
        for c in conns:
            if c.sched_deadline is None:
                assert c.heap_pos == -1
        if heap:
            first = min(scheduled, key=lambda c: (c.sched_deadline, c.created_seq))
            assert heap[0] is first
            for pos in range(1, len(heap)):
                parent, child = heap[(pos - 1) >> 1], heap[pos]
                assert (parent.sched_deadline, parent.created_seq) < (
                    child.sched_deadline,
                    child.created_seq,
                )
    while heap:  # emptied from the top: in deadline order
        first = heap[0]
        assert all(
            (first.sched_deadline, first.created_seq) < (c.sched_deadline, c.created_seq)
            for c in heap[1:]
        )
        core_module._schedule(heap, first, None)
        assert first.heap_pos == -1 and first not in heap
