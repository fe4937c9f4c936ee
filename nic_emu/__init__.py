"""nic_emu: the emulated MRC NIC (docs/nic-emu.md).

- :class:`NicCore` / :class:`Connection`: the sans-IO transport core.
- :func:`repath_time`: measurements from the event log.

Test doubles (the in-memory driver on a model fabric, two cores back to back) are in
:mod:`nic_emu.testing`, outside this face.
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
from nic_emu.memory import MemoryRegion

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
    "FabricError",
    "MemoryAccessError",
    "MemoryRegion",
    "NicConfig",
    "NicCore",
    "NicEmuError",
    "QpState",
    "Repath",
    "TransportMode",
    "UnknownConnectionError",
    "WriteCompleted",
    "WriteReceived",
    "read_jsonl",
    "repath_time",
    "service",
]
