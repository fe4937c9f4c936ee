"""Errors raised by the topology model, the YAML loader and the address plan.

Everything a user can get wrong (a bad YAML file, an unknown switch name, an EV for a
plane that does not exist, a fabric too large for the uSID encoding) raises a subclass
of :class:`TopologyError` with a message that names the offending input.
"""

from __future__ import annotations


class TopologyError(Exception):
    """Base class of every error raised by the ``topologies`` package."""


class TopologyFileError(TopologyError):
    """A topology file cannot be found, read or parsed as YAML."""


class TopologySpecError(TopologyError):
    """A topology description is well-formed YAML but not a valid fabric.

    ``key_path`` names the offending key the way it is written in the YAML file,
    e.g. ``planes[1].t1_per_plane`` or ``links[0].between``.
    """

    def __init__(self, source: str, key_path: str, reason: str) -> None:
        self.source = source
        self.key_path = key_path
        self.reason = reason
        where = f"{source}: {key_path}" if key_path else source
        super().__init__(f"{where}: {reason}")


class UnknownNameError(TopologyError):
    """A lookup named a switch, NIC, plane, port or link that the topology does not have."""


class AddressingError(TopologyError):
    """An address-plan input is invalid (bad uSID block, EV, carrier, NIC pair...)."""


class UsidSpaceError(AddressingError):
    """The fabric has more planes, switches or downlinks than the uSID encoding can name."""


class EventError(TopologyError):
    """A fault event (:mod:`topologies.events`) is malformed or names what is not there."""


class EventValueError(EventError):
    """A fault event's field has the wrong type or is out of range (a fraction over 1, a
    flap whose down time is not shorter than its period, an EV over 32 bits...)."""


class EventTimeError(EventError):
    """A fault event's times are impossible: before the start of the run, or an end not
    after the start."""


class UnknownEventTargetError(EventError):
    """A fault event names a link, switch, NIC or port the topology does not have."""
