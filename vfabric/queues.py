"""The switch's egress queues as a link: a traffic manager draining in bits per second.

p4emu's :class:`~p4emu.runtime.traffic_manager.TrafficManager` charges each packet its
length at enqueue. A packet the P4 program truncated (a trimmed header:
``truncate(...)`` in ingress) is cut only when it leaves, so it would be charged the
length of the whole packet although only its header crosses the link. On a bits/s
shaper that matters (BMv2 shapes in packets/s, where it does not), so the fabric's
traffic manager charges a truncated packet the bytes it will really send.
"""

from __future__ import annotations

from p4emu.runtime.traffic_manager import DropReason, TrafficManager


class LinkTrafficManager(TrafficManager):
    """:class:`TrafficManager` that charges truncated packets their truncated length."""

    def enqueue(self, port: int, item: object, length: int, priority: int = 0) -> DropReason | None:
        truncate = item.ctx.truncate  # type: ignore[attr-defined]  # p4emu's _InFlight
        if truncate is not None and truncate < length:
            length = truncate
        return super().enqueue(port, item, length, priority)
