"""What a connection exchanges with the NIC that hosts it (h11-style: the connection
knows its host only through these protocols, so it never imports the core).

The connection reports to its application through ``emit`` with the events of
:mod:`nic_emu.connection.events` (the RDMA completion queue, roughly). Each part of the
connection states what it asks of the host in its own protocol
(:class:`~nic_emu.connection.ev_layout.RouteHost`,
:class:`~nic_emu.connection.receive.ReceiveHost`,
:class:`~nic_emu.connection.reverse.ReverseHost`,
:class:`~nic_emu.connection.templates.TemplateHost`,
:class:`~nic_emu.connection.probes.ProbeHost`,
:class:`~nic_emu.connection.transmit.TransmitHost`,
:class:`~nic_emu.connection.feedback.FeedbackHost`,
:class:`~nic_emu.connection.timers.DeadlineHost`,
:class:`~nic_emu.connection.repath.RepathHost`); :class:`ConnectionHost` is their union
with what building a connection reads and its application calls' ``wake``. Frames never
go through the host: every call that may send returns the frames it made.
"""

from __future__ import annotations

from typing import Protocol

from nic_emu.config import NicConfig
from nic_emu.connection.ev_layout import EvRoute, RouteHost
from nic_emu.connection.events import AppEvent, ConnectionFailed, WriteCompleted, WriteReceived
from nic_emu.connection.feedback import FeedbackHost
from nic_emu.connection.probes import ProbeHost
from nic_emu.connection.receive import ReceiveHost
from nic_emu.connection.repath import RepathHost
from nic_emu.connection.reverse import ReverseHost
from nic_emu.connection.templates import TemplateHost
from nic_emu.connection.timers import DeadlineHost
from nic_emu.connection.transmit import TransmitHost
from nic_emu.event_log import EventLog
from nic_emu.memory import MemoryTable

__all__ = [
    "AppEvent",
    "ConnectionFailed",
    "ConnectionHost",
    "EvRoute",
    "WriteCompleted",
    "WriteReceived",
]


class ConnectionHost(
    RouteHost,
    ReceiveHost,
    ReverseHost,
    TemplateHost,
    ProbeHost,
    TransmitHost,
    FeedbackHost,
    DeadlineHost,
    RepathHost,
    Protocol,
):
    """The NIC a :class:`~nic_emu.connection.Connection` belongs to
    (:class:`nic_emu.core.NicCore`)."""

    # -- read once, when the connection is built
    seed: int
    config: NicConfig
    memory: MemoryTable
    log: EventLog

    def wake(self, qpn: int) -> None:
        """An application call changed connection ``qpn``: it may have something to send
        and its deadline may have moved."""
        ...
