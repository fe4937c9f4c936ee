"""Transfers: RDMA WRITEs from one NIC to another, checked byte for byte at the receiver."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from nic_emu.config import TransportMode
from nic_emu.connection import Connection
from nic_emu.connection.host import ConnectionFailed, WriteCompleted, WriteReceived
from nic_emu.memory import MemoryRegion

TRANSPORTS = {"mrc": TransportMode.MRC, "roce": TransportMode.ROCE}


def transfer_payload(seed: int, transfer_id: int, nbytes: int) -> bytes:
    """The bytes a transfer sends: reproducible from the fabric seed and the transfer id
    (SHAKE-128 output: pseudo-random, and three times faster to make than ``randbytes``)."""
    return hashlib.shake_128(f"vfabric:{seed}:{transfer_id}".encode()).digest(nbytes)


def split_sizes(nbytes: int, messages: int) -> list[int]:
    base, extra = divmod(nbytes, messages)
    return [base + (1 if i < extra else 0) for i in range(messages)]


@dataclass
class Transfer:
    """One transfer and, once run, its results (see :attr:`as_dict`)."""

    id: int
    src: str
    dst: str
    nbytes: int
    messages: int
    transport: str
    start_ns: int
    background: bool = False
    data: bytes = b""
    sender: Connection | None = None
    receiver: Connection | None = None
    region: MemoryRegion | None = None
    wr_ids: list[int] = field(default_factory=list)
    message_offsets: list[tuple[int, int]] = field(default_factory=list)
    message_done_ns: list[int | None] = field(default_factory=list)  # acknowledged at sender
    message_received_ns: list[int | None] = field(default_factory=list)  # placed at receiver
    bytes_delivered: int = 0  # placed at the receiver (reported complete)
    bytes_verified: int = 0  # of those, equal to what was sent
    completion_ns: int | None = None
    failure: str | None = None

    @property
    def done(self) -> bool:
        return self.completion_ns is not None

    @property
    def finished(self) -> bool:
        """Done or failed: nothing more will happen to it."""
        return self.completion_ns is not None or self.failure is not None

    @property
    def intact(self) -> bool:
        return self.done and self.bytes_verified == self.nbytes

    def on_event(self, nic: str, event: object, now: int) -> None:
        if isinstance(event, WriteCompleted) and nic == self.src:
            index = self.wr_ids.index(event.wr_id) if event.wr_id in self.wr_ids else -1
            if index >= 0:
                self.message_done_ns[index] = event.t_ns
        elif isinstance(event, WriteReceived) and nic == self.dst:
            self._placed(event)
        elif isinstance(event, ConnectionFailed) and self.failure is None:
            self.failure = f"{nic}: {event.reason}: {event.message}"
        self._check_done(now)

    def _placed(self, event: WriteReceived) -> None:
        assert self.region is not None
        start = event.va - self.region.va
        for index, (offset, length) in enumerate(self.message_offsets):
            if offset == start and length == event.length:
                self.message_received_ns[index] = event.t_ns
                self.bytes_delivered += length
                got = bytes(self.region.buffer[offset : offset + length])
                if got == self.data[offset : offset + length]:
                    self.bytes_verified += length
                elif self.failure is None:
                    self.failure = f"message {index} arrived damaged (bytes differ from sent)"
                return
        if self.failure is None:
            self.failure = f"unexpected WRITE placed at va offset {start}, {event.length} bytes"

    def _check_done(self, now: int) -> None:
        if self.completion_ns is not None or self.failure is not None:
            return
        if all(t is not None for t in self.message_done_ns) and all(
            t is not None for t in self.message_received_ns
        ):
            self.completion_ns = max(
                max(t for t in self.message_done_ns if t is not None),
                max(t for t in self.message_received_ns if t is not None),
            )

    def as_dict(self, retransmitted_bytes: int = 0) -> dict[str, Any]:
        sender = self.sender.counters if self.sender is not None else {}
        receiver = self.receiver.counters if self.receiver is not None else {}
        return {
            "id": self.id,
            "src": self.src,
            "dst": self.dst,
            "bytes": self.nbytes,
            "messages": self.messages,
            "transport": self.transport,
            "background": self.background,
            "start_ns": self.start_ns,
            "completion_ns": self.completion_ns,
            "duration_ns": None
            if self.completion_ns is None
            else self.completion_ns - self.start_ns,
            "message_completion_ns": list(self.message_done_ns),
            "message_received_ns": list(self.message_received_ns),
            "bytes_delivered": self.bytes_delivered,
            "bytes_verified": self.bytes_verified,
            "intact": self.intact,
            "sha256": hashlib.sha256(self.data).hexdigest(),
            "retransmitted_packets": int(sender.get("tx_rtx", 0)),
            "retransmitted_bytes": retransmitted_bytes,
            "nacks_sent": int(receiver.get("tx_nack", 0)),
            "nacks_received": int(sender.get("rx_nack", 0)),
            "trimmed_received": int(receiver.get("rx_trimmed", 0)),
            "ecn_echo_received": int(sender.get("ecn_echo_rx", 0)),
            "failure": self.failure,
        }
