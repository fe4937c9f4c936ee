"""The in-memory driver: many NIC cores on the model fabric (a test double), over virtual time.

:class:`SimNetwork` is the reference driver of :class:`nic_emu.core.NicCore` for fast
transport unit tests: it does exactly what the driver contract
(:func:`nic_emu.core.service`) describes, with the Python switch model of
:mod:`nic_emu.testing.model_fabric` (:class:`~nic_emu.testing.model_fabric.ModelFabric`,
a test double) as the wire and the event list it is given
(:class:`vfabric.eventlist.EventList`, the project's one event loop;
:mod:`nic_emu.testing.scheduler`) as the clock. Runs are deterministic for a given
seed. Measurements use :mod:`vfabric` instead, which runs the
real switch program (docs/virtual-fabric.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from nic_emu.config import NicConfig, TransportMode
from nic_emu.connection import Connection, QpState
from nic_emu.connection.host import AppEvent, ConnectionFailed, WriteCompleted, WriteReceived
from nic_emu.core import NicCore, service
from nic_emu.event_log import EventLog
from nic_emu.exceptions import FabricError
from nic_emu.memory import MemoryRegion
from nic_emu.testing.model_fabric import FabricConfig, ModelFabric
from nic_emu.testing.scheduler import Scheduler, never
from topologies import AddressPlan, Topology


class SimNetwork:
    """NIC cores attached to the model fabric (test double) built from ``topology``, on
    ``events`` (a :class:`vfabric.eventlist.EventList`).

    ``nics``: which NICs get a core (default: all of the topology). ``config``: one
    :class:`NicConfig` for all, or a mapping NIC name -> config.
    """

    def __init__(
        self,
        topology: Topology,
        events: Scheduler,
        *,
        nics: Iterable[str] | None = None,
        config: NicConfig | Mapping[str, NicConfig] | None = None,
        seed: int = 0,
        fabric_config: FabricConfig | None = None,
    ) -> None:
        self.topology = topology
        self.plan = AddressPlan(topology)
        self.events = events
        self.log = EventLog()
        self.fabric = ModelFabric(events, topology, self.plan, seed=seed, config=fabric_config)
        names = [n.name for n in topology.nics] if nics is None else list(nics)
        self.cores: dict[str, NicCore] = {}
        self.app_events: dict[str, list[AppEvent]] = {}
        self._timer_at: dict[str, int | None] = {}
        self._events_seen = 0
        for i, name in enumerate(names):
            cfg = config.get(name) if isinstance(config, Mapping) else config
            core = NicCore(name, self.plan, cfg, seed=seed * 1000 + i, log=self.log)
            if core.name in self.cores:
                raise FabricError(f"NIC {core.name} listed twice")
            self.cores[core.name] = core
            self.app_events[core.name] = []
            self._timer_at[core.name] = None
            self.fabric.attach(core.name, self._frame_handler(core), self._port_handler(core))

    # ------------------------------------------------------------------ driver plumbing

    def _frame_handler(self, core: NicCore) -> Callable[[int, bytes], None]:
        def on_frame(plane: int, frame: bytes) -> None:
            core.receive_frame(frame, plane, self.events.now)
            self.service(core.name)

        return on_frame

    def _port_handler(self, core: NicCore) -> Callable[[int, bool], None]:
        def on_port(plane: int, up: bool) -> None:
            core.set_port_state(plane, up, self.events.now)
            self.service(core.name)

        return on_port

    def service(self, nic: str) -> None:
        """Flush a core's frames onto the fabric and (re)arm its timer."""
        core = self.cores[nic]
        now = self.events.now
        transmit = self.fabric.transmit
        deadline, events = service(core, now, lambda plane, frame: transmit(nic, plane, frame))
        if events:
            self.app_events[nic].extend(events)
            self._events_seen += 1
        if deadline is not None and deadline != self._timer_at[nic]:
            self._timer_at[nic] = deadline
            self.events.push(max(deadline, now), self._fire_timer, (nic, deadline))

    def _fire_timer(self, timer: tuple[str, int]) -> None:
        nic, deadline = timer
        if self._timer_at[nic] != deadline:
            return  # superseded by a later service()
        self._timer_at[nic] = None
        self.cores[nic].handle_timer(self.events.now)
        self.service(nic)

    # ------------------------------------------------------------------ application helpers

    @property
    def now(self) -> int:
        return self.events.now

    def connect(
        self,
        a: str,
        b: str,
        *,
        mode: TransportMode | None = None,
        a_psn: int = 0,
        b_psn: int = 0,
    ) -> tuple[Connection, Connection]:
        """A queue pair between NICs ``a`` and ``b`` (both ends created at once)."""
        core_a, core_b = self.cores[a], self.cores[b]
        qpn_a, qpn_b = core_a.allocate_qpn(), core_b.allocate_qpn()
        now = self.events.now
        conn_a = core_a.create_connection(
            b, qpn=qpn_a, peer_qpn=qpn_b, mode=mode, send_psn=a_psn, recv_psn=b_psn, now=now
        )
        conn_b = core_b.create_connection(
            a, qpn=qpn_b, peer_qpn=qpn_a, mode=mode, send_psn=b_psn, recv_psn=a_psn, now=now
        )
        return conn_a, conn_b

    def register_memory(self, nic: str, length: int) -> MemoryRegion:
        return self.cores[nic].register_memory(length)

    def write(self, conn: Connection, data: bytes, region: MemoryRegion, offset: int = 0) -> int:
        """Post a WRITE of ``data`` into ``region`` (on the peer) at ``offset``."""
        wr_id = conn.post_write(data, region.va + offset, region.rkey, self.events.now)
        self.service(conn.nic.name)
        return wr_id

    def run(self, until_ns: int | None = None, *, stop: Callable[[], bool] | None = None) -> None:
        self.events.run(until_ns, never if stop is None else stop, check_every=1)

    def run_until_idle(self, conns: Iterable[Connection], *, limit_ns: int) -> bool:
        """Run until every connection in ``conns`` has no unacknowledged WRITE (or failed);
        returns False if ``limit_ns`` of virtual time passed first."""
        watched = list(conns)
        seen = [-1, 0]  # events count at the last check, and its answer

        def done() -> bool:
            # Only an application event (completion or failure) can make this true.
            if self._events_seen != seen[0]:
                seen[0] = self._events_seen
                seen[1] = all(c.idle or c.state is QpState.ERROR for c in watched)
            return bool(seen[1])

        self.events.run(self.events.now + limit_ns, done, check_every=1)
        return done()

    def events_of(self, nic: str, kind: type | None = None) -> list[AppEvent]:
        found = self.app_events[nic]
        return [e for e in found if kind is None or isinstance(e, kind)]

    def completed(self, nic: str) -> list[WriteCompleted]:
        return [e for e in self.app_events[nic] if isinstance(e, WriteCompleted)]

    def received(self, nic: str) -> list[WriteReceived]:
        return [e for e in self.app_events[nic] if isinstance(e, WriteReceived)]

    def failures(self, nic: str) -> list[ConnectionFailed]:
        return [e for e in self.app_events[nic] if isinstance(e, ConnectionFailed)]
