"""nic_emu.testing: test doubles for the NIC core's unit tests and benchmarks.

Not part of nic_emu's production face: no production module imports it
(tests/test_layering.py). Each double is driven by the project's one event loop,
:class:`vfabric.eventlist.EventList`, which the caller builds and passes in (``nic_emu``
may not import ``vfabric``; :class:`Scheduler` is what the doubles use of it):

- :class:`SimNetwork`: many NIC cores on :class:`ModelFabric`, a Python model of the switch
  (docs/nic-emu.md, "Simulation driver");
- :class:`LoopbackPair`: two cores wired back to back.
"""

from __future__ import annotations

from nic_emu.testing.loopback import LoopbackPair
from nic_emu.testing.model_fabric import FabricConfig, LinkFault, ModelFabric
from nic_emu.testing.scheduler import Scheduler
from nic_emu.testing.sim import SimNetwork

__all__ = ["FabricConfig", "LinkFault", "LoopbackPair", "ModelFabric", "Scheduler", "SimNetwork"]
