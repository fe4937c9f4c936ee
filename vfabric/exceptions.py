"""Errors of the virtual-time fabric.

Everything a user can get wrong (an unknown link or node in a fault, a time in the past, an
event that is no fault, an impossible transfer) raises a subclass of
:class:`VirtualFabricError` whose message names the offending item.
"""

from __future__ import annotations


class VirtualFabricError(Exception):
    """Base class of every error raised by the ``vfabric`` package."""


class FabricSetupError(VirtualFabricError):
    """The fabric cannot be built: the topology, its plan, a NIC configuration, the
    timeline resolution or an output path is unusable."""


class UnknownLinkError(VirtualFabricError):
    """A fault or query names a link the topology does not have."""


class UnknownNodeError(VirtualFabricError):
    """A fault or transfer names a switch, NIC or plane the topology does not have."""


class FaultTimeError(VirtualFabricError):
    """A fault is scheduled in the past (an event's own times are checked when it is made:
    topologies.exceptions.EventTimeError)."""


class FaultValueError(VirtualFabricError):
    """What was scheduled is no fault: an event that changes nothing on the fabric (its
    own values are checked when it is made: topologies.exceptions.EventValueError)."""


class TransferSetupError(VirtualFabricError):
    """A transfer cannot be set up (same NIC at both ends, bad size, unknown transport)."""


class ProgramError(VirtualFabricError):
    """The P4 program cannot be loaded, or the controller's entries cannot be written."""


class EventHandleError(VirtualFabricError):
    """:meth:`vfabric.eventlist.EventList.cancel` was given something that is not a handle
    of that event list."""
