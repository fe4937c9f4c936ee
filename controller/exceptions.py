"""Errors raised by the controller.

Everything a user can get wrong (a bad topology, a P4Info that lacks a name the controller
needs, a missing artefact, a bad endpoints file) and everything a switch can answer badly
(unreachable, another primary, a refused pipeline, failed updates) is a subclass of
:class:`ControllerError` with a message that names the offending input or switch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class ControllerError(Exception):
    """Base class of every error raised by the ``controller`` package."""


class PlanError(ControllerError):
    """A topology cannot be turned into switch tables (e.g. a link to mark down is unknown)."""


class P4InfoMismatchError(ControllerError):
    """The P4Info lacks a table, action, field or counter the controller needs, or has it
    with another shape (match kind, parameter list)."""


class EncodeError(ControllerError):
    """A planned value does not fit the P4Info's bit width, or names an unknown field."""


class DecodeError(ControllerError):
    """A P4Runtime entity read from a switch cannot be interpreted with the P4Info."""


class ArtifactError(ControllerError):
    """The target's pipeline artefacts (P4Info, BMv2 JSON, P4 source) cannot be produced."""


class EndpointError(ControllerError):
    """A switch has no usable P4Runtime address (bad endpoints file, unknown switch)."""


@dataclass(frozen=True)
class UpdateFailure:
    """One failed update of a Write: what it tried and what the switch said."""

    update_type: str  # INSERT / MODIFY / DELETE
    entity: str  # the entry, rendered with P4 names
    code: str  # google.rpc code name, e.g. INVALID_ARGUMENT
    message: str

    def __str__(self) -> str:
        return f"{self.update_type} {self.entity}: {self.code}: {self.message}"


class SwitchAccessError(ControllerError):
    """A switch could not be programmed or read. ``kind`` classifies the failure
    (``unreachable``, ``arbitration``, ``pipeline``, ``write``, ``read``), ``code`` is the
    gRPC status name when the switch answered."""

    kind = "switch"

    def __init__(self, switch: str, message: str, *, code: str | None = None) -> None:
        self.switch = switch
        self.message = message
        self.code = code
        super().__init__(f"{switch}: {message}")


class UnreachableError(SwitchAccessError):
    """No P4Runtime server answered at the switch's address."""

    kind = "unreachable"


class ArbitrationError(SwitchAccessError):
    """The controller could not become the primary client (another one holds a higher
    election id, or the device id is wrong)."""

    kind = "arbitration"


class PipelineError(SwitchAccessError):
    """The switch refused the pipeline, or runs another one and ``--pipeline keep`` forbids
    replacing it."""

    kind = "pipeline"


class ReadError(SwitchAccessError):
    """A Read or GetForwardingPipelineConfig failed."""

    kind = "read"


class WriteError(SwitchAccessError):
    """A Write failed as a whole, or some of its updates failed (``failures``)."""

    kind = "write"

    def __init__(
        self,
        switch: str,
        message: str,
        *,
        code: str | None = None,
        failures: Sequence[UpdateFailure] = (),
        applied: int = 0,
    ) -> None:
        super().__init__(switch, message, code=code)
        self.failures = tuple(failures)
        self.applied = applied
