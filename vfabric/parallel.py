"""One virtual fabric in two processes, partitioned by node (a prototype; issue #27).

A fabric splits into two partitions, each owning some switches and some NICs
(:class:`Split`): **B** the switches ``switches_b`` and the NICs ``nics_b``, **A** the
rest. A frame crosses between them only on a wire whose two ends are on different sides,
and it arrives ``delay`` after it was sent: the smallest delay of those wires is the
*lookahead* ``L`` (1 us on the bundled topologies). The splits (:data:`DEFAULT_SPLIT`):

- by plane (:func:`plane_split`, ``planes_b`` and ``nics_b``): planes meet only at the
  NICs, so only access links cross. On several planes the default is *halves*, half of
  the NICs and half of the planes each; *NICs | switches* (A every NIC, B every switch)
  is ``nics_b=frozenset()``;
- inside a plane (:func:`tree_halves`, the default on one plane of two T0 switches or
  more): A the lower half of the T0 switches with the NICs under them and the lower half
  of the T1 switches, B the rest; only the T0-T1 links between the halves cross;
- any other (``switches_b`` and ``nics_b``).

:func:`run_two_process` takes a freshly built :class:`~vfabric.fabric.VirtualFabric` (its
transfers scheduled, nothing run) and forks: the parent goes on as A, the child is B. Both
hold the same fabric (fork copies it), each runs only its own nodes' events:

- a wire that delivers to a node of the other partition gets an outbox
  (:attr:`Wire.outbox <vfabric.wires.Wire.outbox>`, a list; None on every other wire):
  the frame's serialisation is computed as always (the sender owns the wire's counters and
  ``busy_until``), and its arrival ``(time, frame)`` is appended there instead of
  scheduled. The slot is typed in ``vfabric/wires.pxd``, so this runs on the compiled
  path as on the pure one;
- a side runs on an event list of its own (:class:`~vfabric.eventlist.EventList` on the
  fabric's clock) to which its switches, NICs and wires move, so what the other side
  owns stays behind, never run (without split NICs A keeps the fabric's list);
- with split NICs a transfer between the sides starts in halves (:meth:`Partition.start_half`):
  each side sets up its end; the receiver's side makes the digests it checks against
  from the transfer's seed (the sender makes them as it sends, in the other process);
  each side stops at a barrier once its ends of every foreground transfer finished, and
  B's ends are merged into A's transfers after the run (:func:`merge_halves`);
- conservative windows: both run their events up to ``start + L - 1``; then A sends its
  crossing frames and its next event time to B, B answers with its own; each pushes the
  frames it received, sorted by (arrival time, wire, sequence), onto its event list; the
  next window starts at the earliest pending time of either side (idle stretches are
  skipped). A frame sent at ``t >= start`` arrives at ``>= start + L``, after the window:
  a frame for a time a process has already passed raises :class:`LateFrameError`.
  A window's message is pickled into a shared area mapped before the fork, one per
  direction, and the pipe carries only a doorbell (:data:`SHARED_AREA_BYTES`,
  :data:`DOORBELL`); one that is malformed raises :class:`PeerMessageError`.

A run is deterministic (the merge order is fixed by (time, wire, sequence), and each
partition's own events keep their scheduling order), but its event log is not the
one-process run's: an incoming frame is scheduled at the barrier, after the receiver's own
events of the same instant that were scheduled before it, where one process would have
scheduled it when it was sent. A's fabric holds A's records; B's hash is
:attr:`ParallelRun.b_event_log_sha256`.

Both paths (pure and compiled) give the same A and B event logs. Prototype limits (each
refused with :class:`PartitionSetupError`): no faults (link state changes would have
to cross too), no PFC (pause frames cross links backwards), no pcaps, a fresh fabric.
The results A holds are its NICs' (transfers, with B's ends merged, event log, EV
counters); B sends back its switches' and wires' counters (:attr:`ParallelRun.switches`,
:attr:`ParallelRun.links`).

Waits are bounded: a peer that exits or dies raises :class:`PeerDiedError`, one that fails
with an exception :class:`PeerFailedError` (its traceback in the message), one that says
nothing for ``timeout_s`` :class:`PeerTimeoutError`; each names the partitions' log files
(``log_dir``, kept after the run). docs/virtual-fabric.md, "Several cores", has the
measured figures.
"""

from __future__ import annotations

import contextlib
import gc
import mmap
import multiprocessing
import os
import pickle
import resource
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from topologies import Role
from vfabric.eventlist import EventList
from vfabric.exceptions import VirtualFabricError
from vfabric.fabric import age_survivors
from vfabric.transfers import Transfer, all_finished
from vfabric.wires import Wire

if TYPE_CHECKING:
    from vfabric.fabric import VirtualFabric

#: How long a partition waits for its peer's message at a barrier before giving up.
DEFAULT_TIMEOUT_S = 120.0
#: A waiting partition checks whether its peer is still alive this often.
LIVENESS_POLL_S = 0.2
#: A partition writes one progress line to its log every this many windows.
LOG_EVERY_WINDOWS = 1000
#: Ping-pongs over the pipe before the run, to measure an empty barrier's round trip (its
#: median: 64 give the same figure as 200 within a microsecond or two, in a quarter of the
#: time, docs/virtual-fabric.md, "The two-process run's own costs").
PING_PONGS = 64
PICKLE_PROTOCOL = pickle.HIGHEST_PROTOCOL
#: Each direction's shared area (an anonymous shared mapping made before the fork: pages
#: taken only as written): a message up to this size is written there and the pipe carries
#: only a doorbell (:data:`DOORBELL` and its length); a longer one goes over the pipe.
SHARED_AREA_BYTES = 8 << 20
#: The first byte of a doorbell; a pickled message starts with pickle's PROTO (0x80).
DOORBELL = b"S"

#: (arrival time ns, wire id, frame): a crossing frame; its sequence is its place in the
#: message (a wire's frames are in sending order, and a stable sort keeps it).
Crossing = tuple[int, int, bytes]
#: what a crossing wire appends to its outbox (``Wire.outbox``): (arrival time ns, frame)
Arrival = tuple[int, bytes]


class ParallelError(VirtualFabricError):
    """Base class of the two-process fabric's errors."""


class PartitionSetupError(ParallelError):
    """The fabric or the split cannot be run in two processes (see the module docstring)."""


class LateFrameError(ParallelError):
    """A crossing frame arrived for a virtual time its receiver had already passed: the
    window was longer than the lookahead."""


class PeerError(ParallelError):
    """The other partition failed; ``logs`` are both partitions' log files."""

    def __init__(self, message: str, logs: tuple[Path, ...]) -> None:
        names = ", ".join(str(p) for p in logs)
        super().__init__(f"{message} (logs: {names})" if logs else message)
        self.logs = logs


class PeerDiedError(PeerError):
    """The other partition's process exited, or its end of the pipe closed, mid-run."""


class PeerFailedError(PeerError):
    """The other partition raised an exception (its traceback is in the message)."""


class PeerTimeoutError(PeerError):
    """The other partition said nothing for ``timeout_s``."""


class PeerMessageError(PeerError):
    """A message from the other partition that is neither a doorbell for a message in the
    shared area nor a pickled message."""


@dataclass
class PartitionStats:
    """What one partition measured (CPU seconds are ``time.process_time``)."""

    name: str
    planes: list[int]  # the planes in which this side owns switches
    nics: int = 0  # how many NICs this side owns
    switches: int = 0  # how many switches this side owns
    pid: int = 0
    windows: int = 0
    frames_sent: int = 0
    frames_received: int = 0
    bytes_pickled: int = 0  # messages this partition sent, pickled
    events_run: int = 0
    traversals: int = 0
    run_wall_s: float = 0.0
    run_cpu_s: float = 0.0  # the whole loop, windows and barriers
    compute_cpu_s: float = 0.0  # running events inside windows
    exchange_cpu_s: float = 0.0  # pickling, sending, receiving, scheduling arrivals
    wait_wall_s: float = 0.0  # blocked at barriers, waiting for the peer's message
    #: at barriers, before blocking for a peer's message that was not there yet: this
    #: side's new event-log records hashed (:meth:`Partition.loop`); part of ``run_cpu_s``,
    #: left out of ``window_exchange`` and ``exchange_cpu_s`` (it fills a wait)
    idle_cpu_s: float = 0.0
    ping_rtt_s: float = 0.0  # median round trip of an empty message before the run
    #: this process's peak RSS (``ru_maxrss``) at the end of the run, its whole life (B's
    #: counts from the fork, the pages it shares with A included)
    peak_rss_kib: int = 0
    #: this process's proportional set size at the end of the run (``Pss`` of
    #: /proc/self/smaps_rollup: a page shared with the peer counts half); 0 where unknown
    pss_end_kib: int = 0
    #: per window: CPU seconds of its events, then of its barrier (both ``process_time``)
    window_compute: list[float] = field(default_factory=list, repr=False)
    window_exchange: list[float] = field(default_factory=list, repr=False)

    def summary(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if not k.startswith("window_")}
        for key in (
            "run_wall_s",
            "run_cpu_s",
            "compute_cpu_s",
            "exchange_cpu_s",
            "wait_wall_s",
            "idle_cpu_s",
        ):
            out[key] = round(out[key], 4)
        out["ping_rtt_us"] = round(out.pop("ping_rtt_s") * 1e6, 1)
        return out


@dataclass
class ParallelRun:
    """A two-process run: whether every foreground transfer finished, both partitions'
    figures, B's switch and wire counters, and the logs."""

    finished: bool
    window_ns: int
    a: PartitionStats
    b: PartitionStats
    switches: dict[str, dict[str, int]]  # every switch's counters, from its owner
    links: dict[str, dict[str, Any]]  # every wire's counters, from its sender
    logs: tuple[Path, ...]
    #: B's own event log's hash (its NICs' records, with split NICs; else only the start)
    b_event_log_sha256: str = ""
    #: which split ran (:attr:`Split.name`: "halves", "tree halves", "NICs | switches"...)
    split: str = ""

    @property
    def traversals(self) -> int:
        return self.a.traversals + self.b.traversals

    def critical_path_cpu_s(self, barrier_s: float | None = None) -> float:
        """The run's length if each window cost the larger of the two partitions' CPU
        (events plus barrier) and each barrier one more ``barrier_s`` of latency (by
        default the measured empty round trip, the larger of the two): what two idle
        cores would take, estimated from CPU times so that other load does not count."""
        rtt = max(self.a.ping_rtt_s, self.b.ping_rtt_s) if barrier_s is None else barrier_s
        total = 0.0
        for ca, xa, cb, xb in zip(
            self.a.window_compute,
            self.a.window_exchange,
            self.b.window_compute,
            self.b.window_exchange,
            strict=True,
        ):
            total += max(ca + xa, cb + xb) + rtt
        return total


@dataclass(frozen=True)
class Split:
    """Who runs what: **B** the switches ``switches_b`` and the NICs ``nics_b``, **A** every
    other switch and NIC. ``name`` says which rule made it (for logs and benchmarks)."""

    switches_b: frozenset[str]
    nics_b: frozenset[str] = frozenset()
    name: str = "custom"

    def side_of(self, node: str) -> str:
        """``"B"`` if the split gives ``node`` (a switch or NIC name) to B, else ``"A"``."""
        return "B" if node in self.switches_b or node in self.nics_b else "A"


def plane_split(
    fabric: VirtualFabric,
    planes_b: frozenset[int],
    nics_b: frozenset[str] = frozenset(),
    name: str | None = None,
) -> Split:
    """B the switches of the planes ``planes_b`` and the NICs ``nics_b``: the split by plane
    (``planes_b`` must be some of the fabric's planes: :class:`PartitionSetupError`)."""
    count = fabric.topology.plane_count
    if not planes_b or not planes_b <= frozenset(range(count)):
        raise PartitionSetupError(
            f"B must own some of the planes 0..{count - 1} (all: A runs the NICs alone), "
            f"got {sorted(planes_b)}"
        )
    switches = frozenset(sw.name for sw in fabric.topology.switches if sw.plane in planes_b)
    if name is None:
        if nics_b:
            name = "planes and NICs"
        else:
            name = "NICs | switches" if len(planes_b) == count else "planes"
    return Split(switches, frozenset(nics_b), name)


def tree_halves(fabric: VirtualFabric) -> Split:
    """The split inside a plane: in every plane A the lower half of the T0 switches (by
    index) and the lower half of the T1 switches, B the upper halves; each NIC goes with
    its T0 (a NIC hangs off the T0 of the same index in every plane). Only the T0-T1 links
    whose ends are on different sides cross. Needs at least two T0 switches per plane."""
    topo = fabric.topology
    if topo.t0_per_plane < 2:
        raise PartitionSetupError(
            f"the split inside a plane needs at least 2 T0 switches per plane, "
            f"{topo.name} has {topo.t0_per_plane}"
        )
    t0_half = topo.t0_per_plane // 2
    switches = frozenset(
        sw.name
        for sw in topo.switches
        if sw.index >= (t0_half if sw.role is Role.T0 else topo.planes[sw.plane].t1_count // 2)
    )
    nics = frozenset(n.name for n in topo.nics if n.t0_index >= t0_half)
    return Split(switches, nics, "tree halves")


def crossing_wires(fabric: VirtualFabric, split: Split) -> list[Wire]:
    """The wires between the partitions: those whose two ends are on different sides
    (both directions of a link), in the fabric's wire order."""
    side = split.side_of
    return [w for w in fabric.wires.values() if side(w.src) != side(w.dst)]


def lookahead_ns(fabric: VirtualFabric, split: Split) -> int:
    """The smallest delay of a crossing wire: no crossing frame arrives sooner."""
    delays = [wire.delay_ns for wire in crossing_wires(fabric, split)]
    if not delays or min(delays) < 1:
        raise PartitionSetupError(
            "the split needs crossing links with a delay of at least 1 ns, "
            f"got {sorted(set(delays))!r}"
        )
    return min(delays)


def default_split(fabric: VirtualFabric) -> Split:
    """The split :func:`run_two_process` takes by default (:data:`DEFAULT_SPLIT`): on a
    fabric of several planes the halves of the NICs and of the planes; on one plane the
    halves of its fat tree (:func:`tree_halves`), or NICs | switches where it has a single
    T0 switch."""
    topo = fabric.topology
    count = topo.plane_count
    if count == 1:
        if topo.t0_per_plane >= 2:
            return tree_halves(fabric)
        return plane_split(fabric, frozenset({0}))
    nics = list(fabric.nics)
    return plane_split(
        fabric, frozenset(range(count // 2, count)), frozenset(nics[len(nics) // 2 :]), "halves"
    )


#: The default split (:func:`default_split`). Measured (docs/virtual-fabric.md, "Several
#: cores"): the NICs are about half of a run's CPU, so with every NIC on one side
#: ("NICs | switches": A every NIC, B every switch) the sides are only roughly even, their
#: load alternates from window to window (NIC-heavy, then switch-heavy), every access frame
#: crosses twice and A alone starts every transfer. Halves of the NICs and of the planes
#: (A the lower half of each, B the upper) are even by symmetry under symmetric traffic and
#: cross half as many frames: all-to-all on paper-8plane (64 KiB) a critical path of 3.43 s
#: against 4.23 s, on small (1 MiB) 1.95 s against 2.09 s (pure path, session 13). A
#: one-plane fabric has no halves of planes: it splits inside the plane, the fat tree's
#: halves (:func:`tree_halves`), where both sides do NIC and switch work in every window
#: and a frame between the halves crosses once: on the 1 MiB permutation (compiled, session
#: 19) 14,384 crossing frames against 30,582, a critical path of 0.366 s against 0.376 s
#: (4 MiB: 1.09 to 1.32 s against 1.24 to 1.42 s), the larger side's run-loop instructions
#: without libcrypto 888 M against 1,005 M; the receivers' digests made again in
#: start_half take back part of it (docs/virtual-fabric.md, "Split inside a plane").
DEFAULT_SPLIT = (
    "halves of the NICs and of the planes; on one plane the halves of its fat tree "
    "(NICs | switches where it has one T0)"
)


class Partition:
    """One side of the split, in its own process: its event list, its outboxes, the wires
    whose arrivals it receives, and the barrier loop (:meth:`loop`)."""

    def __init__(
        self,
        fabric: VirtualFabric,
        name: str,
        split: Split,
        conn: Connection,
        log: Path,
        timeout_s: float,
        peer_alive: Callable[[], bool],
        areas: tuple[mmap.mmap, mmap.mmap] | None = None,
    ) -> None:
        self.fabric = fabric
        #: (the area this side writes, the one it reads); None: every message by the pipe
        self.areas = areas
        #: whether this side may write its area: not again until a message from the peer
        #: came, which the barrier's order (:meth:`exchange`) sends only after the peer
        #: copied out the last one; B's closing message, after its last answer, goes
        #: by the pipe
        self._area_free = True
        self.name = name
        self.conn = conn
        self.log_path = log
        self.timeout_s = timeout_s
        self.peer_alive = peer_alive
        self.is_a = name == "A"
        #: what to do at a barrier while the peer's message is not there yet (None:
        #: nothing; :meth:`loop` sets it)
        self._idle: Callable[[], None] | None = None
        #: the NICs are split too: transfers start in halves (:meth:`start_half`)
        self.split = split
        self.split_nics = bool(split.nics_b)
        self.nics = {n for n in fabric.nics if (n in split.nics_b) != self.is_a}
        self.wire_ids = {id(w): i for i, w in enumerate(fabric.wires.values())}
        self.wires = list(fabric.wires.values())
        self.switches = [
            n for n in fabric.switches.values() if (n.name in split.switches_b) != self.is_a
        ]
        names = {n.name for n in self.switches}
        mine = sorted({sw.plane for sw in fabric.topology.switches if sw.name in names})
        self.stats = PartitionStats(
            name, mine, nics=len(self.nics), switches=len(self.switches), pid=os.getpid()
        )
        owned = {n.name for n in self.switches} | self.nics
        if self.is_a and not self.split_nics:
            self.events = fabric.events  # A keeps the list with the transfers' starts
        else:
            # an own list on the fabric's clock, to which the owned nodes move: what the
            # other side owns stays behind on the old one, never run here
            self.events = EventList(fabric.clock)
            fabric.events = self.events
            for node in self.switches:
                node.events = self.events
            for nic in self.nics:
                fabric.nics[nic].events = self.events
            for wire in self.wires:
                if wire.src in owned or wire.dst in owned:
                    wire.events = self.events
            if self.split_nics:
                for t in fabric.transfers:  # both sides, in the same order
                    self.events.at(t.start_ns, self.start_half, t)
        crossing = crossing_wires(fabric, split)
        sending = [w for w in crossing if w.src in owned]
        #: (wire id, its outbox) of each wire that sends to the other side
        self.outboxes: list[tuple[int, list[Arrival]]] = []
        for wire in sending:
            wire.outbox = []
            self.outboxes.append((self.wire_ids[id(wire)], wire.outbox))
        self._log = open(log, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self.note(
            f"partition {name} pid {os.getpid()} split {split.name!r}: {len(self.switches)} "
            f"switches (planes {mine}), {len(self.nics)} NICs, crossing wires {len(sending)}"
        )

    def start_half(self, t: Transfer) -> None:
        """:meth:`VirtualFabric._start_transfer` when the NICs are split: this side sets up
        the end(s) it owns. Both sides allocate both ends' QPN and memory on their copies
        of both NICs, so every copy's counters stay those of the NIC's owner."""
        fabric = self.fabric
        mine_src, mine_dst = t.src in self.nics, t.dst in self.nics
        # the receiving end compares what it places with the transfer's bytes, read from
        # its own copy of the seeded source: nothing is needed from the sending side
        fabric._start_transfer(t, src_end=mine_src, dst_end=mine_dst)

    def halves_done(self, foreground: list[Transfer]) -> bool:
        """Every foreground transfer failed or finished its ends on this side."""
        for t in foreground:
            if t.failure is not None:
                continue
            if t.src in self.nics and not (t.message_done_ns and None not in t.message_done_ns):
                return False
            if t.dst in self.nics and not (
                t.message_received_ns and None not in t.message_received_ns
            ):
                return False
        return True

    def halves(self) -> list[tuple[Any, ...]]:
        """Per transfer, what this side's ends know (:func:`merge_halves` takes it)."""
        return [
            (
                t.message_done_ns if t.src in self.nics else None,
                (t.message_received_ns, t.bytes_delivered, t.bytes_verified)
                if t.dst in self.nics
                else None,
                t.failure,
            )
            for t in self.fabric.transfers
        ]

    def note(self, line: str) -> None:
        self._log.write(f"{time.strftime('%H:%M:%S')} {line}\n")
        self._log.flush()

    def close(self) -> None:
        self._log.close()

    # ------------------------------------------------------------------ the barrier

    def send(self, message: object) -> None:
        data = pickle.dumps(message, PICKLE_PROTOCOL)
        size = len(data)
        self.stats.bytes_pickled += size
        areas = self.areas
        if areas is not None and self._area_free and size <= len(areas[0]):
            areas[0][:size] = data
            self._area_free = False
            data = DOORBELL + size.to_bytes(4, "little")
        try:
            self.conn.send_bytes(data)
        except OSError as exc:
            # the peer is gone: its last word, if it left one, says why
            try:
                last = self.conn.poll(0) and self.conn.recv_bytes()
            except (EOFError, OSError):
                last = b""
            if last:
                self._decode(self._unwrap(last))
            raise PeerDiedError(
                f"partition {self.name}: the pipe to the other partition closed mid-run "
                f"({type(exc).__name__})",
                (),
            ) from None

    def receive(self) -> Any:
        """The peer's next message: waits at most ``timeout_s`` (checking that the peer
        lives), raises the peer's own error if it sent one."""
        return self._decode(self._receive_bytes())

    def _receive_bytes(self) -> bytes:
        """The peer's next message as it came (:meth:`receive` without the decoding)."""
        conn = self.conn
        try:
            if self._idle is not None and not conn.poll(0):
                cpu_started = time.process_time()
                self._idle()
                self.stats.idle_cpu_s += time.process_time() - cpu_started
            started = time.perf_counter()
            waited = 0.0
            while not conn.poll(LIVENESS_POLL_S):
                waited = time.perf_counter() - started
                if not self.peer_alive():
                    raise PeerDiedError(
                        f"partition {self.name}: the other partition's process exited "
                        f"mid-run (waited {waited:.1f} s at a barrier)",
                        (),
                    )
                if waited > self.timeout_s:
                    raise PeerTimeoutError(
                        f"partition {self.name}: no word from the other partition for "
                        f"{waited:.1f} s",
                        (),
                    )
            self.stats.wait_wall_s += time.perf_counter() - started
            data = conn.recv_bytes()
        except (EOFError, OSError) as exc:
            raise PeerDiedError(
                f"partition {self.name}: the pipe to the other partition closed mid-run "
                f"({type(exc).__name__})",
                (),
            ) from None
        return self._unwrap(data)

    def _unwrap(self, data: bytes) -> bytes:
        """The message ``data`` brought: itself, or for a doorbell a copy of the message
        in the shared area (copied out before this side answers, which lets the peer
        write its next one there)."""
        self._area_free = True
        if data[:1] != DOORBELL:
            return data
        size = int.from_bytes(data[1:], "little")
        area = None if self.areas is None else self.areas[1]
        if area is None or len(data) != 5 or size > len(area):
            raise PeerMessageError(
                f"partition {self.name}: a malformed doorbell from the other partition "
                f"({data[:16]!r}{' and no shared area' if area is None else ''})",
                (),
            )
        return area[:size]

    def _decode(self, data: bytes) -> Any:
        try:
            message = pickle.loads(data)
        except Exception as exc:  # pickle raises several kinds on bytes it cannot read
            raise PeerMessageError(
                f"partition {self.name}: a message from the other partition that does not "
                f"unpickle ({type(exc).__name__}: {exc}; {len(data)} bytes, {data[:16]!r})",
                (),
            ) from None
        self._raise_if_error(message)
        return message

    def _raise_if_error(self, message: object) -> None:
        """Raise the peer's error if ``message`` is one (``("error", kind, text)``)."""
        if isinstance(message, tuple) and message and message[0] == "error":
            _, kind, text = message
            if kind == LateFrameError.__name__:  # the window's fault, not the peer's
                raise LateFrameError(text)
            raise PeerFailedError(
                f"partition {'B' if self.is_a else 'A'} failed: {kind}: {text}", ()
            )

    def exchange(self, message: object) -> Any:
        """A sends first, then B: neither blocks on a full pipe while the other sends. B
        answers as soon as A's message is read, and decodes it (and raises A's error, if
        it is one) after: A waits for B's answer, not for B's decoding."""
        if self.is_a:
            self.send(message)
            return self.receive()
        data = self._receive_bytes()
        try:
            self.send(message)
        except PeerError:
            self._decode(data)  # A's last word, already read, says why if it was an error
            raise
        return self._decode(data)

    def ping(self) -> None:
        """:data:`PING_PONGS` empty exchanges: the median round trip of a barrier."""
        times = []
        for _ in range(PING_PONGS):
            started = time.perf_counter()
            self.exchange(None)
            times.append(time.perf_counter() - started)
        times.sort()
        self.stats.ping_rtt_s = times[len(times) // 2]
        self.stats.bytes_pickled = 0
        self.stats.wait_wall_s = 0.0

    def collect(self) -> list[Crossing]:
        """The crossing frames sent since the last barrier, taken out of the outboxes:
        wire by wire, each wire's in sending order (the receiver's stable sort by (time,
        wire) gives the order one shared list in sending order would)."""
        frames: list[Crossing] = []
        for wire_id, box in self.outboxes:
            if box:
                frames.extend([(t_ns, wire_id, frame) for t_ns, frame in box])
                box.clear()
        return frames

    def deliver(self, frames: list[Crossing]) -> None:
        """Schedule the peer's crossing frames at their arrival times, in (time, wire,
        sequence) order; one for a time this partition has passed is an error."""
        events = self.events
        now = events.now
        wires = self.wires
        frames.sort(key=_time_and_wire)  # stable: a wire's frames keep their sequence
        for t_ns, wire_id, frame in frames:
            if t_ns <= now:
                raise LateFrameError(
                    f"partition {self.name}: a frame on {wires[wire_id].name} arrives at "
                    f"{t_ns} ns, but this partition's window already ended at {now} ns"
                )
            events.push_source(t_ns, wires[wire_id], frame)  # fire: the wire's arrival
        self.stats.frames_received += len(frames)

    # ------------------------------------------------------------------ the run

    def loop(
        self,
        window_ns: int,
        until_ns: int | None,
        stop: Callable[[], bool],
        done: Callable[[], bool],
    ) -> bool:
        """Windows and barriers until both sides are ``done`` (True: A's stop() ended a
        window early, or with the NICs split, each side's ends of every foreground
        transfer finished at a barrier), ``until_ns`` or nothing left anywhere (False)."""
        started, cpu_started = time.perf_counter(), time.process_time()
        # this side's new event-log records are hashed (and, on A with an event log,
        # written) while it waits for its peer, instead of all of them after the loop:
        # the same lines in the same order, so the same hash and file
        self._idle = self.fabric.flush
        try:
            return self._windows(window_ns, until_ns, stop, done, started, cpu_started)
        finally:
            self._idle = None

    def _windows(
        self,
        window_ns: int,
        until_ns: int | None,
        stop: Callable[[], bool],
        done: Callable[[], bool],
        started: float,
        cpu_started: float,
    ) -> bool:
        events = self.events
        stats = self.stats
        cpu = time.process_time
        # where the first window starts: the earliest pending event of either side
        peer_next = self.exchange(events.next_time())
        start = _earliest(events.next_time(), peer_next)
        finished = False
        while start is not None and (until_ns is None or start <= until_ns):
            end = start + window_ns - 1
            if until_ns is not None and end > until_ns:
                end = until_ns
            c0 = cpu()
            stopped = events.run(end, stop) or done()
            c1 = cpu()
            idle = stats.idle_cpu_s
            frames = self.collect()
            mine = events.next_time()
            peer_frames, peer_next, peer_stopped = self.exchange((frames, mine, stopped))
            self.deliver(peer_frames)
            c2 = cpu()
            stats.window_compute.append(c1 - c0)
            stats.window_exchange.append(c2 - c1 - (stats.idle_cpu_s - idle))
            stats.windows += 1
            stats.frames_sent += len(frames)
            if stats.windows % LOG_EVERY_WINDOWS == 0:
                self.note(f"window {stats.windows} at {end} ns, frames out {stats.frames_sent}")
            if stopped and peer_stopped:
                finished = True
                break
            nxt = _earliest(mine, peer_next)
            for t_ns, _, _ in frames:
                nxt = t_ns if nxt is None or t_ns < nxt else nxt
            for t_ns, _, _ in peer_frames:
                nxt = t_ns if nxt is None or t_ns < nxt else nxt
            if nxt is None or (until_ns is not None and end >= until_ns):
                break
            start = nxt if nxt > end else end + 1
        stats.run_wall_s = time.perf_counter() - started
        stats.run_cpu_s = cpu() - cpu_started
        stats.compute_cpu_s = sum(stats.window_compute)
        stats.exchange_cpu_s = sum(stats.window_exchange)
        stats.events_run = events.events_run
        stats.traversals = sum(n.traversals for n in self.switches)
        stats.peak_rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        stats.pss_end_kib = pss_kib()
        self.note(
            f"done: {stats.windows} windows, virtual {events.now} ns, frames out "
            f"{stats.frames_sent} in {stats.frames_received}, cpu {stats.run_cpu_s:.3f} s"
        )
        return finished

    def counters(self) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, Any]]]:
        """This partition's switches' counters and the counters of the wires it sends on."""
        fabric = self.fabric
        names = {n.name for n in self.switches}
        # only this side's: the peer's objects are copies this process never ran (and
        # reading them would touch, and copy, their pages)
        return fabric.switch_counters(names), fabric.link_counters(names | self.nics)


#: a crossing frame's (time, wire): the key of deliver()'s stable sort (a C callable: no
#: Python call per frame, which a def made)
_time_and_wire = itemgetter(0, 1)


def _earliest(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if a < b else b


def pss_kib() -> int:
    """This process's proportional set size now (kB, /proc/self/smaps_rollup), or 0
    where the kernel does not say."""
    try:
        with open("/proc/self/smaps_rollup", encoding="ascii") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def split_of(
    fabric: VirtualFabric,
    planes_b: frozenset[int] | None = None,
    nics_b: frozenset[str] | None = None,
    switches_b: frozenset[str] | None = None,
) -> Split:
    """The split :func:`run_two_process` runs for these arguments: ``switches_b`` (and
    ``nics_b``, by default none) as given; else the planes ``planes_b`` (by default every
    plane) and ``nics_b`` (by default none); all None: :func:`default_split`."""
    if switches_b is not None:
        if planes_b is not None:
            raise PartitionSetupError("give B's planes_b or its switches_b, not both")
        known = {sw.name for sw in fabric.topology.switches}
        unknown = sorted(set(switches_b) - known)
        if unknown:
            raise PartitionSetupError(
                f"switches_b names {unknown[0]!r}, not a switch of the fabric"
            )
        return Split(frozenset(switches_b), frozenset(() if nics_b is None else nics_b))
    if planes_b is None and nics_b is None:
        return default_split(fabric)
    planes = frozenset(range(fabric.topology.plane_count) if planes_b is None else planes_b)
    return plane_split(fabric, planes, frozenset(() if nics_b is None else nics_b))


def _check(fabric: VirtualFabric, split: Split) -> None:
    unknown = sorted(split.nics_b - set(fabric.nics))
    if unknown:
        raise PartitionSetupError(f"nics_b names {unknown[0]!r}, not a NIC of the fabric")
    if not split.switches_b and not split.nics_b:
        raise PartitionSetupError("the split leaves B empty: it owns no switch and no NIC")
    if len(split.switches_b) == len(fabric.switches) and len(split.nics_b) == len(fabric.nics):
        raise PartitionSetupError("the split leaves A empty: B owns every switch and NIC")
    if fabric.now != 0 or fabric.events.events_run:
        raise PartitionSetupError("the two-process run takes a fresh fabric (nothing run yet)")
    if fabric.faults:
        raise PartitionSetupError("the two-process prototype runs no faults")
    if fabric.pfc is not None:
        raise PartitionSetupError("the two-process prototype runs without PFC")
    if any(w.pcap is not None for w in fabric.wires.values()):
        raise PartitionSetupError("the two-process prototype writes no pcaps")


def run_two_process(
    fabric: VirtualFabric,
    planes_b: frozenset[int] | None = None,
    *,
    nics_b: frozenset[str] | None = None,
    switches_b: frozenset[str] | None = None,
    until_ns: int | None = None,
    window_ns: int | None = None,
    log_dir: str | Path | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> ParallelRun:
    """Run ``fabric`` (fresh, transfers scheduled) in two processes: a forked child as B
    (the NICs ``nics_b`` and the switches of the planes ``planes_b``, or the switches
    ``switches_b``), this one as A (every other NIC and switch): :func:`split_of` (all
    None: :func:`default_split`; ``planes_b`` or ``nics_b`` None: every plane, no NIC).
    Returns like :meth:`VirtualFabric.run` in :attr:`ParallelRun.finished`;
    the fabric in this process then holds A's results, and its transfers both ends'
    (:func:`merge_halves`, when the NICs are split).
    ``window_ns``: the synchronisation window, by default the lookahead (a longer one is
    unsafe, and a frame it makes late raises :class:`LateFrameError`)."""
    split = split_of(fabric, planes_b, nics_b, switches_b)
    _check(fabric, split)
    window = lookahead_ns(fabric, split) if window_ns is None else window_ns
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise PartitionSetupError(f"window_ns must be a positive integer, got {window!r}")
    directory = Path(tempfile.mkdtemp(prefix="vfabric-2p-")) if log_dir is None else Path(log_dir)
    directory.mkdir(parents=True, exist_ok=True)
    logs = (directory / "partition-A.log", directory / "partition-B.log")
    fabric.flush()  # nothing buffered in the event log that the child could write again
    ctx = multiprocessing.get_context("fork")
    conn_a, conn_b = ctx.Pipe(duplex=True)
    # shared with the child by the fork: (A to B, B to A)
    a_to_b, b_to_a = mmap.mmap(-1, SHARED_AREA_BYTES), mmap.mmap(-1, SHARED_AREA_BYTES)
    parent = os.getpid()
    child = ctx.Process(
        target=_run_b,
        args=(
            fabric,
            split,
            conn_b,
            (b_to_a, a_to_b),
            logs[1],
            timeout_s,
            window,
            until_ns,
            parent,
        ),
        name="vfabric-partition-B",
        daemon=True,
    )
    child.start()
    conn_b.close()
    part: Partition | None = None
    try:
        part = Partition(
            fabric, "A", split, conn_a, logs[0], timeout_s, child.is_alive, (a_to_b, b_to_a)
        )
        part.ping()
        finished = _collected(part, window, until_ns)
        # A's own counters and its event log's records hashed (and written) while B takes
        # its own and hashes its records: both were waits for B's message before
        switches, links = part.counters()
        fabric.flush()
        b_stats, b_switches, b_links, b_halves, b_sha = part.receive()
        if split.nics_b:
            merge_halves(fabric.transfers, b_halves)
        switches.update(b_switches)
        links.update(b_links)
        fabric.flush()
        return ParallelRun(
            finished,
            window,
            part.stats,
            b_stats,
            dict(sorted(switches.items())),
            {name: links[name] for name in (w.name for w in fabric.wires.values())},
            logs,
            b_sha,
            split.name,
        )
    except PeerError as exc:
        if part is not None:
            part.note(f"error: {exc}")
        raise type(exc)(str(exc).split(" (logs: ")[0], logs) from None
    except BaseException as exc:
        if part is not None:
            part.note(f"error: {type(exc).__name__}: {exc}")
        raise
    finally:
        conn_a.close()  # the child, if still waiting, sees the pipe close and ends
        child.join(timeout=LIVENESS_POLL_S * 10)
        if child.is_alive():
            child.kill()  # only the process this call started
            child.join(timeout=LIVENESS_POLL_S * 10)
        if part is not None:
            part.close()
        a_to_b.close()
        b_to_a.close()


def _collected(part: Partition, window: int, until_ns: int | None) -> bool:
    """``part``'s loop with the cyclic garbage collector paused, as in
    :meth:`VirtualFabric.run`; when does a side stop: without split NICs, A when every
    foreground transfer finished (checked as one process does, mid-window) and B at once;
    with split NICs, each at a barrier when its ends of them all finished."""
    foreground = [t for t in part.fabric.transfers if not t.background and not t.finished]

    def never() -> bool:
        return False

    def halves_done() -> bool:
        return bool(foreground) and part.halves_done(foreground)

    if part.split_nics:
        stop, done = never, halves_done
    elif part.is_a:
        stop = done = all_finished(foreground)
    else:
        stop, done = never, _always
    collecting = gc.isenabled()
    gc.disable()
    try:
        return part.loop(window, until_ns, stop, done)
    finally:
        if collecting:
            # what the loop left alive (every object it made counts as new, the collector
            # off) to the oldest generation: else the first allocation after the loop
            # scans it all (about 2 ms a side on the 4 MiB permutation)
            age_survivors()
            gc.enable()


def _always() -> bool:
    return True


def merge_halves(transfers: list[Transfer], halves: list[tuple[Any, ...]]) -> None:
    """Complete A's transfers with what B's ends know (:meth:`Partition.halves`): the
    send completions of B's senders, the placements and checks of B's receivers, B's
    failures; then each transfer's completion as :class:`Transfer` computes it."""
    for t, (done_ns, received, failure) in zip(transfers, halves, strict=True):
        if done_ns is not None:
            t.message_done_ns = done_ns
        if received is not None:
            t.message_received_ns, t.bytes_delivered, t.bytes_verified = received
        if t.failure is None and failure is not None:
            t.failure = failure
        if (
            t.completion_ns is None
            and t.failure is None
            and t.message_done_ns
            and None not in t.message_done_ns
            and None not in t.message_received_ns
        ):
            t.completion_ns = max(*t.message_done_ns, *t.message_received_ns)


def _run_b(
    fabric: VirtualFabric,
    split: Split,
    conn: Connection,
    areas: tuple[mmap.mmap, mmap.mmap],
    log: Path,
    timeout_s: float,
    window: int,
    until_ns: int | None,
    parent: int,
) -> None:
    """Partition B, in the forked child: the loop, then its figures and counters to A."""
    part: Partition | None = None
    # B hashes its own records (its NICs', with split NICs) but writes no event log:
    # the file is A's
    fabric._log_sink = None
    try:
        part = Partition(
            fabric, "B", split, conn, log, timeout_s, lambda: os.getppid() == parent, areas
        )
        part.ping()
        _collected(part, window, until_ns)
        switches, links = part.counters()
        halves = part.halves() if split.nics_b else []
        part.send((part.stats, switches, links, halves, fabric.event_log_sha256))
    except BaseException as exc:
        text = traceback.format_exc()
        if part is not None:
            part.note(f"error:\n{text}")
        else:
            log.write_text(f"error before the loop:\n{text}", encoding="utf-8")
        if not isinstance(exc, PeerError):
            with contextlib.suppress(OSError):
                conn.send_bytes(pickle.dumps(("error", type(exc).__name__, str(exc))))
        os._exit(1)
    finally:
        if part is not None:
            part.close()
        conn.close()
