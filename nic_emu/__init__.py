"""nic_emu: the emulated MRC NIC (docs/nic-emu.md).

- :class:`NicCore` / :class:`Connection`: the sans-IO transport core.
- :class:`SimNetwork`: the in-memory driver (simulated fabric, virtual clock).
- :class:`LoopbackPair`: two cores wired back to back.
- :func:`repath_time`: measurements from the event log.
"""

from __future__ import annotations

from clikit import hotpath  # noqa: F401 - first: the compiled-or-pure finder (docs/virtual-fabric.md)
from nic_emu.analysis import Repath, repath_time
from nic_emu.config import CcConfig, NicConfig, TransportMode
from nic_emu.connection import Connection, QpState
from nic_emu.connection.host import AppEvent, ConnectionFailed, WriteCompleted, WriteReceived
from nic_emu.core import NicCore, service
from nic_emu.ev_set import EvState
from nic_emu.event_log import EventLog, EventRecord, read_jsonl
from nic_emu.exceptions import (
    AnalysisError,
    ConfigError,
    ConnectionFailedError,
    ConnectionSetupError,
    EvManagementError,
    FabricError,
    MemoryAccessError,
    NicEmuError,
    UnknownConnectionError,
)
from nic_emu.loopback import LoopbackPair
from nic_emu.memory import MemoryRegion
from nic_emu.model_fabric import FabricConfig, LinkFault, ModelFabric
from nic_emu.sim import SimNetwork

__all__ = [
    "AnalysisError",
    "AppEvent",
    "CcConfig",
    "ConfigError",
    "Connection",
    "ConnectionFailed",
    "ConnectionFailedError",
    "ConnectionSetupError",
    "EvManagementError",
    "EvState",
    "EventLog",
    "EventRecord",
    "FabricConfig",
    "FabricError",
    "LinkFault",
    "LoopbackPair",
    "MemoryAccessError",
    "MemoryRegion",
    "ModelFabric",
    "NicConfig",
    "NicCore",
    "NicEmuError",
    "QpState",
    "Repath",
    "SimNetwork",
    "TransportMode",
    "UnknownConnectionError",
    "WriteCompleted",
    "WriteReceived",
    "read_jsonl",
    "repath_time",
    "service",
]
