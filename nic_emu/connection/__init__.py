"""One queue pair (connection) of an emulated MRC NIC: both its send and receive sides.

The connection is sans-IO like the NIC core that owns it: methods take ``now`` (virtual
or real nanoseconds, supplied by the driver) and return the ``(plane, frame)`` pairs
they make. Nothing here reads a clock, sleeps or touches a socket.

Send side (MRC mode): packets are sprayed over the EV set (``nic_emu.ev_set``), each
carrying PSN, VA, R_Key and its own length (RETH in every packet). Reactions:

- SACK: cumulative PSN + 64-bit bitmap acknowledge packets; an ECN echo puts the echoed
  EV in SKIP; time-ordered SACK evidence declares gaps lost (``nic_emu.sender``).
- NACK TRIMMED / TRIMMED_LASTHOP: retransmit at once, EV state unchanged, cwnd -= bytes.
- loss without a trim (SACK gap or timeout): the EV goes ASSUMED_BAD at once, a backup
  of the same plane replaces it, the packet is retransmitted on the next EV.
- timeout with no acknowledgement at all since the packet left ("silence"): backoff,
  linear then exponential; ``max_retries`` silent timeouts in a row fail the connection.

Receive side: packets are placed in any order, duplicates are never placed twice,
SACKs go back over a small reverse EV set (``reverse_evs_per_plane`` per plane).

Baseline mode (``TransportMode.ROCE``): one EV by hash of the 5-tuple, go-back-N
(receiver drops out-of-order packets and NACKs the expected PSN once), trimmed packets
dropped without reaction, timeouts resend everything from the oldest unacknowledged PSN.
"""

from __future__ import annotations

from nic_emu.connection.common import TS_MASK, QpState
from nic_emu.connection.host import ConnectionHost
from nic_emu.connection.queue_pair import Connection

__all__ = ["TS_MASK", "Connection", "ConnectionHost", "QpState"]
