"""Runtime primitives of the p4emu v1model target (BMv2 ``simple_switch`` semantics).

One module per concern; the backend's generated code calls these directly:

- :mod:`~p4emu.runtime.bitbuf` — header extraction / deparsing (:class:`HeaderLayout`).
- :mod:`~p4emu.runtime.tables` — match-action tables (:class:`Table`).
- :mod:`~p4emu.runtime.externs` — registers, counters, meters, random, digests, log_msg.
- :mod:`~p4emu.runtime.hashes` — every v1model ``HashAlgorithm``, BMv2-exact.
- :mod:`~p4emu.runtime.clock` — :class:`RealClock` / :class:`VirtualClock`.
- :mod:`~p4emu.runtime.traffic_manager` — egress queues with BMv2 queueing metadata.
- :mod:`~p4emu.runtime.pre` — multicast groups and clone sessions.
- :mod:`~p4emu.runtime.objects` — :class:`ProgramObjects`, what the control plane reads and
  writes (built by the backend once per program).
- :mod:`~p4emu.runtime.action_profiles` — action profiles and selectors.

Design notes and BMv2 references: ``docs/p4emu-runtime.md``.
"""

from __future__ import annotations
