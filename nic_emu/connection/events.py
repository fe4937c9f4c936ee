"""What a connection reports to its application through its host
(:meth:`ConnectionHost.emit <nic_emu.connection.host.ConnectionHost.emit>`): the RDMA
completion queue, roughly."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WriteCompleted:
    """Sender side: every packet of a posted WRITE was acknowledged."""

    qpn: int
    wr_id: int
    length: int
    t_ns: int


@dataclass(frozen=True, slots=True)
class WriteReceived:
    """Receiver side: every byte of a WRITE has been placed in ``rkey``'s region at
    [va, va+length). Messages are reported in PSN order, each exactly once."""

    qpn: int
    rkey: int
    va: int
    length: int
    first_psn: int
    last_psn: int
    t_ns: int


@dataclass(frozen=True, slots=True)
class ConnectionFailed:
    """The connection moved to the error state; ``pending_wr_ids`` never completed."""

    qpn: int
    reason: str
    message: str
    pending_wr_ids: tuple[int, ...]
    t_ns: int


AppEvent = WriteCompleted | WriteReceived | ConnectionFailed
