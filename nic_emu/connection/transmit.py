"""Sending data: the turn of one connection (:class:`Transmitter`: the windows, the
rate, pacing per port, no usable EV), and the data frames (:class:`DataTransmitter`:
built from the per-plane templates, each marking its port busy for its serialisation
time). Both return the frame they make, as (plane, frame); they take no outbox.
"""

from __future__ import annotations

from typing import Protocol

import cython

from mrc_wire.codec import DataPacket, encode_data
from nic_emu import event_log as ev_kinds
from nic_emu.congestion import CongestionControl
from nic_emu.connection.common import (
    DSCP_TRIMMABLE,
    DSCP_TRIMMABLE_RETX,
    READY,
    TS_MASK,
    Frame,
    QpStatus,
)
from nic_emu.connection.records import ConnectionCounters, ConnectionLog
from nic_emu.dcqcn import DcqcnRate
from nic_emu.ev_set import GOOD, EvEntry, EvSet
from nic_emu.exceptions import DataSourceError
from nic_emu.sender import PSN_MASK, SendState, TxPacket

if cython.compiled:  # the send time read as a C integer (nic_host.pxd)
    from cython.cimports.nic_emu.nic_host import nic_ns_ll

# the masks of a data packet's PSN and timestamp, as C integers on the native build
# (transmit.pxd): the masked values are made in C, one int object each
_PSN_MASK = PSN_MASK
_TS_MASK = TS_MASK
_NOW_LIMIT = 1 << 62  # a send time read as a C integer: an int of at most this
_INEXACT = -(1 << 63)  # nic_ns_ll's answer for anything else (NIC_NS_INEXACT)


class TransmitHost(Protocol):
    """What the data frames ask of the NIC: its ports' pacing (written per packet) and
    its per-plane transmit counts."""

    port_free_at: list[int]
    ns_per_byte: float
    plane_tx: list[int]


class DataTransmitter:
    """The data frames of one connection: the per-plane templates, the ports they keep
    busy, and when the last one left (``last_tx_ns``)."""

    def __init__(
        self,
        host: TransmitHost,
        templates: list[DataPacket],
        *,
        trace: bool,
        counters: ConnectionCounters,
        log: ConnectionLog,
        now: int,
    ) -> None:
        self.templates = templates
        self.port_free_at = host.port_free_at
        self.ns_per_byte = host.ns_per_byte
        self.plane_tx = host.plane_tx
        self.trace = trace  # log every data packet (NicConfig.trace_packets)
        self.counters = counters
        self.log = log
        self.last_tx_ns = now

    def release(self) -> None:
        """Drop the templates' views into the data of a destroyed QP."""
        for t in self.templates:
            t.payload = b""

    def transmit(self, pkt: TxPacket, entry: EvEntry, send: SendState, now: int) -> Frame:
        """``pkt`` on ``entry``'s EV: the (plane, frame) to send."""
        plane = entry.plane
        t = self.templates[plane]
        wr = pkt.wr
        offset = pkt.offset
        length = pkt.length
        rtx = pkt.transmissions > 0
        t.ev = entry.ev
        t.outer_dst = entry.wire
        t.psn = pkt.psn & _PSN_MASK
        t.va = wr.remote_va + offset
        t.rkey = wr.rkey
        t.dma_length = length
        t.payload = pkt.payload
        t.rtx = rtx
        t.dscp = DSCP_TRIMMABLE_RETX if rtx else DSCP_TRIMMABLE
        t.last = pkt.last
        t.ack_req = pkt.last or rtx
        n = _INEXACT
        if cython.compiled:
            n = nic_ns_ll(now, _NOW_LIMIT)
        # two's complement: C's & of a negative int is Python's
        t.timestamp = n & _TS_MASK if n != _INEXACT else now & TS_MASK
        frame = encode_data(t)
        size = len(frame)
        # Same rounding as the fabric's serialisation time, so the two never drift. The
        # host's ns per byte is a float (8e9 / the port rate): the product and its
        # truncation in C doubles on the native build, the same as int() of the float.
        ns_per_byte = self.ns_per_byte
        if type(ns_per_byte) is float:
            wire_ns = cython.cast(cython.longlong, size * cython.cast(cython.double, ns_per_byte))
        else:
            wire_ns = int(size * ns_per_byte)
        self.port_free_at[plane] = now + wire_ns
        self.last_tx_ns = now
        send.sent(pkt, entry, now)
        entry.tx_packets += 1
        entry.tx_bytes += length
        entry.last_tx_ns = now
        if entry.first_tx_ns < 0:
            entry.first_tx_ns = now
        counters = self.counters
        counters.tx_data += 1
        if rtx:
            counters.tx_rtx += 1
        self.plane_tx[plane] += 1
        if self.trace:
            self.log.record(
                now,
                ev_kinds.TX,
                plane=plane,
                ev=entry.ev,
                psn=pkt.psn,
                bytes=length,
                rtx=rtx,
            )
        return plane, frame


class Transmitter:
    """The send turn of one connection (:meth:`send_one`) and what holds it back: the
    congestion and receive windows, the DCQCN rate (``rate_wait_ns``, RoCE), a busy port
    (``pace_at``: when the port ``pace_plane`` frees; ``pace_fixed``: the EV that would go
    then is fixed), or no usable EV at all (``no_ev_since``). Frames are the
    :class:`DataTransmitter`'s (``frames``); the only call back to the queue pair is
    :class:`~nic_emu.connection.common.QpStatus`' (its state, and failing it when a
    WRITE's streamed data fails)."""

    def __init__(
        self,
        qp: QpStatus,
        frames: DataTransmitter,
        send: SendState,
        evs: EvSet,
        cc: CongestionControl,
        *,
        dcqcn: DcqcnRate | None,
        mtu: int,
        window: int,
    ) -> None:
        self.qp = qp
        self.frames = frames
        self.send = send
        self.evs = evs
        self.cc = cc
        self.dcqcn = dcqcn  # RoCE: the DCQCN rate (GoBackN's), read per packet
        self._mtu = mtu
        self._window = window
        # Read per packet by send_one: the ports' pacing list.
        self._port_free_at = frames.port_free_at
        self.rate_wait_ns: int | None = None  # the DCQCN rate holds the next packet until
        self.no_ev_since: int | None = None  # no usable EV since (None: there is one)
        self.pace_at: int | None = None  # a port becomes free for the next packet
        self.pace_plane = 0  # the port ``pace_at`` waits for, and whether the EV
        self.pace_fixed = False  # send_one would pick then is fixed (GOOD, next in turn)

    def stop(self) -> None:
        """The queue pair failed: nothing waits any more."""
        self.pace_at = None
        self.no_ev_since = None

    def on_timer(self, now: int) -> None:
        """Time passed: the waits that ended by ``now`` are over (the next
        :meth:`send_one` sends what the free port and the rate allow)."""
        if self.pace_at is not None and now >= self.pace_at:
            self.pace_at = None
        if self.rate_wait_ns is not None and now >= self.rate_wait_ns:
            self.rate_wait_ns = None

    def window_blocked(self) -> bool:
        """:meth:`send_one` would refuse at once, whatever the time: not READY, the
        congestion window is full, or nothing is queued that the receive window allows.
        Only an event on this connection (an acknowledgement, a timer, a post) changes it."""
        # The C fields first: the queue pair's state, an attribute of another object,
        # is read only when nothing else blocks (the answer is the same in any order).
        send = self.send
        inflight = send.inflight_bytes
        if (inflight and inflight + self._mtu > self.cc.cwnd) or self.rate_wait_ns is not None:
            return True
        if not send.rtx_heap and not (send.pending and self._room(send)):
            return True
        return self.qp.state is not READY

    def _room(self, send: SendState) -> bool:
        """New data fits the receive window (``next_psn - snd_una < window``): on C
        integers when the window is an int in range (the native build's)."""
        if cython.compiled:
            w = nic_ns_ll(self._window, _NOW_LIMIT)
            if w != _INEXACT:
                return send.next_psn - send.snd_una < w
        return send.next_psn - send.snd_una < self._window

    def send_one(self, now: int) -> Frame | None:
        """The next data packet, as (plane, frame), if the window, an EV and that EV's
        port allow it; None otherwise (``pace_at``, ``rate_wait_ns`` or ``no_ev_since``
        say what it waits for, if anything but an event).

        Ports are paced at ``port_rate_bps``: the EV set offers an EV on a plane whose
        port is free (:meth:`EvSet.pick`); when every port with an EV to offer is busy,
        the packet waits (``pace_at``) for the one that frees first, as a NIC's transmit
        scheduler would, so no queue builds up inside the NIC and no free port idles.
        """
        send = self.send
        inflight = send.inflight_bytes
        if inflight and inflight + self._mtu > self.cc.cwnd:
            return None
        if not send.rtx_heap and not (send.pending and self._room(send)):
            return None
        rate = self.dcqcn
        if rate is not None and rate.next_send_ns > now:
            self.rate_wait_ns = rate.next_send_ns  # RoCE: DCQCN's rate (a timer wakes us)
            return None
        entry = self.evs.pick(now, self._port_free_at)
        if entry is None:
            if self.no_ev_since is None:
                self.no_ev_since = now
            return None
        self.no_ev_since = None
        free_at = self._port_free_at[entry.plane]
        if free_at > now:
            # Every plane with an EV to offer has its port busy; this one frees first.
            self.evs.unpick()
            if self.pace_at is None or free_at < self.pace_at:
                self.pace_at = free_at
            self.pace_plane = entry.plane
            # A GOOD EV stays first in its plane: until that port is free or an event
            # touches this connection, every later call would end here the same way.
            self.pace_fixed = entry.state is GOOD
            return None
        try:
            pkt = send.next_packet()
        except DataSourceError as exc:  # the WRITE's streamed data failed: nothing to send
            self.evs.unpick()
            self.qp.fail("data_source", str(exc), now)
            return None
        if pkt is None:
            return None
        sent = self.frames.transmit(pkt, entry, send, now)
        if rate is not None:
            rate.on_sent(len(sent[1]), now)
        return sent
