"""24-bit packet sequence numbers.

Inside the core PSNs are unbounded Python ints counted from the connection's initial
PSN, so comparisons never wrap; only the wire carries them modulo 2^24. A received
24-bit PSN is unwrapped to the unbounded value nearest to a reference.
"""

from __future__ import annotations

PSN_BITS = 24
PSN_MOD = 1 << PSN_BITS
PSN_MASK = PSN_MOD - 1
_HALF = PSN_MOD >> 1


def unwrap(psn24: int, reference: int) -> int:
    """The unbounded PSN congruent to ``psn24`` (mod 2^24) nearest to ``reference``."""
    delta = (psn24 - reference) & PSN_MASK
    if delta >= _HALF:
        delta -= PSN_MOD
    return reference + delta
