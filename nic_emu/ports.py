"""What the serving loop needs from a NIC port driver (one port per plane).

A port moves whole Ethernet frames between one plane of the NIC and the outside: a
loopback-UDP link (:mod:`nic_emu.udp_driver`) or a Linux interface through AF_PACKET
(:mod:`nic_emu.afpacket_driver`). Drivers are thin and non-blocking; every protocol
decision stays in :class:`nic_emu.core.NicCore`, and the serving loop
(:mod:`nic_emu.process`) turns readiness into ``receive_frame`` / ``service`` calls.
"""

from __future__ import annotations

from typing import Protocol

MAX_FRAME = 65535
SOCKET_BUFFER_BYTES = 4 * 1024 * 1024  # a few windows of 4 KB frames per port


class PortDriver(Protocol):
    """One NIC port. ``counters`` holds at least ``tx_frames``, ``tx_lost``,
    ``rx_frames``."""

    plane: int
    description: str
    counters: dict[str, int]

    def fileno(self) -> int: ...

    def send(self, frame: bytes) -> bool:
        """Put one frame on the wire; False if it was lost (peer absent, buffer full)."""
        ...

    def receive(self) -> bytes | None:
        """One waiting frame, or None if none is waiting (never blocks)."""
        ...

    def close(self) -> None: ...


def new_counters() -> dict[str, int]:
    return {"tx_frames": 0, "tx_lost": 0, "rx_frames": 0}
