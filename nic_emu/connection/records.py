"""What one connection records: its counters (:class:`ConnectionCounters`, one object
its parts share; their base :class:`Counters` is also the NIC's, ``NicCore.counters``)
and what it writes to the NIC's event log (:class:`ConnectionLog`: every record names
the NIC and the QPN, and the records written from more than one place have one home
here)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import cython

from nic_emu import event_log as ev_kinds
from nic_emu.ev_set import STATE_NAMES, EvEntry, EvState
from nic_emu.event_log import EventLog

#: a connection's counters, in this order (``Connection.counters``, in
#: ``NicCore.snapshot()``)
COUNTERS = (
    "tx_data",
    "tx_rtx",
    "tx_sack",
    "tx_nack",
    "tx_probe",
    "rx_data",
    "rx_dup",
    "rx_out_of_order",
    "rx_out_of_window",
    "rx_trimmed",
    "rx_trimmed_ignored",
    "rx_access_error",
    "rx_sack",
    "rx_nack",
    "rx_nack_stale",
    "rx_bad_ack",
    "ecn_echo_rx",
    "losses_reorder",
    "losses_timeout",
    "losses_port",
    "losses_path",
    "paths_shared",
    "losses_tail_probe",
    "losses_overtaken",
    "tx_tail_probe",
    "path_suspects",
    "path_suspects_cleared",
    "rto_silent",
    "gobackn_rewinds",
    "sack_no_path",
    "bytes_placed",
    "writes_completed",
    "writes_received",
)


#: the kind of :meth:`ConnectionLog.ev_state`'s records, bound once (a module global
#: of this module, not the event log module's attribute looked up at each change)
_EV_STATE = ev_kinds.EV_STATE


class Counters:
    """Named counters, one attribute each (a C integer field on the native build, in the
    subclass's .pxd), counted in by the code that owns them (``counters.rx_data += 1``).
    Read, and written by name, as a mapping of the subclass's :attr:`NAMES` in that
    order, live (``counters["rx_data"]``, ``dict(counters)``: what a
    ``dict.fromkeys(NAMES, 0)`` gave before); no name is added or removed."""

    __slots__ = ()
    NAMES = ()  # the subclass gives its names, in order (a tuple of str)

    def __init__(self) -> None:
        for name in self.NAMES:
            setattr(self, name, 0)

    def as_dict(self) -> dict[str, int]:
        """The counters now, as a new dict (in :attr:`NAMES` order)."""
        return {name: getattr(self, name) for name in self.NAMES}

    def __getitem__(self, name: str) -> int:
        if name not in self.NAMES:
            raise KeyError(name)
        return getattr(self, name)  # type: ignore[no-any-return]

    def __setitem__(self, name: str, value: int) -> None:
        if name not in self.NAMES:
            raise KeyError(name)
        setattr(self, name, value)

    def __contains__(self, name: object) -> bool:
        return name in self.NAMES

    def __iter__(self) -> Iterator[str]:
        return iter(self.NAMES)

    def __len__(self) -> int:
        return len(self.NAMES)

    def keys(self) -> Any:
        return self.as_dict().keys()

    def values(self) -> Any:
        return self.as_dict().values()

    def items(self) -> Any:
        return self.as_dict().items()

    def get(self, name: str, default: Any = None) -> Any:
        return getattr(self, name) if name in self.NAMES else default

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Counters):
            return self.as_dict() == other.as_dict()
        if isinstance(other, Mapping):
            return self.as_dict() == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dict it reads as

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.as_dict()!r})"


Mapping.register(Counters)


class ConnectionCounters(Counters):
    """A connection's counters (:data:`COUNTERS`), one object its parts share."""

    __slots__ = COUNTERS
    NAMES = COUNTERS

    def __init__(self) -> None:
        # On the native build every counter is a C integer field (records.pxd), zero
        # when the object is made: the base's 33 setattr calls would write zeros again
        # (7.6 k instructions a connection). The pure build's slots start empty.
        if not cython.compiled:
            Counters.__init__(self)


class ConnectionLog:
    """The event log as connection ``qpn`` of NIC ``nic`` writes to it."""

    __slots__ = ("log", "nic", "qpn")

    def __init__(self, log: EventLog, nic: str, qpn: int) -> None:
        self.log = log
        self.nic = nic
        self.qpn = qpn

    def record(self, now: int, kind: str, **detail: Any) -> None:
        self.log.record(now, self.nic, kind, qpn=self.qpn, **detail)

    def about_ev(self, now: int, kind: str, e: EvEntry, **detail: Any) -> None:
        """Log ``kind`` about ``e``, one of the connection's EVs (its plane and EV)."""
        self.log.record(now, self.nic, kind, qpn=self.qpn, plane=e.plane, ev=e.ev, **detail)

    def ev_state(self, now: int, e: EvEntry, old: EvState, new: EvState, reason: str) -> None:
        """Log ``e``'s change of state (``ev_state``: the two states' names, why, and when
        ``e`` last carried a packet): :meth:`about_ev`'s record, written without its
        keywords (the EV set's every change of state, called in C on the native build)."""
        self.log.record(
            now,
            self.nic,
            _EV_STATE,
            qpn=self.qpn,
            plane=e.plane,
            ev=e.ev,
            old=STATE_NAMES[old],
            new=STATE_NAMES[new],
            reason=reason,
            last_tx_ns=e.last_tx_ns,
        )

    def retransmit(self, now: int, psn: int, reason: str, **detail: Any) -> None:
        """PSN ``psn`` (or, go-back-N, every PSN from it: ``packets``) is queued again."""
        self.log.record(
            now, self.nic, ev_kinds.RETRANSMIT, qpn=self.qpn, psn=psn, reason=reason, **detail
        )
