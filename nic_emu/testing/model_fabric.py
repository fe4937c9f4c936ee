"""TEST DOUBLE: a Python model of the switch, for fast transport unit tests only.

The switch's behaviour has one source of truth, ``p4src/mrc_switch.p4``; the fabric that
runs it with the NICs in virtual time is :mod:`vfabric` (docs/virtual-fabric.md), and
that is what measurements and the demo use. This model exists because ``nic_emu`` may not
import ``p4emu`` (docs/architecture.md) and its unit tests need a fast fabric that needs
nothing but the event list it is given (:mod:`nic_emu.testing.scheduler`). ``tests/vfabric/test_differential.py`` checks that it agrees with the
P4 program on the same scenarios, within the tolerances stated there.

An in-memory multi-plane two-tier fabric over virtual time, with fault injection.

Built from a ``topologies.Topology``: every link becomes two one-way channels with the
link's rate, delay and queue depth; every switch forwards by the uN rule on the outer
destination address (match block + own uSID, shift the uSIDs left by 16 bits, look the
new active uSID up in ``AddressPlan.routes_for``), exactly as the P4 switch does.

Queue model (per channel, per direction):

- data packets wait in a FIFO served at the link rate. The thresholds follow the P4
  switch (docs/switch-queues.md): a trimmable packet that finds ``trim_frac`` of the
  link's ``queue_packets`` queued (48 of 64) is trimmed (``mrc_wire.trim_frame``: DSCP
  TRIMMED, or TRIMMED_LASTHOP on the last hop) and sent at high priority; any other
  packet is dropped once ``queue_limit_frac`` of the queue is used (60 of 64);
- ECN: RED-style marking at enqueue, probability rising linearly from 0 at
  ``ecn_min_frac`` to 1 at ``ecn_max_frac`` *of the trim threshold* (10 and 38 packets;
  uet-htsim marks between 0.2 and 0.8 BDP, sources §8.2); never on
  the last hop to a NIC (a mark then means path imbalance, not incast);
- high-priority traffic (DSCP CONTROL, TRIMMED*: SACK, NACK, trimmed headers) bypasses
  the data FIFO: it leaves after its own serialisation time (a simplification of a
  strict-priority queue that ignores the data packet already on the wire);
- a NIC's own egress port has an unbounded queue (host memory) and never marks or trims.

Faults (deterministic from the fabric's seed): dead links and switches, dead planes,
flapping links, per-link random drop / duplication / reordering, per-EV drop.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from mrc_wire import mark_ce, trim_frame
from mrc_wire.constants import (
    ETH_LEN,
    TRIMMABLE_DSCPS,
    Dscp,
)
from mrc_wire.exceptions import MrcWireError
from mrc_wire.frames import frame_ev
from mrc_wire.queues import (
    ECN_MAX_FRACTION,
    ECN_MIN_FRACTION,
    QUEUE_LIMIT_FRACTION,
    TRIM_FRACTION,
)
from nic_emu.exceptions import FabricError
from nic_emu.testing.scheduler import Scheduler
from topologies import AddressPlan, Link, LinkKind, Topology

_DA_START = ETH_LEN + 24  # outer IPv6 destination address
_DA_END = _DA_START + 16
_HOP_LIMIT = ETH_LEN + 7  # outer hop limit
_MIN_FORWARD_LEN = _DA_END
_BLOCK_MASK = ((1 << 32) - 1) << 96
_USIDS_MASK = (1 << 96) - 1
_PRIORITY_DSCPS = frozenset({int(Dscp.CONTROL), int(Dscp.TRIMMED), int(Dscp.TRIMMED_LASTHOP)})
_TRIMMABLE = frozenset(int(d) for d in TRIMMABLE_DSCPS)

FrameSink = Callable[[bytes], None]


@dataclass(frozen=True, slots=True)
class FabricConfig:
    """Queue thresholds as fractions (defaults: the P4 switch's, ``mrc_wire.queues``)."""

    trim_frac: float = TRIM_FRACTION  # trim a trimmable packet at this fraction of queue_packets
    queue_limit_frac: float = QUEUE_LIMIT_FRACTION  # drop any other data packet at this fraction
    ecn_min_frac: float = ECN_MIN_FRACTION  # ECN marking starts above this of the trim depth
    ecn_max_frac: float = ECN_MAX_FRACTION  # ... and marks every packet above this fraction
    trimming: bool = True  # trim instead of drop at the trim depth
    ecn: bool = True

    def __post_init__(self) -> None:
        if not 0.0 <= self.ecn_min_frac < self.ecn_max_frac <= 1.0:
            raise FabricError(
                "FabricConfig needs 0 <= ecn_min_frac < ecn_max_frac <= 1, got "
                f"{self.ecn_min_frac} and {self.ecn_max_frac}"
            )
        if not 0.0 < self.trim_frac <= self.queue_limit_frac <= 1.0:
            raise FabricError(
                "FabricConfig needs 0 < trim_frac <= queue_limit_frac <= 1, got "
                f"{self.trim_frac} and {self.queue_limit_frac}"
            )


@dataclass(slots=True)
class LinkFault:
    """Faults of one channel (one direction of a link). Probabilities are per packet."""

    drop_prob: float = 0.0
    dup_prob: float = 0.0
    reorder_prob: float = 0.0  # a packet is delayed by up to reorder_delay_ns extra
    reorder_delay_ns: int = 0
    ev_drop: dict[int, float] = field(default_factory=dict)  # per-EV drop probability

    def __post_init__(self) -> None:
        for name in ("drop_prob", "dup_prob", "reorder_prob"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise FabricError(f"LinkFault.{name} must be a probability, got {value!r}")
        for ev, prob in self.ev_drop.items():
            if not 0.0 <= prob <= 1.0:
                raise FabricError(f"LinkFault.ev_drop[{ev:#x}] must be a probability, got {prob}")
        if self.reorder_delay_ns < 0:
            raise FabricError(
                f"LinkFault.reorder_delay_ns must be >= 0, got {self.reorder_delay_ns}"
            )

    @property
    def empty(self) -> bool:
        return not (self.drop_prob or self.dup_prob or self.reorder_prob or self.ev_drop)


class Channel:
    """One direction of a link: queue, serialisation, delay, faults, counters."""

    __slots__ = (
        "backlog",
        "busy_until",
        "delay_ns",
        "drops_down",
        "drops_fault",
        "drops_full",
        "dups",
        "ecn",
        "ecn_kmax",
        "ecn_kmin",
        "ecn_marks",
        "fabric",
        "fault",
        "kind",
        "last_hop",
        "limit",
        "name",
        "ns_per_byte",
        "plane",
        "sink",
        "trim",
        "trim_depth",
        "trims",
        "tx_bytes",
        "tx_packets",
        "up",
    )

    def __init__(
        self,
        fabric: ModelFabric,
        name: str,
        plane: int,
        kind: str,
        rate_gbps: float,
        delay_us: float,
        queue_packets: int | None,
        *,
        last_hop: bool,
        marks_and_trims: bool,
    ) -> None:
        cfg = fabric.config
        self.fabric = fabric
        self.name = name
        self.plane = plane
        self.kind = kind
        self.ns_per_byte = 8.0 / rate_gbps
        self.delay_ns = round(delay_us * 1000)
        unbounded = queue_packets is None
        self.limit = 1 << 62 if unbounded else max(1, round(cfg.queue_limit_frac * queue_packets))
        self.trim_depth = 1 << 62 if unbounded else max(1, round(cfg.trim_frac * queue_packets))
        self.last_hop = last_hop
        self.ecn = marks_and_trims and cfg.ecn and not last_hop
        self.trim = marks_and_trims and cfg.trimming
        depth = 0 if unbounded else self.trim_depth
        self.ecn_kmin = round(cfg.ecn_min_frac * depth)
        self.ecn_kmax = max(self.ecn_kmin + 1, round(cfg.ecn_max_frac * depth))
        self.sink: FrameSink = _discard
        self.up = True
        self.fault: LinkFault | None = None
        self.busy_until = 0
        self.backlog: deque[int] = deque()
        self.tx_packets = 0
        self.tx_bytes = 0
        self.drops_full = 0
        self.drops_down = 0
        self.drops_fault = 0
        self.trims = 0
        self.ecn_marks = 0
        self.dups = 0

    def send(self, frame: bytes) -> None:
        if not self.up:
            self.drops_down += 1
            return
        fabric = self.fabric
        extra = 0
        fault = self.fault
        if fault is not None:
            rng = fabric.rng
            if fault.drop_prob and rng.random() < fault.drop_prob:
                self.drops_fault += 1
                return
            if fault.ev_drop:
                prob = fault.ev_drop.get(frame_ev(frame))  # type: ignore[arg-type]
                if prob and rng.random() < prob:
                    self.drops_fault += 1
                    return
            if fault.reorder_prob and rng.random() < fault.reorder_prob:
                extra = rng.randint(0, fault.reorder_delay_ns)
            if fault.dup_prob and rng.random() < fault.dup_prob:
                self.dups += 1
                self._enqueue(frame, 0)
        self._enqueue(frame, extra)

    def _enqueue(self, frame: bytes, extra_ns: int) -> None:
        fabric = self.fabric
        now = fabric.events.now
        size = len(frame)
        dscp = ((frame[ETH_LEN] & 0x0F) << 2) | (frame[ETH_LEN + 1] >> 6) if size > 16 else 0
        ser = int(size * self.ns_per_byte) or 1
        if dscp in _PRIORITY_DSCPS:
            depart = now + ser
        else:
            backlog = self.backlog
            while backlog and backlog[0] <= now:
                backlog.popleft()
            queued = len(backlog)
            trimmable = self.trim and dscp in _TRIMMABLE
            if trimmable and queued >= self.trim_depth:
                try:
                    frame = trim_frame(frame, last_hop=self.last_hop)
                except MrcWireError:
                    self.drops_full += 1
                    return
                self.trims += 1
                depart = now + (int(len(frame) * self.ns_per_byte) or 1)
            elif queued >= self.limit:
                self.drops_full += 1
                return
            else:
                # ECT(0) or ECT(1) only: CE is already marked, Not-ECT cannot be.
                if self.ecn and queued > self.ecn_kmin and 0 < (frame[ETH_LEN + 1] >> 4) & 3 < 3:
                    p = (queued - self.ecn_kmin) / (self.ecn_kmax - self.ecn_kmin)
                    if p >= 1.0 or fabric.rng.random() < p:
                        frame = mark_ce(frame)
                        self.ecn_marks += 1
                start = self.busy_until if self.busy_until > now else now
                depart = start + ser
                self.busy_until = depart
                backlog.append(depart)
        self.tx_packets += 1
        self.tx_bytes += size
        fabric.events.push(depart + self.delay_ns + extra_ns, self.sink, frame)

    def counters(self) -> dict[str, int]:
        return {
            "tx_packets": self.tx_packets,
            "tx_bytes": self.tx_bytes,
            "drops_full": self.drops_full,
            "drops_down": self.drops_down,
            "drops_fault": self.drops_fault,
            "trims": self.trims,
            "ecn_marks": self.ecn_marks,
            "dups": self.dups,
        }


def _discard(frame: bytes) -> None:
    return None


class ModelSwitch:
    """A uN forwarder: one node uSID, a static uSID -> egress channel table (the Python
    model of the P4 switch's forwarding; test double)."""

    __slots__ = ("drops", "forwarded", "locator", "name", "routes", "up")

    def __init__(self, name: str, locator: int) -> None:
        self.name = name
        self.locator = locator
        self.routes: dict[int, Channel] = {}
        self.up = True
        self.forwarded = 0
        self.drops: dict[str, int] = {}

    def receive(self, frame: bytes) -> None:
        if not self.up:
            self._drop("switch_down")
            return
        if len(frame) < _MIN_FORWARD_LEN:
            self._drop("too_short")
            return
        da = int.from_bytes(frame[_DA_START:_DA_END], "big")
        if da >> 80 != self.locator:
            self._drop("not_my_usid")
            return
        shifted = (da & _BLOCK_MASK) | ((da << 16) & _USIDS_MASK)
        channel = self.routes.get((shifted >> 80) & 0xFFFF)
        if channel is None:
            self._drop("no_route")
            return
        hop_limit = frame[_HOP_LIMIT]
        if hop_limit <= 1:
            self._drop("hop_limit")
            return
        self.forwarded += 1
        channel.send(
            frame[:_HOP_LIMIT]
            + bytes((hop_limit - 1,))
            + frame[_HOP_LIMIT + 1 : _DA_START]
            + shifted.to_bytes(16, "big")
            + frame[_DA_END:]
        )

    def _drop(self, reason: str) -> None:
        self.drops[reason] = self.drops.get(reason, 0) + 1


@dataclass(slots=True)
class _NicAttachment:
    """An attached NIC's callbacks: ``on_frame(plane, frame)`` for arrivals, ``on_port(plane,
    up)`` for its port going up or down."""

    on_frame: Callable[[int, bytes], None]
    on_port: Callable[[int, bool], None]


class ModelFabric:
    """The model switches and channels of a topology, driven by ``events`` (the project's
    event list, :class:`~nic_emu.testing.scheduler.Scheduler`; test double: see the module
    docstring)."""

    def __init__(
        self,
        events: Scheduler,
        topology: Topology,
        plan: AddressPlan | None = None,
        *,
        seed: int = 0,
        config: FabricConfig | None = None,
    ) -> None:
        self.events = events
        self.topology = topology
        self.plan = plan if plan is not None else AddressPlan(topology)
        self.config = config if config is not None else FabricConfig()
        self.rng = random.Random(seed)
        self.switches: dict[str, ModelSwitch] = {}
        self.channels: dict[tuple[str, str], Channel] = {}
        self._out_port: dict[tuple[str, int], Channel] = {}
        self._nic_tx: dict[tuple[str, int], Channel] = {}
        self._nics: dict[str, _NicAttachment] = {}
        for sw in topology.switches:
            self.switches[sw.name] = ModelSwitch(sw.name, self.plan.locator(sw.name))
        for link in topology.links():
            self._add_link(link)
        for sw in topology.switches:
            switch = self.switches[sw.name]
            for route in self.plan.routes_for(sw.name):
                switch.routes[route.usid] = self._out_port[(sw.name, route.port)]

    def _add_link(self, link: Link) -> None:
        a, b = link.a, link.b
        access = link.kind is LinkKind.ACCESS
        up = Channel(
            self,
            f"{a.node}->{b.node}",
            link.plane,
            link.kind.value,
            link.rate_gbps,
            link.delay_us,
            None if access else link.queue_packets,
            last_hop=False,
            marks_and_trims=not access,
        )
        down = Channel(
            self,
            f"{b.node}->{a.node}",
            link.plane,
            link.kind.value,
            link.rate_gbps,
            link.delay_us,
            link.queue_packets,
            last_hop=access,
            marks_and_trims=True,
        )
        up.sink = self.switches[b.node].receive
        if access:
            down.sink = self._nic_sink(a.node, link.plane)
            self._nic_tx[(a.node, link.plane)] = up
        else:
            down.sink = self.switches[a.node].receive
            self._out_port[(a.node, a.port)] = up
        self._out_port[(b.node, b.port)] = down
        self.channels[(a.node, b.node)] = up
        self.channels[(b.node, a.node)] = down

    def _nic_sink(self, nic: str, plane: int) -> FrameSink:
        def deliver(frame: bytes) -> None:
            attached = self._nics.get(nic)
            if attached is not None:
                attached.on_frame(plane, frame)

        return deliver

    # ------------------------------------------------------------------ NICs

    def attach(
        self,
        nic: str,
        on_frame: Callable[[int, bytes], None],
        on_port: Callable[[int, bool], None],
    ) -> None:
        """Connect a NIC: ``on_frame(plane, frame)`` for arrivals, ``on_port(plane, up)``
        when one of its links changes state."""
        name = self.topology.nic(nic).name
        self._nics[name] = _NicAttachment(on_frame, on_port)

    def transmit(self, nic: str, plane: int, frame: bytes) -> None:
        """A NIC puts ``frame`` on its port ``plane``."""
        channel = self._nic_tx.get((nic, plane))
        if channel is None:
            raise FabricError(f"{nic} has no port on plane {plane}")
        channel.send(frame)

    # ------------------------------------------------------------------ faults

    def channel(self, src: str, dst: str) -> Channel:
        found = self.channels.get((src, dst))
        if found is None:
            raise FabricError(f"no link from {src} to {dst} in {self.topology.name}")
        return found

    def set_link_state(self, a: str, b: str, up: bool) -> None:
        """Take the link a -- b down or up (both directions). A NIC on it is told at once."""
        ab, ba = self.channel(a, b), self.channel(b, a)
        if ab.up == up:
            return
        ab.up = ba.up = up
        if ab.kind == LinkKind.ACCESS.value:
            attached = self._nics.get(self.topology.link(a, b).a.node)
            if attached is not None:
                attached.on_port(ab.plane, up)

    def set_switch_state(self, name: str, up: bool) -> None:
        """Kill or revive a switch (its links stay up: packets into it vanish)."""
        switch = self.switches.get(name)
        if switch is None:
            raise FabricError(f"no switch {name!r} in {self.topology.name}")
        switch.up = up

    def set_fault(self, a: str, b: str, fault: LinkFault | None, *, both: bool = True) -> None:
        """Faults on the link a -> b (and b -> a when ``both``); None clears them."""
        value = None if fault is None or fault.empty else fault
        self.channel(a, b).fault = value
        if both:
            self.channel(b, a).fault = value

    def set_fault_everywhere(self, fault: LinkFault | None, *, access: bool = True) -> None:
        """The same fault on every channel (fabric links, and NIC links when ``access``)."""
        value = None if fault is None or fault.empty else fault
        for ch in self.channels.values():
            if access or ch.kind != LinkKind.ACCESS.value:
                ch.fault = value

    def drop_ev(self, ev: int, prob: float) -> None:
        """Drop ``prob`` of the packets carrying ``ev`` (either direction), at the first hop
        out of each NIC."""
        if not 0.0 <= prob <= 1.0:
            raise FabricError(f"drop probability must be in [0, 1], got {prob}")
        for channel in self._nic_tx.values():
            fault = channel.fault if channel.fault is not None else LinkFault()
            fault.ev_drop[ev] = prob
            channel.fault = fault

    def fail_plane(self, plane: int, *, ports: bool = False) -> None:
        """Every T0-T1 link of ``plane`` down; with ``ports`` the NIC links too."""
        self.topology.plane(plane)
        for link in self.topology.links():
            if link.plane != plane:
                continue
            if link.kind is LinkKind.FABRIC or ports:
                self.set_link_state(link.a.node, link.b.node, False)

    def restore_plane(self, plane: int) -> None:
        for link in self.topology.links():
            if link.plane == plane:
                self.set_link_state(link.a.node, link.b.node, True)

    def flap(self, a: str, b: str, *, start_ns: int, down_ns: int, up_ns: int, cycles: int) -> None:
        """Schedule ``cycles`` of (down for down_ns, up for up_ns) from ``start_ns``."""
        if down_ns <= 0 or up_ns <= 0 or cycles <= 0:
            raise FabricError("flap needs positive down_ns, up_ns and cycles")
        if start_ns < self.events.now:
            raise FabricError(
                f"flap cannot start at {start_ns} ns: virtual time is already {self.events.now} ns"
            )
        self.channel(a, b)
        t = start_ns
        for _ in range(cycles):
            self.events.at(t, lambda _: self.set_link_state(a, b, False))
            self.events.at(t + down_ns, lambda _: self.set_link_state(a, b, True))
            t += down_ns + up_ns

    # ------------------------------------------------------------------ counters

    def counters(self) -> dict[str, object]:
        totals: dict[str, int] = {}
        for ch in self.channels.values():
            for key, value in ch.counters().items():
                totals[key] = totals.get(key, 0) + value
        switch_drops: dict[str, int] = {}
        for sw in self.switches.values():
            for key, value in sw.drops.items():
                switch_drops[key] = switch_drops.get(key, 0) + value
        return {"channels": totals, "switch_drops": switch_drops}
