"""What a driver around a :class:`~nic_emu.core.NicCore` must do, and the loop body all
drivers share.

A driver owns the I/O and the clock; the core owns every protocol decision. The in-memory
fabric (:mod:`nic_emu.sim`) and the socket drivers (AF_PACKET, loopback UDP) differ only
in where frames go and where time comes from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from nic_emu.completions import AppEvent
from nic_emu.core import NicCore


class NicDriver(Protocol):
    """The contract a driver implements for one NIC core.

    1. On every frame received on port ``plane``: ``core.receive_frame(frame, plane, now)``,
       then :func:`service`.
    2. When the time returned by :func:`service` (``core.next_timer()``) is reached:
       ``core.handle_timer(now)``, then :func:`service`. A later :func:`service` may move
       the deadline earlier or later; only the latest one counts.
    3. After every application call (``post_write``, ``create_connection``...):
       :func:`service`.
    4. When a port's link goes down or up: ``core.set_port_state(plane, up, now)``, then
       :func:`service`.
    5. Put each ``(plane, frame)`` that :func:`service` hands to ``transmit`` on that
       port, in order; frames for a port that is down are dropped.
    6. Hand the events :func:`service` returns to the application.

    ``now`` is integer nanoseconds from any fixed origin, never decreasing.
    """

    core: NicCore

    def now_ns(self) -> int: ...

    def transmit(self, plane: int, frame: bytes) -> None: ...

    def schedule_timer(self, deadline_ns: int | None) -> None: ...


def service(
    core: NicCore, now: int, transmit: Callable[[int, bytes], None]
) -> tuple[int | None, list[AppEvent]]:
    """Flush the core's frames to ``transmit``; return (next timer deadline, app events)."""
    for plane, frame in core.frames_to_send(now):
        transmit(plane, frame)
    return core.next_timer(), core.events()
