"""Two NIC cores wired back to back, port to port, over virtual time (no switches).

The cheapest driver there is: a frame sent by one core on plane ``p`` reaches the other
core on plane ``p`` after ``delay_ns``. Used by the throughput benchmark (to measure
the cores, not the fabric) and by tests that need a second, independent driver. Driven by
the event list it is given (:class:`vfabric.eventlist.EventList`;
:mod:`nic_emu.testing.scheduler`).
"""

from __future__ import annotations

from nic_emu.config import NicConfig, TransportMode
from nic_emu.connection import Connection, QpState
from nic_emu.connection.host import AppEvent
from nic_emu.core import NicCore, service
from nic_emu.event_log import EventLog
from nic_emu.testing.scheduler import Scheduler
from topologies import AddressPlan


class LoopbackPair:
    def __init__(
        self,
        plan: AddressPlan,
        a: str,
        b: str,
        events: Scheduler,
        config: NicConfig | None = None,
        *,
        delay_ns: int = 2_000,
        seed: int = 0,
    ) -> None:
        self.events = events
        self.log = EventLog()
        self.delay_ns = delay_ns
        self.cores = {
            name: NicCore(name, plan, config, seed=seed + i, log=self.log)
            for i, name in enumerate((a, b))
        }
        self.a, self.b = self.cores[a], self.cores[b]
        self.peer = {self.a.name: self.b, self.b.name: self.a}
        self.app_events: dict[str, list[AppEvent]] = {a: [], b: []}
        self._timer_at: dict[str, int | None] = {a: None, b: None}
        self._events_seen = 0
        self.frames = 0

    def connect(self, mode: TransportMode | None = None) -> tuple[Connection, Connection]:
        qa, qb = self.a.allocate_qpn(), self.b.allocate_qpn()
        ca = self.a.create_connection(self.b.name, qpn=qa, peer_qpn=qb, mode=mode)
        cb = self.b.create_connection(self.a.name, qpn=qb, peer_qpn=qa, mode=mode)
        return ca, cb

    def _deliver(self, delivery: tuple[NicCore, list[tuple[int, bytes]]]) -> None:
        """Frames sent together arrive together and are serviced once (as a NIC driver
        would batch a receive ring)."""
        dst, frames = delivery
        now = self.events.now
        receive = dst.receive_frame
        for plane, frame in frames:
            receive(frame, plane, now)
        self.frames += len(frames)
        self.service(dst)

    def service(self, core: NicCore) -> None:
        now = self.events.now
        batch: list[tuple[int, bytes]] = []
        deadline, events = service(core, now, lambda plane, frame: batch.append((plane, frame)))
        if batch:
            self.events.push(now + self.delay_ns, self._deliver, (self.peer[core.name], batch))
        if events:
            self.app_events[core.name].extend(events)
            self._events_seen += 1
        if deadline is not None and deadline != self._timer_at[core.name]:
            self._timer_at[core.name] = deadline
            self.events.push(max(deadline, now), self._fire, (core, deadline))

    def _fire(self, timer: tuple[NicCore, int]) -> None:
        core, deadline = timer
        if self._timer_at[core.name] != deadline:
            return
        self._timer_at[core.name] = None
        core.handle_timer(self.events.now)
        self.service(core)

    def run_until_idle(self, conns: list[Connection], *, limit_ns: int) -> bool:
        seen = [-1, 0]  # events count at the last check, and its answer

        def done() -> bool:
            # Only an application event (completion or failure) can make this true.
            if self._events_seen != seen[0]:
                seen[0] = self._events_seen
                seen[1] = all(c.idle or c.state is QpState.ERROR for c in conns)
            return bool(seen[1])

        self.events.run(self.events.now + limit_ns, done, check_every=1)
        return done()
