"""Queue thresholds of the MRC switch: where it ECN-marks, trims and drops.

The one home of these parameters (docs/switch-queues.md, sections 6 and 7). The P4
program's built-in defaults (``p4src/include/defines.p4``, ``DEFAULT_*_QDEPTH``,
``DEFAULT_QUEUE_LIMIT``, ``DEFAULT_ECN_MAX_PROB``, the priorities) are
:func:`queue_thresholds` of a 64-packet queue, checked by
``tests/mrc_wire/test_wire_p4_defines.py``; the controller scales them to each switch's
queues (``controller.policy``) and the NIC's test-double fabric uses the same fractions
(``nic_emu.testing.model_fabric``).

Rule: trim a trimmable packet at 3/4 of the queue; mark ECN between 0.2 and 0.8 of the trim
threshold (uet-htsim marks between 0.2 and 0.8 BDP); drop any other data packet (counted by
the program) one sixteenth below capacity, before the traffic manager drops uncounted.
"""

from __future__ import annotations

from dataclasses import dataclass

from mrc_wire.exceptions import MrcWireError

TRIM_FRACTION = 0.75  # of the queue's capacity
ECN_MIN_FRACTION = 0.2  # of the trim threshold: marking starts above it ...
ECN_MAX_FRACTION = 0.8  # ... and marks every packet above this
ECN_MAX_PROB = 0xFFFF  # marking probability x 65536 at the top of the band (~1)
QUEUE_LIMIT_HEADROOM = 1 / 16  # of the capacity, kept free: 64 -> limit 60
QUEUE_LIMIT_FRACTION = 1 - QUEUE_LIMIT_HEADROOM  # the limit as a fraction of the capacity
MIN_QUEUE_PACKETS = 4  # below this the thresholds collapse onto each other
MAX_QDEPTH_VALUE = 0xFFFF  # thresholds are bit<16> in the program

DATA_PRIORITY = 0  # standard_metadata.priority of data packets
DEFAULT_CONTROL_PRIORITY = 7  # of control packets, trimmed headers and punts (8 queues)


class QueueDepthError(MrcWireError):
    """A queue too small or too large for the thresholds (names the depth and the range)."""


@dataclass(frozen=True, slots=True)
class QueueThresholds:
    """Thresholds, in packets, for a queue of a given capacity."""

    ecn_min_qdepth: int
    ecn_max_qdepth: int
    trim_qdepth: int
    queue_limit: int


def queue_thresholds(queue_packets: int) -> QueueThresholds:
    """The thresholds for a queue of ``queue_packets`` packets (64 -> 10, 38, 48, 60)."""
    if not MIN_QUEUE_PACKETS <= queue_packets <= MAX_QDEPTH_VALUE:
        raise QueueDepthError(
            f"queue depth {queue_packets} packets is outside {MIN_QUEUE_PACKETS}.."
            f"{MAX_QDEPTH_VALUE}: the trim and ECN thresholds need room below it"
        )
    trim = max(2, round(queue_packets * TRIM_FRACTION))
    limit = queue_packets - max(1, round(queue_packets * QUEUE_LIMIT_HEADROOM))
    ecn_min = max(1, round(trim * ECN_MIN_FRACTION))
    ecn_max = max(ecn_min + 1, round(trim * ECN_MAX_FRACTION))
    return QueueThresholds(ecn_min, ecn_max, trim, limit)
