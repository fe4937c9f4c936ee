"""Switches and NICs of a virtual fabric: each has one way in, ``receive(port, frame)``,
and schedules its own events on the fabric's event list."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import cython

if cython.compiled:  # a NIC node's per-port and per-EV counters: C arrays (NicNode)
    from cython.cimports.cpython.long import PyLong_AsLongAndOverflow
    from cython.cimports.cpython.object import PyObject
    from cython.cimports.libc.stdlib import calloc, free, realloc
    from cython.cimports.vfabric.nodes import _HAS_DICT_VERSION, _dict_version

from mrc_wire.constants import ETH_LEN, IPPROTO_IPV6, IPV6_LEN
from mrc_wire.frames import (
    DATA_DSCP_MASK,
    DATA_HEADER_BYTES,
    NEXT_HEADER_OFFSET,
    RETX_DSCP,
    TRAFFIC_CLASS_OFFSET,
    TRIMMED_DSCP_MASK,
    frame_dqpn,
    frame_inner_dst,
)
from nic_emu.connection.host import AppEvent
from nic_emu.core import NicCore
from p4emu.switch import PortOutput, Switch
from vfabric.pfc import NicPause
from vfabric.wires import FrameSink, Wire

if TYPE_CHECKING:
    from vfabric.eventlist import EventList

ECN_CE = 3
#: a NIC node's ``_timer_at`` when no timer event is pending: below every deadline (a
#: deadline is a time, at or after the event list's start)
NO_TIMER = -(2**63)
_NO_TIMER = NO_TIMER
# C constants of the native build (nodes.pxd): a DSCP is 6 bits, so a set of DSCPs is a
# 64-bit mask (bit d: DSCP d is in it), tested with a shift instead of a set lookup
_ECN_CE = ECN_CE
_DATA_HEADER = DATA_HEADER_BYTES
_RETX_DSCP = RETX_DSCP
_DATA_DSCP_BITS = DATA_DSCP_MASK
_TRIMMED_DSCP_BITS = TRIMMED_DSCP_MASK
# where mrc_wire.frames.frame_outer reads a frame without an SRH: the outer IPv6 header's
# first word (version, traffic class, flow label), its next header, the UDP source port
_TC = TRAFFIC_CLASS_OFFSET
_NH = NEXT_HEADER_OFFSET
_SPORT = ETH_LEN + 2 * IPV6_LEN
_IPV6 = IPPROTO_IPV6
assert max(_TC + 3, _NH) < _SPORT  # _outer_fields reads below _SPORT + 2, checked first
#: compiled, a switch node's table of its out wires holds the ports below this (a port
#: at or past it, or a key that is not one, leaves out to be read with ``out.get``)
PORT_TABLE_MAX = 4096
_PORT_TABLE_MAX = PORT_TABLE_MAX


@cython.boundscheck(False)  # its reads are below _SPORT + 2 <= len(frame), checked first
@cython.wraparound(False)
def _outer_fields(frame: bytes) -> int:
    """:func:`mrc_wire.frames.frame_outer`'s (EV, DSCP, ECN) in one integer, ``ev << 8 |
    dscp << 2 | ecn``, or -1 where it gives None (an SRH, not IPv6 in IPv6, too short).
    Read byte by byte: compiled, C integers (the EV is 32 bits), no tuple and no int
    object per frame; ``tests/vfabric/test_nodes.py`` checks it against ``frame_outer``."""
    if len(frame) < _SPORT + 2 or frame[_NH] != _IPV6:
        return -1
    # compiled, a byte is a C int: widened to 64 bits (vtcfl, ev) before any shift past 23
    vtcfl = frame[_TC]
    vtcfl = vtcfl << 24 | frame[_TC + 1] << 16 | frame[_TC + 2] << 8 | frame[_TC + 3]
    ev = frame[_SPORT] << 8 | frame[_SPORT + 1]
    ev = ev << 16 | vtcfl & 0xFFFF
    return ev << 8 | (vtcfl >> 22 & 0x3F) << 2 | vtcfl >> 20 & 3


class SwitchNode(FrameSink):
    """A p4emu :class:`~p4emu.switch.Switch` on the shared virtual clock. Frames arrive
    through :meth:`receive` (ingress runs at once); departures from its traffic manager
    happen at their exact times, for which the node schedules its own wake-ups."""

    __slots__ = (
        "_armed",
        "_port_count",
        "_port_wires",
        "_ports_at",
        "_ports_of",
        "_wake_at",
        "_wake_count",
        "_wake_room",
        "events",
        "name",
        "out",
        "switch",
        "traversals",
        "unwired",
    )

    def __init__(self, events: EventList, name: str, switch: Switch) -> None:
        self.events = events
        self.name = name
        self.switch = switch
        self.out: dict[int, Wire] = {}
        self.traversals = 0
        self.unwired = 0  # frames sent to a port without a link (e.g. the CPU port)
        # The wake-up times pending (scheduled, not yet fired), in no order: the first
        # _wake_count of _wake_at, which has room for _wake_room. A switch has a few at a
        # time (at most 3 in the 256 KiB permutation), so a scan finds one: compiled, a C
        # array (no set operation per arm and per wake-up); pure, a list.
        self._wake_count = 0
        self._wake_room = 0
        if cython.compiled:
            self._wake_at = cython.NULL
        else:
            self._wake_at = []  # type: list[int]
        self._grow_wakes()
        #: the wake-up time armed last while it is still pending (in ``_wakes``), else -1:
        #: most arms repeat it, and then need no scan (nor, compiled, an int object)
        self._armed = -1
        # compiled, SwitchOutput.output's table of out (port -> wire, a C array read from
        # the dict again whenever it changed, by its version): no dict lookup per frame
        self._ports_of = None
        self._port_count = 0
        self._ports_at = 0
        if cython.compiled:
            self._port_wires = cython.NULL
        else:
            self._port_wires = None
        switch.output_sink = SwitchOutput(self)  # compiled: the switch calls it in C
        switch.packet_in_callback = self._packet_in

    def __dealloc__(self) -> None:
        if cython.compiled:
            free(self._wake_at)
            free(self._port_wires)

    def _grow_wakes(self) -> None:
        """Room for twice the pending wake-up times (the first time, 4)."""
        room = 2 * self._wake_room if self._wake_room else 4
        if cython.compiled:
            at = cython.cast(
                cython.p_longlong, realloc(self._wake_at, room * cython.sizeof(cython.longlong))
            )
            if at == cython.NULL:
                raise MemoryError(f"switch node {self.name}: no memory for {room} wake-ups")
            self._wake_at = at
        else:
            self._wake_at.extend([0] * (room - self._wake_room))
        self._wake_room = room

    @property
    @cython.locals(i=cython.Py_ssize_t)
    def _wakes(self) -> set[int]:
        """The wake-up times pending (a new set)."""
        return {self._wake_at[i] for i in range(self._wake_count)}

    def receive(self, port: int, frame: bytes) -> None:
        self.traversals += 1
        # inject_c and poll_c return the next departure, -1 for none (all empty): a
        # departure is a time on the fabric's clock, which starts at 0 and only goes
        # forward, so it is never negative. Compiled, C calls returning a C integer (no
        # int object per packet)
        due = self.switch.inject_c(port, frame)
        if due >= 0:  # else the usual case: the packet left at once
            self._wake_at_due(due)

    def _read_ports(self) -> None:
        """Compiled: read ``out`` into the table :meth:`SwitchOutput.output` looks ports
        up in, or leave it empty (``_port_count`` 0: ``out.get`` for every port, until
        ``out`` changes) when a key is not an int from 0 to PORT_TABLE_MAX - 1 or a value
        is neither a :class:`~vfabric.wires.Wire` nor None."""
        if cython.compiled:
            out = self.out
            self._ports_of = out  # read at this version: the table, or an empty one
            self._ports_at = _dict_version(out)
            self._port_count = 0
            count = 0
            for key, value in out.items():
                if type(key) is not int or not (value is None or isinstance(value, Wire)):
                    return
                overflow = 0
                p = PyLong_AsLongAndOverflow(key, cython.address(overflow))
                if overflow or not 0 <= p < _PORT_TABLE_MAX:
                    return
                if p >= count:
                    count = p + 1
            wires = cython.cast(
                cython.pointer(cython.pointer(PyObject)),
                realloc(self._port_wires, max(count, 1) * cython.sizeof(cython.pointer(PyObject))),
            )
            if wires == cython.NULL:
                raise MemoryError(f"switch node {self.name}: no memory for {count} ports")
            self._port_wires = wires
            for p in range(count):
                wires[p] = cython.NULL
            for key, value in out.items():
                if value is not None:
                    p = key  # checked above: an int from 0 to count - 1
                    wires[p] = cython.cast(cython.pointer(PyObject), value)
            self._port_count = count

    def _packet_in(self, payload: bytes, metadata: dict[str, int]) -> None:
        self.unwired += 1  # a punt to the CPU: no controller listens in a virtual fabric

    def _arm(self, due: int) -> None:
        """Wake up at ``due`` (now if overdue): :meth:`_wake_at_due`, for a caller in
        Python (the fabric's PFC resume, tests)."""
        self._wake_at_due(due)

    def _wake_at_due(self, due: int) -> None:
        """Wake up at ``due`` (the traffic manager's next departure; now if overdue)."""
        now = self.events.now
        if due < now:
            due = now
        if due == self._armed:
            return  # pending already
        self._armed = due
        count = self._wake_count
        for i in range(count):
            if self._wake_at[i] == due:
                return  # pending already
        if count == self._wake_room:
            self._grow_wakes()
        self._wake_at[count] = due
        self._wake_count = count + 1
        # fire_int: the wake-up; the per-packet path. The time stays a C integer in the
        # event list (compiled: no int object per wake-up)
        self.events.push_source_int(due, self, due)

    def fire(self, due: int) -> None:
        """The switch's event: its traffic manager's departure due at ``due``
        (:meth:`fire_int`)."""
        self.fire_int(due)

    def fire_int(self, due: int) -> None:
        """The switch's event as :meth:`_wake_at_due` schedules it (``push_source_int``:
        compiled, the time a C integer from the event list): ``due`` is no longer pending,
        and the traffic manager's departures due by now leave (its next one armed)."""
        count = self._wake_count
        for i in range(count):
            if self._wake_at[i] == due:  # no longer pending: the last one takes its place
                count -= 1
                self._wake_at[i] = self._wake_at[count]
                self._wake_count = count
                break
        if due == self._armed:
            self._armed = -1
        after = self.switch.poll_c()  # -1: none (receive)
        if after >= 0:
            self._wake_at_due(after)


class SwitchOutput(PortOutput):
    """Where a :class:`SwitchNode`'s switch sends the frames it transmits: the node's
    wire on that port (``node.out``). The switch's ``output_sink``, so that the compiled
    switch calls it through C (no bound method called through Python)."""

    __slots__ = ("node",)

    def __init__(self, node: SwitchNode) -> None:
        self.node = node

    def output(self, port: int, frame: bytes) -> None:
        """``frame`` onto the node's wire on ``port`` (``out.get(port)``; none: unwired)."""
        node = self.node
        if cython.compiled and _HAS_DICT_VERSION:
            # out's table (_read_ports) while out is the dict it was read from, unchanged
            if node.out is not node._ports_of or _dict_version(node.out) != node._ports_at:
                node._read_ports()
            if type(port) is int:
                overflow = 0
                p = PyLong_AsLongAndOverflow(port, cython.address(overflow))
                if not overflow and 0 <= p < node._port_count:
                    if node._port_wires[p] == cython.NULL:
                        node.unwired += 1
                        return
                    wire = cython.cast(Wire, node._port_wires[p])
                    wire.receive(frame)
                    return
        wire = node.out.get(port)
        if wire is None:
            node.unwired += 1
            return
        wire.receive(frame)


class EvStats:
    """Per (NIC, EV) counters: sent by the NIC (and lost on a wire on the way), and
    trimmed / CE-marked on arrival."""

    __slots__ = (
        "ce_marked",
        "data_bytes",
        "dropped",
        "rx_packets",
        "trimmed",
        "tx_bytes",
        "tx_packets",
    )

    def __init__(self) -> None:
        self.dropped = 0  # lost on a wire (link down, random loss, EV drop)
        self.tx_packets = 0
        self.tx_bytes = 0
        self.data_bytes = 0
        self.rx_packets = 0
        self.trimmed = 0
        self.ce_marked = 0

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}


def _new_stats() -> EvStats:
    """A new EvStats, all zero. Compiled, the type's own allocation, which zeroes its C
    counters (what ``__init__`` does), without a call through Python's call protocol;
    pure, ``EvStats()``."""
    if cython.compiled:
        return EvStats.__new__(EvStats)
    return EvStats()


# EvCounters' seven counters of an EV, in EvStats.__slots__' order (an EV's counters are
# _EV_FIELDS consecutive integers from its position times _EV_FIELDS)
_EV_FIELDS = 7
_CE_MARKED = 0
_DATA_BYTES = 1
_DROPPED = 2
_RX_PACKETS = 3
_TRIMMED = 4
_TX_BYTES = 5
_TX_PACKETS = 6
_FIB = 0x9E3779B97F4A7C15  # 2**64 / the golden ratio: Fibonacci hashing of an EV
# EVs an EvCounters has room for at first (doubled when full): a NIC meets hundreds of EVs
# (a connection's EV set), and each doubling moves and rehashes every EV met so far, so
# the first room is 256 (about 18 KiB a direction, a NIC's two: 36 KiB) rather than 16
_EV_FIRST = 256


class EvCounters:
    """One NIC node's per-EV counters in one direction (sent, or received): for every EV
    met, :class:`EvStats`' seven counters, the EVs in the order they were first met.
    Compiled, C arrays (the EVs, their counters) and an open-addressed table of
    positions, twice the EVs' room, found by Fibonacci hashing with linear probing: no
    int object nor dict lookup per frame and no EvStats per new EV. Pure, lists and a
    dict from EV to position. :meth:`stats` gives them as a dict of EvStats."""

    __slots__ = ("_cap", "_count", "_counts", "_evs", "_index", "_shift", "_slots")

    def __init__(self) -> None:
        self._count = 0  # EVs met
        if cython.compiled:
            self._cap = 0
            self._shift = 64
            self._evs = cython.NULL
            self._counts = cython.NULL
            self._slots = cython.NULL
            self._grow()
        else:
            self._evs = []  # type: list[int]
            self._counts = []  # type: list[int]
            self._index = {}  # type: dict[int, int]

    def __dealloc__(self) -> None:
        if cython.compiled:
            free(self._evs)
            free(self._counts)
            free(self._slots)

    def _grow(self) -> None:
        """Compiled: room for twice the EVs (the first time, _EV_FIRST), the table of
        positions rebuilt at twice that size."""
        if cython.compiled:
            cap = _EV_FIRST if self._cap == 0 else 2 * self._cap
            evs = cython.cast(
                cython.p_longlong, realloc(self._evs, cap * cython.sizeof(cython.longlong))
            )
            if evs == cython.NULL:
                raise MemoryError(f"no memory for {cap} EVs")
            self._evs = evs
            counts = cython.cast(
                cython.p_longlong,
                realloc(self._counts, cap * _EV_FIELDS * cython.sizeof(cython.longlong)),
            )
            if counts == cython.NULL:
                raise MemoryError(f"no memory for {cap} EVs")
            self._counts = counts
            slots = cython.cast(cython.p_int, calloc(2 * cap, cython.sizeof(cython.int)))
            if slots == cython.NULL:
                raise MemoryError(f"no memory for {cap} EVs")
            free(self._slots)
            self._slots = slots
            self._cap = cap
            self._shift = 64  # the top log2(2 * cap) bits of ev * _FIB pick a slot
            size = 1
            while size < 2 * cap:
                size *= 2
                self._shift -= 1
            mask = 2 * cap - 1
            for i in range(self._count):
                h = cython.cast(cython.ulonglong, evs[i]) * _FIB >> self._shift
                while slots[h]:
                    h = (h + 1) & mask
                slots[h] = i + 1

    def _find(self, ev: int) -> int:
        """The position of ``ev``'s counters (its index among the EVs met), the EV added
        with all its counters zero if it is met for the first time."""
        if cython.compiled:
            mask = 2 * self._cap - 1
            h = cython.cast(cython.ulonglong, ev) * _FIB >> self._shift
            slots = self._slots
            while slots[h]:  # a slot holds a position + 1, 0: free
                i = slots[h] - 1
                if self._evs[i] == ev:
                    return i
                h = (h + 1) & mask
            i = self._count
            if i == self._cap:  # full (the table half full): twice the room, probe again
                self._grow()
                mask = 2 * self._cap - 1
                h = cython.cast(cython.ulonglong, ev) * _FIB >> self._shift
                slots = self._slots
                while slots[h]:
                    h = (h + 1) & mask
            slots[h] = i + 1
            self._evs[i] = ev
            counts = self._counts
            for k in range(i * _EV_FIELDS, (i + 1) * _EV_FIELDS):
                counts[k] = 0
            self._count = i + 1
            return i
        found = self._index.get(ev)
        if found is None:
            found = self._index[ev] = self._count
            self._evs.append(ev)
            self._counts.extend([0] * _EV_FIELDS)
            self._count = found + 1
        return found

    def stats(self) -> dict[int, EvStats]:
        """EV -> a new :class:`EvStats` with its counters, in the order the EVs were
        first met."""
        result: dict[int, EvStats] = {}
        counts = self._counts
        for i in range(self._count):
            k = i * _EV_FIELDS
            s = _new_stats()
            s.ce_marked = counts[k + _CE_MARKED]
            s.data_bytes = counts[k + _DATA_BYTES]
            s.dropped = counts[k + _DROPPED]
            s.rx_packets = counts[k + _RX_PACKETS]
            s.trimmed = counts[k + _TRIMMED]
            s.tx_bytes = counts[k + _TX_BYTES]
            s.tx_packets = counts[k + _TX_PACKETS]
            result[self._evs[i]] = s
        return result


AppSink = Callable[[str, AppEvent], None]


class NicNode(FrameSink):
    """A :class:`nic_emu.core.NicCore` driven as the driver contract
    (:func:`nic_emu.core.service`) says: frames in through :meth:`receive`, frames out on
    the wire of their plane, one timer."""

    __slots__ = (
        "_bin_ns",
        "_ev_rx",
        "_ev_tx",
        "_open_bin",
        "_open_bytes",
        "_placed",
        "_ports",
        "_rx_bytes",
        "_timer_at",
        "app_sink",
        "core",
        "events",
        "name",
        "pfc",
        "retx_bytes",
        "uplinks",
    )

    @cython.locals(ports=cython.Py_ssize_t, p=cython.Py_ssize_t)
    def __init__(
        self, events: EventList, core: NicCore, app_sink: AppSink, bin_ns: int = 10_000
    ) -> None:
        self.events = events
        self.core = core
        self.name = core.name
        self.uplinks: list[Wire | None] = [None] * core.plane_count
        self.app_sink = app_sink
        #: the core's deadline the node's pending timer event is for; NO_TIMER: none
        self._timer_at = _NO_TIMER
        self._ev_tx = EvCounters()  # EVs this NIC sends on (as the frames carry them)
        self._ev_rx = EvCounters()  # EVs of frames that arrive here
        # (receiver's inner address, receiver's QPN) -> retransmitted payload bytes: the
        # receiver's QPN alone is not unique across the peers of a NIC
        self.retx_bytes: dict[tuple[bytes, int], int] = {}
        self.pfc: NicPause | None = None  # set when the fabric runs PFC (vfabric.pfc)
        self._bin_ns = bin_ns
        # Per port (plane): the data payload bytes that arrived (rx_data_bytes) and the
        # time bin being counted for placed_bins (-1: none yet) with its bytes. A port's
        # bins come in time order, so a bin is closed (put in _placed) when the port's
        # first placement in a later bin arrives; placed_bins adds the open ones. Compiled,
        # C arrays (no int object, tuple or dict operation per frame); pure, lists.
        ports = core.plane_count
        self._ports = ports
        #: (plane, time bin) -> payload bytes placed for the application, closed bins
        self._placed: dict[tuple[int, int], int] = {}
        if cython.compiled:
            self._rx_bytes = cython.cast(
                cython.p_longlong, calloc(max(ports, 1), cython.sizeof(cython.longlong))
            )
            self._open_bytes = cython.cast(
                cython.p_longlong, calloc(max(ports, 1), cython.sizeof(cython.longlong))
            )
            self._open_bin = cython.cast(
                cython.p_longlong, calloc(max(ports, 1), cython.sizeof(cython.longlong))
            )
            if (
                self._rx_bytes == cython.NULL
                or self._open_bytes == cython.NULL
                or self._open_bin == cython.NULL
            ):
                raise MemoryError(f"NIC node {self.name}: no memory for {ports} ports")
        else:
            self._rx_bytes = [0] * ports
            self._open_bytes = [0] * ports
            self._open_bin = [0] * ports
        for p in range(ports):
            self._open_bin[p] = -1

    @property
    def ev_tx(self) -> dict[int, EvStats]:
        """EV -> what this NIC sent on it (as its frames carry it) and what of that was
        lost on a wire (:meth:`count_drop`), in the order the EVs were first met: a new
        dict of new EvStats."""
        return self._ev_tx.stats()

    @property
    def ev_rx(self) -> dict[int, EvStats]:
        """EV -> the frames that arrived here carrying it (trimmed, CE-marked), in the
        order the EVs were first met: a new dict of new EvStats."""
        return self._ev_rx.stats()

    def count_drop(self, ev: int) -> None:
        """A frame this NIC sent on ``ev`` was lost on a wire (link down, random loss, EV
        drop): its ``dropped`` count in :attr:`ev_tx`."""
        counters = self._ev_tx
        i = counters._find(ev) * _EV_FIELDS
        counters._counts[i + _DROPPED] += 1

    @property
    @cython.locals(p=cython.Py_ssize_t)
    def rx_data_bytes(self) -> list[int]:
        """Per port (plane): data payload bytes that arrived on it, every data frame
        (duplicates and frames dropped out of order included)."""
        return [self._rx_bytes[p] for p in range(self._ports)]

    @property
    @cython.locals(p=cython.Py_ssize_t, index=cython.longlong)
    def placed_bins(self) -> dict[tuple[int, int], int]:
        """(plane, time bin) -> payload bytes placed for the application: each byte once
        (goodput), where :attr:`rx_data_bytes` counts every data frame that arrived. A
        new dict: the closed bins, then each port's open one."""
        bins = dict(self._placed)
        for p in range(self._ports):
            index = self._open_bin[p]
            if index >= 0:
                key = (p, index)
                bins[key] = bins.get(key, 0) + self._open_bytes[p]
        return bins

    def __dealloc__(self) -> None:
        if cython.compiled:
            free(self._rx_bytes)
            free(self._open_bytes)
            free(self._open_bin)

    def receive(self, port: int, frame: bytes) -> None:
        fields = _outer_fields(frame)
        if fields >= 0:
            ev = fields >> 8
            dscp = fields >> 2 & 0x3F
            counters = self._ev_rx
            i = counters._find(ev) * _EV_FIELDS
            counts = counters._counts  # after _find, which may move it
            counts[i + _RX_PACKETS] += 1
            if _TRIMMED_DSCP_BITS >> dscp & 1:  # dscp in TRIMMED_DSCPS
                counts[i + _TRIMMED] += 1
            elif fields & 3 == _ECN_CE:
                counts[i + _CE_MARKED] += 1
            if _DATA_DSCP_BITS >> dscp & 1 and len(frame) > _DATA_HEADER:  # in DATA_DSCPS
                # data_bytes(frame), inlined: _outer_fields already checked the next header,
                # and a frame without an EV (not IPv6-in-IPv6) carries no data
                p = port  # a list's index: from the end when negative
                if p < 0:
                    p += self._ports
                if not 0 <= p < self._ports:
                    raise IndexError("list index out of range")
                self._rx_bytes[p] += len(frame) - _DATA_HEADER
        core = self.core
        before = core.placed_bytes
        now = self.events.now
        # the time as the int object the event list already has (no new one per frame)
        core.receive_frame(frame, port, self.events.now_object())
        placed = core.placed_bytes - before
        if placed:  # receive_frame placed nothing unless 0 <= port < plane_count
            p = port
            index = now // self._bin_ns
            if self._open_bin[p] != index:  # the port's open bin closes, this one opens
                if self._open_bin[p] >= 0:
                    key = (p, self._open_bin[p])
                    bins = self._placed
                    bins[key] = bins.get(key, 0) + self._open_bytes[p]
                self._open_bin[p] = index
                self._open_bytes[p] = 0
            self._open_bytes[p] += placed
        self.service()

    def _transmit(self, plane: int, frame: bytes) -> None:
        fields = _outer_fields(frame)
        if fields >= 0:
            ev = fields >> 8
            dscp = fields >> 2 & 0x3F
            counters = self._ev_tx
            i = counters._find(ev) * _EV_FIELDS
            counts = counters._counts  # after _find, which may move it
            size = len(frame)
            counts[i + _TX_PACKETS] += 1
            counts[i + _TX_BYTES] += size
            if _DATA_DSCP_BITS >> dscp & 1 and size > _DATA_HEADER:  # data_bytes(frame), inlined
                payload = size - _DATA_HEADER
                counts[i + _DATA_BYTES] += payload
                if dscp == _RETX_DSCP:
                    key = (frame_inner_dst(frame), frame_dqpn(frame))
                    self.retx_bytes[key] = self.retx_bytes.get(key, 0) + payload
        uplinks = self.uplinks
        # compiled, an int plane within the list read in C (as SwitchOutput.output reads
        # a port): no index conversion through Python's protocol per frame; any other
        # plane (negative, past the list, not an int) as the pure path indexes it
        if cython.compiled and type(plane) is int:
            overflow = 0
            p = PyLong_AsLongAndOverflow(plane, cython.address(overflow))
            if not overflow and 0 <= p < len(uplinks):
                wire = uplinks[p]
            else:
                wire = uplinks[plane]
        else:
            wire = uplinks[plane]
        if wire is not None:
            pfc = self.pfc
            if pfc is not None:
                pfc.enqueue(plane, frame)
                self._pfc_drain(plane)
                return
            wire.receive(frame)

    def pfc_pause(self, plane: int, priority: int, pause: bool) -> None:
        """A pause (or resume) frame from the T0 on ``plane`` (vfabric.pfc)."""
        pfc = self.pfc
        assert pfc is not None
        if pause:
            pfc.paused[plane] |= 1 << priority
        else:
            pfc.paused[plane] &= ~(1 << priority)
            self._pfc_drain(plane)

    def _pfc_drain(self, plane: int) -> None:
        """PFC: waiting frames onto the wire, one whenever it is free."""
        pfc = self.pfc
        wire = self.uplinks[plane]
        assert pfc is not None and wire is not None
        if pfc.draining[plane]:
            return  # a wake-up is already due when the wire is free
        while True:
            if wire.busy_until > self.events.now:
                if pfc.waiting(plane):
                    pfc.draining[plane] = True
                    self.events.push(wire.busy_until, self._pfc_wake, plane)
                return
            frame = pfc.next_frame(plane)
            if frame is None:
                return
            wire.receive(frame)

    def _pfc_wake(self, plane: int) -> None:
        assert self.pfc is not None
        self.pfc.draining[plane] = False
        self._pfc_drain(plane)

    def service(self) -> None:
        """Flush the core's frames onto the wires and (re)arm its timer."""
        now = self.events.now
        core = self.core
        # nic_emu.core.service (the driver contract) inlined, in its order: the frames to
        # send, then the next deadline, then the application's events; compiled, C calls
        # (no call through Python, no bound method, no tuple per service), the time the
        # event list's int object (no new one per service)
        for plane, frame in core.frames_to_send(self.events.now_object()):
            self._transmit(plane, frame)
        deadline = core.next_timer()
        if core.has_events():  # events() makes a list even when there is none
            for event in core.events():
                self.app_sink(self.name, event)
        if deadline is not None:
            at = deadline  # compiled, a C integer: compared, and the event's, in C
            if at != self._timer_at:
                self._timer_at = at
                # fire_int: the timer, the deadline a C integer in the event list
                self.events.push_source_int(at if at > now else now, self, at)

    def fire(self, deadline: int) -> None:
        """The NIC's event: its core's timer set for ``deadline`` (:meth:`fire_int`)."""
        self.fire_int(deadline)

    def fire_int(self, deadline: int) -> None:
        """The NIC's event as :meth:`service` schedules it (``push_source_int``: compiled,
        the deadline a C integer from the event list): the core's timer, unless a later
        :meth:`service` superseded this deadline."""
        if self._timer_at != deadline:
            return  # superseded by a later service()
        self._timer_at = _NO_TIMER
        self.core.handle_timer(self.events.now_object())
        self.service()

    def set_port(self, plane: int, up: bool) -> None:
        self.core.set_port_state(plane, up, self.events.now)
        self.service()
