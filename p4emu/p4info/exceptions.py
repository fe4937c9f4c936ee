"""Errors raised while building a P4Info.

Every one of them is a :class:`P4InfoError`, itself a :class:`p4emu.exceptions.P4EmuError`,
and carries a message naming the offending object. They mirror the errors p4c reports for
the same programs (``@id`` reused, duplicate names, bad ``@id`` prefix...).
"""

from __future__ import annotations

from p4emu.exceptions import P4EmuError


class P4InfoError(P4EmuError):
    """Base class of every P4Info generation error."""


class IdCollisionError(P4InfoError):
    """Two declarations claim the same id through ``@id``."""


class IdPrefixError(P4InfoError):
    """An ``@id`` value carries an 8-bit resource prefix of another resource type."""


class IdSpaceExhaustedError(P4InfoError):
    """No free id is left in a resource type's 24-bit space (p4c: "No available id")."""


class FieldIdError(P4InfoError):
    """A match field / action parameter / metadata ``@id`` is 0 or used twice."""


class DuplicateNameError(P4InfoError):
    """Two objects of one resource type have the same fully qualified name."""


class ModelError(P4InfoError):
    """The control-plane model is inconsistent (a reference to an unknown object...)."""


class P4InfoTextError(P4InfoError):
    """A ``.p4info.txtpb`` file cannot be read or parsed."""


class ExtractError(P4InfoError):
    """The program uses something P4Runtime cannot describe (p4c rejects it too)."""

    def __init__(self, loc: object, message: str) -> None:
        self.loc = loc
        super().__init__(f"{loc}: error: {message}" if loc is not None else message)
