"""Errors raised by the emulated MRC NIC.

Everything a user or a peer can get wrong (a bad configuration, an unknown connection,
a write outside a registered memory region, a peer that stops answering) raises a
subclass of :class:`NicEmuError` with a message naming the offending input. Packets
from the wire never raise: malformed or foreign packets are counted and dropped, so a
hostile or broken peer cannot crash a NIC.
"""

from __future__ import annotations


class NicEmuError(Exception):
    """Base class of every error raised by the ``nic_emu`` package."""


class ConfigError(NicEmuError):
    """A NIC, connection, congestion-control or fabric parameter is out of range."""


class ConnectionSetupError(NicEmuError):
    """A connection cannot be created (duplicate QPN, unknown peer, no usable plane...)."""


class UnknownConnectionError(NicEmuError):
    """An API call named a queue pair number this NIC does not have."""


class MemoryAccessError(NicEmuError):
    """A work request names memory outside a registered region or an unknown R_Key."""


class ConnectionFailedError(NicEmuError):
    """A connection cannot make progress and has been moved to the error state.

    ``reason`` is a short machine-readable tag (``max_retries``, ``no_usable_ev``,
    ``packet_retries``, ``management``); the message explains it for a human.
    """

    def __init__(self, qpn: int, reason: str, detail: str) -> None:
        self.qpn = qpn
        self.reason = reason
        self.detail = detail
        super().__init__(f"connection QPN {qpn:#x} failed ({reason}): {detail}")


class EvManagementError(NicEmuError):
    """A management call (deny/allow an EV) names an EV the connection does not have."""


class FabricError(NicEmuError):
    """The in-memory fabric was built or driven with an invalid argument."""


class AnalysisError(NicEmuError):
    """An event log does not hold what an analysis function needs."""


class PortError(NicEmuError):
    """A port driver cannot open its socket or interface, or the socket failed."""


class ServeConfigError(NicEmuError):
    """A ``nic-emu serve`` configuration file is invalid; ``key`` names the offending
    entry (``ports.0.local``, ``transport.evs_per_connection``...)."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.message = " ".join(message.split())  # always one line
        super().__init__(f"{key}: {self.message}")


class DataSourceError(NicEmuError):
    """A transfer's data source is bad (an unknown kind, a bad pattern, a file that cannot
    be read or is shorter than the transfer), or failed while the data was being sent."""


class ControlError(NicEmuError):
    """A control-socket client could not talk to a ``nic-emu serve`` process, or the
    process answered a request with an error."""
