"""What one connection writes to the NIC's event log: every record names the NIC and
the QPN, and the records written from more than one place have one home here."""

from __future__ import annotations

from typing import Any

from nic_emu import event_log as ev_kinds
from nic_emu.ev_set import STATE_NAMES, EvEntry, EvState
from nic_emu.event_log import EventLog


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
            ev_kinds.EV_STATE,
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
