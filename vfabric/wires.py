"""One direction of a link: serialisation at the link rate, propagation delay, faults.

A :class:`Wire` has one way in, :meth:`Wire.receive` (a frame put on the wire now). The
frame occupies the wire for ``8 * len / rate`` and arrives ``delay`` later at the far
end's one way in (``sink(port, frame)``). Switch egress frames have already been spaced by
the switch's traffic manager draining at this same rate, so they never wait here; a NIC's
frames wait behind each other (the NIC's transmit queue is host memory, unbounded).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING

import cython

from mrc_wire.constants import IPPROTO_IPV6
from mrc_wire.frames import (
    DATA_DSCP_MASK,
    DATA_HEADER_BYTES,
    NEXT_HEADER_OFFSET,
    TRAFFIC_CLASS_OFFSET,
    data_bytes,
)
from vfabric.eventlist import EventSource
from vfabric.exceptions import VirtualFabricError

if TYPE_CHECKING:
    from vfabric.eventlist import EventList
    from vfabric.pcap import NsPcapWriter

NS_PER_S = 1_000_000_000
NS_BITS = 8 * NS_PER_S  # size * NS_BITS / rate: the serialisation time in ns
# The C constants of the native build (wires.pxd). _NS_BITS is a C double there: a frame's
# size (below 2**53) times it is the correctly rounded product, as Python's exact
# ``size * NS_BITS`` converted to float for the division is, so both paths divide the same
# double by the rate (one more rounding) and truncate it toward 0.
_NS_BITS = NS_BITS
_NH = NEXT_HEADER_OFFSET
_TC = TRAFFIC_CLASS_OFFSET
_IPV6 = IPPROTO_IPV6
_DATA_HEADER = DATA_HEADER_BYTES
#: bit d set: DSCP d (6 bits, 0-63) marks a data frame (DATA_DSCPS as a C mask)
_DATA_DSCP_BITS = DATA_DSCP_MASK
#: a frame's serialisation time in ns must stay below this (2**62, the event list's
#: limit): then the time it leaves the wire stays below 2**63, a C long long
MAX_SERIALISATION_NS = float(1 << 62)
_MAX_SERIAL = MAX_SERIALISATION_NS
# Wire.receive reads the bytes at _NH, _TC and _TC + 1 of a frame longer than _DATA_HEADER
# only: compiled, without bounds checks (the header's offsets are inside it)
assert max(_NH, _TC + 1) < _DATA_HEADER

Sink = Callable[[int, bytes], None]
LinkKey = tuple[str, str]  # a link, by the topology's (lower, upper) node names


class PacketFilter(ABC):
    """Installed on a wire (by a fault, :mod:`vfabric.faults`): ``drops(frame)`` decides,
    ``reason`` names the drop. The wire knows only this interface, never the faults."""

    __slots__ = ("reason",)

    @abstractmethod
    def drops(self, frame: bytes) -> bool:
        """True if ``frame`` is dropped (counted under ``reason``)."""


class FrameSink(EventSource):
    """What a wire delivers to (a switch or NIC node): ``receive(port, frame)``, its one way
    in. A wire :meth:`~Wire.connect`-ed to one calls it through C on the compiled path."""

    __slots__ = ()

    def receive(self, port: int, frame: bytes) -> None:
        raise NotImplementedError(f"{type(self).__name__} receives nothing")


class Wire(EventSource):
    """One direction of a link (see the module docstring)."""

    __slots__ = (
        "_bin_bytes",
        "_bin_index",
        "_bins",
        "_node",
        "_node_sink",
        "bin_ns",
        "busy_until",
        "data_bytes",
        "delay_ns",
        "drops",
        "dst",
        "dst_port",
        "events",
        "filters",
        "kind",
        "link",
        "lost_bins",
        "name",
        "on_drop",
        "outbox",
        "pcap",
        "plane",
        "rate_bps",
        "sink",
        "src",
        "src_port",
        "tx_bytes",
        "tx_packets",
        "up",
    )

    def __init__(
        self,
        events: EventList,
        *,
        link: LinkKey,
        src: str,
        src_port: int,
        dst: str,
        dst_port: int,
        plane: int,
        kind: str,
        rate_bps: float,
        delay_ns: int,
        bin_ns: int,
    ) -> None:
        self.events = events  # arrivals go on it with EventList.push: they are never late
        self.link = link
        self.src, self.src_port, self.dst, self.dst_port = src, src_port, dst, dst_port
        self.name = f"{src}->{dst}"
        self.plane = plane
        self.kind = kind
        self.rate_bps = rate_bps
        self.delay_ns = delay_ns
        self.bin_ns = bin_ns
        self.sink: Sink | None = None
        self.up = True
        self.filters: tuple[PacketFilter, ...] = ()
        self.busy_until = 0
        self.tx_packets = 0
        self.tx_bytes = 0
        self.data_bytes = 0
        self.drops: dict[str, int] = {}
        # time bin -> data payload bytes sent (``bins``): the current bin's bytes are
        # counted in _bin_bytes (bin _bin_index, -1: none yet) and added to the dict when
        # a later bin starts or ``bins`` is read; a wire's start times never decrease
        self._bins: dict[int, int] = {}
        self._bin_index = -1
        self._bin_bytes = 0
        # connect(): the node whose receive() sink is, called directly while it still is
        self._node: FrameSink | None = None
        self._node_sink: Sink | None = None
        self.lost_bins: dict[int, int] = {}  # time bin -> data payload bytes lost here
        self.pcap: NsPcapWriter | None = None
        self.on_drop: Callable[[str, bytes], None] | None = None  # (reason, frame) of a loss
        #: None, or on a wire into the other partition of a two-process run
        #: (:mod:`vfabric.parallel`): where its arrivals go, (time ns, frame), unscheduled
        self.outbox: list[tuple[int, bytes]] | None = None

    @cython.boundscheck(False)  # its frame reads are below _DATA_HEADER < len(frame)
    @cython.wraparound(False)
    def receive(self, frame: bytes) -> None:
        """The one way in: ``frame`` is put on the wire now."""
        # a cut link and filters are both rare: one test for the usual case
        if (not self.up or self.filters) and self._refused(frame):
            return
        now = self.events.now
        busy = self.busy_until
        start = busy if busy > now else now
        size = len(frame)
        serial = size * _NS_BITS / self.rate_bps  # compiled: a C double
        if not serial < _MAX_SERIAL:
            raise VirtualFabricError(
                f"wire {self.name}: a {size}-byte frame at {self.rate_bps} b/s takes "
                f"{serial:.3g} ns, past the event list's {1 << 62} ns"
            )
        if cython.compiled:  # 0 <= serial < 2**62: C truncates toward 0, as int() does
            done = start + cython.cast(cython.longlong, serial)
        else:
            done = start + int(serial)
        self.busy_until = done
        self.tx_packets += 1
        self.tx_bytes += size
        # data_bytes(frame), inlined: this runs for every frame on every hop
        if (
            size > _DATA_HEADER
            and frame[_NH] == _IPV6
            and _DATA_DSCP_BITS >> (((frame[_TC] & 0x0F) << 2) | (frame[_TC + 1] >> 6)) & 1
        ):
            payload = size - _DATA_HEADER
            self.data_bytes += payload
            index = start // self.bin_ns
            if index != self._bin_index:
                if self._bin_bytes:
                    self._flush_bin()
                self._bin_index = index
            self._bin_bytes += payload
        if self.pcap is not None:
            self.pcap.write(frame, start)
        if self.outbox is None:
            self.events.push_source(done + self.delay_ns, self, frame)  # fire: arrival
        else:  # the far end runs in the other process, which schedules the arrival
            self.outbox.append((done + self.delay_ns, frame))

    @property
    def bins(self) -> dict[int, int]:
        """Time bin (``start // bin_ns``) -> data payload bytes put on the wire in it."""
        if self._bin_bytes:
            self._flush_bin()
        return self._bins

    def _flush_bin(self) -> None:
        """The current bin's bytes into the dict (its bin stays current)."""
        bins = self._bins
        index = self._bin_index
        bins[index] = bins.get(index, 0) + self._bin_bytes
        self._bin_bytes = 0

    def connect(self, node: FrameSink) -> None:
        """Deliver arrivals to ``node.receive`` (``sink``); compiled, through a C call for as
        long as ``sink`` is still that method (a sink set later is called instead)."""
        self.sink = self._node_sink = node.receive
        self._node = node

    def _refused(self, frame: bytes) -> bool:
        """The link is down or a filter drops ``frame``: count the drop, True."""
        if not self.up:
            self._drop("link_down", frame)
            return True
        for flt in self.filters:
            if flt.drops(frame):
                self._drop(flt.reason, frame)
                return True
        return False

    def fire(self, frame: bytes) -> None:
        """The wire's event: ``frame`` arrives at the far end (``sink``; compiled, a C
        call of the connected node's ``receive``)."""
        if not self.up:  # cut while the frame was on it
            self._drop("link_down", frame)
            return
        node = self._node
        if node is not None and self.sink is self._node_sink:
            node.receive(self.dst_port, frame)
        else:
            self.sink(self.dst_port, frame)  # type: ignore[misc]

    def _drop(self, reason: str, frame: bytes) -> None:
        self.drops[reason] = self.drops.get(reason, 0) + 1
        payload = data_bytes(frame)
        if payload:
            index = self.events.now // self.bin_ns
            self.lost_bins[index] = self.lost_bins.get(index, 0) + payload
        if self.on_drop is not None:
            self.on_drop(reason, frame)
