"""One direction of a link: serialisation at the link rate, propagation delay, faults.

A :class:`Wire` has one way in, :meth:`Wire.receive` (a frame put on the wire now). The
frame occupies the wire for ``8 * len / rate`` and arrives ``delay`` later at the far
end's one way in (``sink(port, frame)``). Switch egress frames have already been spaced by
the switch's traffic manager draining at this same rate, so they never wait here; a NIC's
frames wait behind each other (the NIC's transmit queue is host memory, unbounded).
"""

from __future__ import annotations

import struct
from abc import ABC, abstractmethod
from collections.abc import Callable
from heapq import heappush
from typing import TYPE_CHECKING

from mrc_wire import header_length
from mrc_wire.constants import ETH_LEN, IPPROTO_IPV6, IPV6_LEN, Dscp

if TYPE_CHECKING:
    from vfabric.eventlist import EventList
    from vfabric.pcap import NsPcapWriter

NS_PER_S = 1_000_000_000
_NS_BITS = 8 * NS_PER_S  # size * _NS_BITS / rate: the serialisation time in ns
DATA_HEADER_BYTES = header_length(0)  # a data packet without an SRH: payload follows
DATA_DSCPS = frozenset({int(Dscp.TRIMMABLE), int(Dscp.TRIMMABLE_RETX), int(Dscp.NO_TRIM)})
TRIMMED_DSCPS = frozenset({int(Dscp.TRIMMED), int(Dscp.TRIMMED_LASTHOP)})
RETX_DSCP = int(Dscp.TRIMMABLE_RETX)
_TC = ETH_LEN  # version / traffic class / flow label
_NH = ETH_LEN + 6
_UDP_SPORT = ETH_LEN + 2 * IPV6_LEN
_INNER_SRC = ETH_LEN + IPV6_LEN + 8
_INNER_DST = _INNER_SRC + 16
_DQPN = ETH_LEN + 2 * IPV6_LEN + 8 + 5  # BTH destination QP (24 bits)
# From the outer IPv6 header: version / traffic class / flow label, next header, and the
# UDP source port of the inner header that follows it when there is no SRH.
_OUTER = struct.Struct(f"!I2xB{_UDP_SPORT - ETH_LEN - 7}xH")

Sink = Callable[[int, bytes], None]
LinkKey = tuple[str, str]  # a link, by the topology's (lower, upper) node names


class PacketFilter(ABC):
    """Installed on a wire (by a fault, :mod:`vfabric.faults`): ``drops(frame)`` decides,
    ``reason`` names the drop. The wire knows only this interface, never the faults."""

    __slots__ = ("reason",)

    @abstractmethod
    def drops(self, frame: bytes) -> bool:
        """True if ``frame`` is dropped (counted under ``reason``)."""


def frame_outer(frame: bytes) -> tuple[int, int, int] | None:
    """(EV, DSCP, ECN) of a frame without an SRH, in one unpack (None for anything else:
    a frame with an SRH, or not IPv6 in IPv6, or too short)."""
    if len(frame) < _UDP_SPORT + 2:
        return None
    vtcfl, nh, sport = _OUTER.unpack_from(frame, ETH_LEN)
    if nh != IPPROTO_IPV6:
        return None
    return sport << 16 | vtcfl & 0xFFFF, vtcfl >> 22 & 0x3F, vtcfl >> 20 & 3


def frame_dscp(frame: bytes) -> int:
    return ((frame[ETH_LEN] & 0x0F) << 2) | (frame[ETH_LEN + 1] >> 6)


def frame_ev(frame: bytes) -> int | None:
    """The EV a frame carries (UDP source port : outer flow label low 16 bits)."""
    fields = frame_outer(frame)
    return None if fields is None else fields[0]


def frame_inner_src(frame: bytes) -> bytes:
    """The inner IPv6 source address (the sending NIC's), frames without an SRH."""
    return frame[_INNER_SRC : _INNER_SRC + 16]


def frame_inner_dst(frame: bytes) -> bytes:
    """The inner IPv6 destination address (the receiving NIC's port), frames without an SRH."""
    return frame[_INNER_DST : _INNER_DST + 16]


def frame_dqpn(frame: bytes) -> int:
    return int.from_bytes(frame[_DQPN : _DQPN + 3], "big")


def data_bytes(frame: bytes) -> int:
    """RDMA payload bytes of a data frame (0 for anything else, trimmed headers included)."""
    if len(frame) <= DATA_HEADER_BYTES or frame[_NH] != IPPROTO_IPV6:
        return 0
    if frame_dscp(frame) not in DATA_DSCPS:
        return 0
    return len(frame) - DATA_HEADER_BYTES


class Wire:
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
        "next_sequence",
        "on_drop",
        "pcap",
        "plane",
        "queue",
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
        self.events = events
        self.queue = events.queue  # see EventList: a wire pushes its arrivals itself
        self.next_sequence = events.sequence
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
        heappush(self.queue, (done + self.delay_ns, self.next_sequence(), self._arrive, frame))

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
