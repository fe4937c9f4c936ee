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

from mrc_wire.constants import IPPROTO_IPV6
from mrc_wire.frames import (
    DATA_DSCPS,
    DATA_HEADER_BYTES,
    NEXT_HEADER_OFFSET,
    TRAFFIC_CLASS_OFFSET,
    data_bytes,
)
from vfabric.eventlist import EventSource

if TYPE_CHECKING:
    from vfabric.eventlist import EventList
    from vfabric.pcap import NsPcapWriter

NS_PER_S = 1_000_000_000
NS_BITS = 8 * NS_PER_S  # size * NS_BITS / rate: the serialisation time in ns
_NS_BITS = NS_BITS  # the C constants of the native build (wires.pxd)
_NH = NEXT_HEADER_OFFSET
_TC = TRAFFIC_CLASS_OFFSET

Sink = Callable[[int, bytes], None]
LinkKey = tuple[str, str]  # a link, by the topology's (lower, upper) node names


class PacketFilter(ABC):
    """Installed on a wire (by a fault, :mod:`vfabric.faults`): ``drops(frame)`` decides,
    ``reason`` names the drop. The wire knows only this interface, never the faults."""

    __slots__ = ("reason",)

    @abstractmethod
    def drops(self, frame: bytes) -> bool:
        """True if ``frame`` is dropped (counted under ``reason``)."""


class Wire(EventSource):
    """One direction of a link (see the module docstring)."""

    __slots__ = (
        "bin_ns",
        "bins",
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
        self.bins: dict[int, int] = {}  # time bin -> data payload bytes sent
        self.lost_bins: dict[int, int] = {}  # time bin -> data payload bytes lost here
        self.pcap: NsPcapWriter | None = None
        self.on_drop: Callable[[str, bytes], None] | None = None  # (reason, frame) of a loss
        #: None, or on a wire into the other partition of a two-process run
        #: (:mod:`vfabric.parallel`): where its arrivals go, (time ns, frame), unscheduled
        self.outbox: list[tuple[int, bytes]] | None = None

    def receive(self, frame: bytes) -> None:
        """The one way in: ``frame`` is put on the wire now."""
        # a cut link and filters are both rare: one test for the usual case
        if (not self.up or self.filters) and self._refused(frame):
            return
        now = self.events.now
        busy = self.busy_until
        start = busy if busy > now else now
        size = len(frame)
        done = start + int(size * _NS_BITS / self.rate_bps)
        self.busy_until = done
        self.tx_packets += 1
        self.tx_bytes += size
        # data_bytes(frame), inlined: this runs for every frame on every hop
        if (
            size > DATA_HEADER_BYTES
            and frame[_NH] == IPPROTO_IPV6
            and (((frame[_TC] & 0x0F) << 2) | (frame[_TC + 1] >> 6)) in DATA_DSCPS
        ):
            payload = size - DATA_HEADER_BYTES
            self.data_bytes += payload
            index = start // self.bin_ns
            bins = self.bins
            bins[index] = bins.get(index, 0) + payload
        if self.pcap is not None:
            self.pcap.write(frame, start)
        if self.outbox is None:
            self.events.push_source(done + self.delay_ns, self, frame)  # fire: _arrive
        else:  # the far end runs in the other process, which schedules the arrival
            self.outbox.append((done + self.delay_ns, frame))

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
        """The wire's event: ``frame`` arrives at the far end (:meth:`_arrive`)."""
        self._arrive(frame)

    def _arrive(self, frame: bytes) -> None:
        if not self.up:  # cut while the frame was on it
            self._drop("link_down", frame)
            return
        self.sink(self.dst_port, frame)  # type: ignore[misc]

    def _drop(self, reason: str, frame: bytes) -> None:
        self.drops[reason] = self.drops.get(reason, 0) + 1
        payload = data_bytes(frame)
        if payload:
            index = self.events.now // self.bin_ns
            self.lost_bins[index] = self.lost_bins.get(index, 0) + payload
        if self.on_drop is not None:
            self.on_drop(reason, frame)
