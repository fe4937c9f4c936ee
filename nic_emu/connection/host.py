"""What a connection exchanges with the NIC that hosts it (h11-style: the connection
knows its host only through this protocol, so it never imports the core).

The connection reports to its application through :meth:`ConnectionHost.emit` with the
events below (the RDMA completion queue, roughly); everything else it asks of its host
is addresses and paths, shared per-NIC state (ports, what was heard from each peer), the
outbox and the event log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from nic_emu.config import NicConfig
from nic_emu.ev_set import EvEntry
from nic_emu.event_log import EventLog
from nic_emu.memory import MemoryTable
from topologies import AddressPlan, Path


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


EvRoute = tuple[int, tuple[int, str | None], bytes]  # plane, path key (plane, T1), carrier


class ConnectionHost(Protocol):
    """The NIC a :class:`~nic_emu.connection.Connection` belongs to
    (:class:`nic_emu.core.NicCore`)."""

    # -- identity and configuration
    name: str
    seed: int
    config: NicConfig
    plan: AddressPlan
    plane_count: int
    memory: MemoryTable
    # -- per-plane addresses and port state
    addrs: list[bytes]
    macs: list[bytes]
    gateway_macs: list[bytes]
    port_up: list[bool]
    port_status_bits: int
    port_free_at: list[int]  # data transmit pacing per port
    ns_per_byte: float
    plane_tx: list[int]
    placed_bytes: int  # payload placed for the applications (each byte once), all QPs
    # -- what was heard from each peer, the outbox and the log
    peer_heard_ns: dict[str, int]
    out: list[tuple[int, bytes]]
    log: EventLog
    trace_packets: bool

    def emit(self, event: AppEvent) -> None:
        """Hand an event to the application (a failure also takes the connection out of
        the host's scheduling)."""
        ...

    def wake(self, qpn: int) -> None:
        """An application call changed connection ``qpn``: it may have something to send
        and its deadline may have moved."""
        ...

    def drop(self, now: int, reason: str, plane: int | None, **detail: object) -> None:
        """Count and log a received packet that was dropped."""
        ...

    def path(self, peer: str, ev: int) -> Path: ...

    def ev_route(self, peer: str, ev: int) -> EvRoute:
        """(plane, path key, carrier bytes) of ``ev``'s path to ``peer``."""
        ...

    def path_or_none(self, peer: str, ev: int) -> bytes | None:
        """The carrier address of ``ev``'s path to ``peer``, None if it has none."""
        ...

    def path_key(self, ev: int) -> int: ...

    def plan_ev_plane(self, ev: int) -> int: ...

    def peer_port_up(self, peer: str) -> list[bool]: ...

    def note_peer_ports(self, peer: str, bits: int, now: int) -> None: ...

    def heard_from(self, peer: str, ev: int, now: int) -> None: ...

    def path_heard_ns(self, peer: str, key: int) -> int: ...

    def register_probe(self, qpn: int, entry: EvEntry) -> int:
        """A probe id for an EV probe of connection ``qpn`` (its answer comes back to
        :meth:`Connection.on_probe_answer <nic_emu.connection.Connection.on_probe_answer>`)."""
        ...

    def forget_probe(self, probe_id: int) -> None: ...

    def path_failed(self, qpn: int, path: object, now: int, *, retired: bool) -> None:
        """Connection ``qpn`` retired ``path`` (plane, T1) on its own evidence (or, with
        ``retired`` False, lost a first packet on it): retire it in the connections whose
        paths cross the same failed element, once the evidence shows which."""
        ...
