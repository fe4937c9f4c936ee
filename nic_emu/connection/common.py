"""Constants and small types shared by the modules of :mod:`nic_emu.connection`."""

from __future__ import annotations

import enum
from typing import Protocol

from mrc_wire.constants import Dscp, Ecn, NackReason
from nic_emu.config import ACK_TIMEOUT_MAX_EXP, ACK_TIMEOUT_UNIT_NS

TS_MASK = 0xFFFF_FFFF  # TSETH timestamps: nanoseconds modulo 2^32, opaque to the peer
MAX_RTT_SAMPLE_NS = 1_000_000_000  # an echoed timestamp further back than this is bogus
# The reorder window's peak queueing delay falls back to the samples over this many
# configured base RTTs (nic_emu.connection.timers; docs/nic-emu.md "Loss detection").
QDELAY_PEAK_RTTS = 64
RTO_CAP_NS = ACK_TIMEOUT_UNIT_NS << ACK_TIMEOUT_MAX_EXP
REVERSE_SALT_BASE = 0x8000  # reverse EVs use the upper half of the salt space
# The wire's enums as plain ints: the per-packet code compares them with header fields.
ECN_CE = int(Ecn.CE)
DSCP_TRIMMABLE = int(Dscp.TRIMMABLE)
DSCP_TRIMMABLE_RETX = int(Dscp.TRIMMABLE_RETX)
DSCP_TRIMMED = int(Dscp.TRIMMED)
DSCP_TRIMMED_LASTHOP = int(Dscp.TRIMMED_LASTHOP)
NACK_TRIMMED = int(NackReason.TRIMMED)
NACK_TRIMMED_LASTHOP = int(NackReason.TRIMMED_LASTHOP)
NACK_SEQUENCE = int(NackReason.ROD_OOO)  # go-back-N "expected PSN" NACK of the baseline
PLACEHOLDER_ADDR = bytes(16)  # a frame template's outer destination until a packet's EV

#: one frame to send: (plane, frame)
Frame = tuple[int, bytes]
#: (plane, frame) pairs a connection hands back to its host, in order
Outbox = list[Frame]
#: what a call that may send returns: its frames in order (often none: NO_FRAMES)
Frames = Outbox | tuple[Frame, ...]
NO_FRAMES: tuple[Frame, ...] = ()


def span(ns: int) -> str:
    """A duration for messages: ns, us, ms or s, three significant digits."""
    for unit, scale in (("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns} ns"


class QpState(enum.Enum):
    READY = "ready"
    ERROR = "error"


READY = QpState.READY  # what the parts compare a QP's state with (one load, per packet)


class QpStatus(Protocol):
    """What each part of a connection asks of the queue pair it belongs to (the
    :class:`~nic_emu.connection.queue_pair.Connection`): whether it is still READY, and
    to fail it. A part calls back into its owner through this and nothing else."""

    state: QpState

    def fail(self, reason: str, detail: str, now: int) -> None:
        """Move the queue pair to ERROR (once) and tell its application why."""
        ...
