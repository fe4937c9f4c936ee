"""Priority flow control (IEEE 802.1Qbb, sources §11.1) in the virtual fabric.

The P4 program is not involved: PFC is the switches' buffer accounting and the links'
pause frames (docs/virtual-fabric.md, "Priority flow control").

- **Accounting.** Each switch counts, per ingress port and lossless priority, the bytes
  of the packets that came in on that port and are still in its traffic manager (any
  egress queue). p4emu asks before every enqueue (:attr:`p4emu.switch.Switch.
  admission_callback`) and says when a packet leaves (``release_callback``).
- **XOFF / XON.** When the count reaches ``xoff`` bytes the switch sends a pause frame
  for that priority back on that port; when it falls to ``xon`` it sends a resume
  (a pause of quanta 0). Between the two, the sender keeps pausing: real switches
  refresh the pause before its quanta run out, so "paused until resumed" is the same.
- **Headroom.** Above ``xoff`` the port may take ``headroom`` more bytes: what is
  already on the wire or leaves the upstream before the pause arrives. A packet that
  would exceed ``xoff + headroom`` is dropped at ingress (``ingress_buffer``): with the
  headroom 802.1Qbb's rule gives (:func:`default_headroom`) that never happens.
- **Pause frames** cross the link in the reverse direction: they leave after the frame
  being serialised there (a pause frame does not pre-empt one), take 64 bytes of link
  time and the link's delay. A switch that receives one stops the egress queue of that
  priority on that port (:meth:`p4emu.switch.Switch.set_paused`); a NIC stops sending
  frames of that priority on that port and holds them in its transmit queue (host
  memory) until resumed. Head-of-line blocking and congestion spreading follow.
- **Priority of a frame**, at a NIC, is the queue the P4 program would give it: control
  packets and trimmed headers the control queue, everything else the data queue
  (``DATA_PRIORITY``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mrc_wire.constants import ETH_LEN, Dscp
from mrc_wire.frames import frame_dscp
from mrc_wire.queues import DATA_PRIORITY, DEFAULT_CONTROL_PRIORITY
from vfabric.exceptions import FabricSetupError
from vfabric.wires import NS_BITS, Wire

if TYPE_CHECKING:
    from vfabric.eventlist import EventList

CONTROL_QUEUE_DSCPS = frozenset({int(Dscp.CONTROL), int(Dscp.TRIMMED), int(Dscp.TRIMMED_LASTHOP)})
PAUSE_FRAME_BYTES = 64  # an 802.3 MAC control frame (PFC), minimum frame size
PRIORITIES = 8  # 802.1Qbb: one pause timer per priority (3-bit PCP)
DEFAULT_XOFF_BYTES = 20 * 1024  # docs/virtual-fabric.md: sized for the 64-packet queues
DEFAULT_XON_BYTES = 10 * 1024


@dataclass(frozen=True, slots=True)
class PfcConfig:
    """Lossless ``priorities`` and their thresholds, per ingress port and priority, in
    bytes. ``headroom`` None: each port's from its link (:func:`default_headroom`)."""

    priorities: tuple[int, ...] = (DATA_PRIORITY,)
    xoff: int = DEFAULT_XOFF_BYTES
    xon: int = DEFAULT_XON_BYTES
    headroom: int | None = None

    def __post_init__(self) -> None:
        prios = self.priorities
        if (
            not isinstance(prios, tuple)
            or not prios
            or any(isinstance(p, bool) or not isinstance(p, int) for p in prios)
        ):
            raise FabricSetupError(
                f"pfc priorities must be a non-empty list of integers, got {prios!r}"
            )
        bad = [p for p in prios if not 0 <= p < PRIORITIES]
        if bad:
            raise FabricSetupError(f"pfc priority {bad[0]} is outside 0..{PRIORITIES - 1}")
        if len(set(prios)) != len(prios):
            raise FabricSetupError(f"pfc priorities repeat a priority: {list(prios)}")
        for name in ("xoff", "xon"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise FabricSetupError(f"pfc {name} must be bytes >= 0, got {value!r}")
        if self.xoff <= 0:
            raise FabricSetupError(f"pfc xoff must be > 0 bytes, got {self.xoff}")
        if self.xon >= self.xoff:
            raise FabricSetupError(
                f"pfc xon ({self.xon} bytes) must be below xoff ({self.xoff} bytes): "
                "a port would resume as soon as it paused"
            )
        h = self.headroom
        if h is not None and (isinstance(h, bool) or not isinstance(h, int) or h <= 0):
            raise FabricSetupError(f"pfc headroom must be bytes > 0, got {h!r}")


def default_headroom(rate_bps: float, delay_ns: int, max_frame: int) -> int:
    """802.1Qbb headroom of one port and priority: what may still arrive after the
    pause is decided: the frame the upstream has started, the pause frame's wait behind
    the frame being sent back and its own time, and a round trip of the link's delay at
    its rate (sources §11.1)."""
    wire_bytes = int(2 * delay_ns * rate_bps / NS_BITS)
    return wire_bytes + 2 * max_frame + PAUSE_FRAME_BYTES


def frame_priority(frame: bytes) -> int:
    """The traffic-manager queue the P4 program gives ``frame`` (docs/switch-queues.md
    section 4): CONTROL and trimmed headers the control queue, everything else data."""
    if len(frame) > ETH_LEN + 1 and frame_dscp(frame) in CONTROL_QUEUE_DSCPS:
        return DEFAULT_CONTROL_PRIORITY
    return DATA_PRIORITY


class PortCounters:
    """PFC counters of one link direction ``src -> dst`` (its wire's name)."""

    __slots__ = ("drops", "paused_ns", "paused_since", "pauses_received", "pauses_sent")

    def __init__(self) -> None:
        self.pauses_sent = 0  # XOFF frames ``src`` sent on this wire (about its ingress)
        self.pauses_received = 0  # XOFF frames that stopped ``src``'s egress onto it
        self.paused_ns = 0  # time ``src``'s egress onto this wire was paused
        self.paused_since: int | None = None
        self.drops = 0  # frames from this wire dropped at dst's ingress (headroom full)

    def as_dict(self, now: int) -> dict[str, int]:
        paused = self.paused_ns
        if self.paused_since is not None:
            paused += now - self.paused_since
        return {
            "pauses_sent": self.pauses_sent,
            "pauses_received": self.pauses_received,
            "paused_ns": paused,
            "headroom_drops": self.drops,
        }


PauseSink = Callable[[int, int, bool], None]  # (port, priority, paused)


class SwitchPfc:
    """The PFC of one switch: buffer accounting per ingress port and lossless priority,
    pause frames back on the ingress port's link."""

    __slots__ = (
        "_lossless",
        "config",
        "counters_in",
        "counters_out",
        "events",
        "headroom",
        "history",
        "name",
        "occupancy",
        "out",
        "pausing",
        "peak",
        "sinks",
    )

    def __init__(
        self,
        events: EventList,
        name: str,
        config: PfcConfig,
        out: dict[int, Wire],
        counters: dict[str, PortCounters],
    ) -> None:
        self.events = events
        self.name = name
        self.config = config
        self.out = out  # port -> this switch's wire on that port (toward the upstream)
        self._lossless = 0
        for p in config.priorities:
            self._lossless |= 1 << p
        self.occupancy: dict[tuple[int, int], int] = {}
        self.peak: dict[tuple[int, int], int] = {}
        self.pausing: set[tuple[int, int]] = set()
        self.headroom: dict[int, int] = {}
        self.counters_out = counters  # by wire name
        self.counters_in: dict[int, PortCounters] = {}  # port -> counters of the wire in
        self.sinks: dict[int, PauseSink] = {}  # port -> the upstream's pause handler
        # (t_ns, port, priority, pause, bytes held) of every pause and resume sent
        self.history: list[tuple[int, int, int, bool, int]] = []

    def admit(self, in_port: int, out_port: int, priority: int, length: int) -> bool:
        if not self._lossless >> priority & 1:
            return True
        key = (in_port, priority)
        held = self.occupancy.get(key, 0) + length
        config = self.config
        if held > config.xoff + self.headroom.get(in_port, 0):
            counters = self.counters_in.get(in_port)
            if counters is not None:
                counters.drops += 1
            return False
        self.occupancy[key] = held
        if held > self.peak.get(key, 0):
            self.peak[key] = held
        if held >= config.xoff and key not in self.pausing:
            self.pausing.add(key)
            self._send(in_port, priority, True, held)
        return True

    def release(self, in_port: int, priority: int, length: int) -> None:
        if not self._lossless >> priority & 1:
            return
        key = (in_port, priority)
        held = self.occupancy[key] - length
        self.occupancy[key] = held
        if held <= self.config.xon and key in self.pausing:
            self.pausing.discard(key)
            self._send(in_port, priority, False, held)

    def _send(self, port: int, priority: int, pause: bool, held: int) -> None:
        """A pause (or resume) frame on ``port``'s wire, to the upstream's handler."""
        self.history.append((self.events.now, port, priority, pause, held))
        wire = self.out.get(port)
        sink = self.sinks.get(port)
        if wire is None or sink is None or (pause and not wire.up):
            return  # no link there (CPU port) or cut: no pause reaches the upstream
        if pause:
            self.counters_out[wire.name].pauses_sent += 1
        now = self.events.now
        start = wire.busy_until if wire.busy_until > now else now
        arrive = start + int(PAUSE_FRAME_BYTES * NS_BITS / wire.rate_bps) + wire.delay_ns
        self.events.push(arrive, _deliver, (sink, wire, priority, pause))  # arrive >= now


def _deliver(args: tuple[PauseSink, Wire, int, bool]) -> None:
    """A pause frame arrives. A resume is applied even over a cut link: the pause's
    quanta would run out there, as nothing refreshes it."""
    sink, wire, priority, pause = args
    if wire.up or not pause:
        sink(wire.dst_port, priority, pause)


class NicPause:
    """A NIC's side of PFC: per port (plane), the priorities paused by its T0, and per
    priority the NIC's transmit queue. With PFC a frame joins its priority's queue and
    goes onto the wire only when the wire is free and its priority not paused (highest
    priority first), so a pause stops all but the frame being sent."""

    __slots__ = ("draining", "held", "paused")

    def __init__(self, planes: int) -> None:
        self.paused = [0] * planes  # bit p set: priority p paused on that port
        self.held: list[dict[int, deque[bytes]]] = [{} for _ in range(planes)]
        self.draining = [False] * planes  # a wake-up is due when the wire is free

    def enqueue(self, plane: int, frame: bytes) -> None:
        priority = frame_priority(frame)
        queue = self.held[plane].get(priority)
        if queue is None:
            queue = self.held[plane][priority] = deque()
        queue.append(frame)

    def next_frame(self, plane: int) -> bytes | None:
        """The next waiting frame of a priority not paused (None: nothing may go)."""
        mask = self.paused[plane]
        held = self.held[plane]
        for priority in sorted(held, reverse=True):
            queue = held[priority]
            if queue and not mask >> priority & 1:
                frame = queue.popleft()
                if not queue:
                    del held[priority]
                return frame
        return None

    def waiting(self, plane: int) -> int:
        return sum(len(q) for q in self.held[plane].values())


def pfc_summary(counters: dict[str, PortCounters], now: int) -> dict[str, Any]:
    """Totals and the per-link-direction rows that saw any PFC activity."""
    rows = {name: c.as_dict(now) for name, c in sorted(counters.items())}
    active = {n: r for n, r in rows.items() if any(r.values())}
    return {
        "pauses_sent": sum(r["pauses_sent"] for r in rows.values()),
        "pauses_received": sum(r["pauses_received"] for r in rows.values()),
        "paused_ns": sum(r["paused_ns"] for r in rows.values()),
        "headroom_drops": sum(r["headroom_drops"] for r in rows.values()),
        "per_link": active,
    }
