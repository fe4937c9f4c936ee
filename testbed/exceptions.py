"""Errors raised by the ``testbed`` package (the ``mrc-testbed`` launcher).

Everything a user can get wrong (a bad topology, a name that is not in the fabric, a port
already in use, a mode that needs root) and everything the fabric can do wrong at run time
(a process that dies while starting, a switch that refuses its tables, a NIC that does not
answer) is a subclass of :class:`TestbedError` with a message that names what failed. The
CLI prints the message and exits with status 1; it never shows a traceback.
"""

from __future__ import annotations


class TestbedError(Exception):
    """Base class of every error raised by the ``testbed`` package."""

    __test__ = False  # not a pytest test class despite the name


class UsageError(TestbedError):
    """A command names something the running fabric does not have (a link, switch, NIC,
    plane), or asks for something the mode cannot do."""


class UnknownModeError(UsageError):
    """A mode name that is not in the registry (testbed.modes); the message lists them."""


class RunDirError(TestbedError):
    """The run directory is missing, unreadable, or its state file is damaged."""


class AlreadyRunningError(TestbedError):
    """``up`` was asked for a run name whose fabric is still running."""


class NotRunningError(TestbedError):
    """A command needs a running fabric and there is none (or several to choose from)."""


class PortInUseError(TestbedError):
    """A UDP or TCP port the fabric needs is already taken by another process."""


class PortPlanError(TestbedError):
    """The fabric's port numbers do not fit the available range from the base port."""


class ProcessStartError(TestbedError):
    """A switch or NIC process exited, or did not become ready in time, while starting."""


class ProgrammingError(TestbedError):
    """The controller could not program one or more switches (routes, pipeline)."""


class NicControlError(TestbedError):
    """A NIC's control socket did not answer, or answered ``ok: false``."""


class ModeError(TestbedError):
    """The selected mode or target cannot run here (not root, missing tool or library)."""


class DemoError(TestbedError):
    """The demo's transfer failed or did not finish in time."""


class PortControlError(TestbedError):
    """A switch's management channel (gNMI, or BMv2's runtime CLI) refused or did not
    answer a port state change."""
