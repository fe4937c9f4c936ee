"""Errors of the P4Runtime entity layer.

:class:`P4RuntimeError` carries a ``google.rpc.Code`` and a message. Inside a ``Write``
it becomes the ``p4.v1.Error`` of one update; raised from :meth:`P4RuntimeState.read` or
for a request-wide problem (no pipeline, unknown atomicity mode) it is the status of the
whole RPC. The codes follow the P4Runtime specification (v1.4) and, where the
specification is silent, PI's ``DeviceMgr`` (what ``simple_switch_grpc`` runs); see
``docs/p4emu-p4runtime.md``.
"""

from __future__ import annotations

from p4emu.exceptions import P4EmuError
from p4emu.p4rt_client.exceptions import code_name
from p4emu.proto import p4r, rpc_code

#: ``p4.v1.Error.space`` of every error p4emu reports (PI reports "ALL-sswitch-p4org").
ERROR_SPACE = "ALL-sswitch-p4org"


class P4RuntimeError(P4EmuError):
    """A P4Runtime request (or one update of it) was refused with ``code``."""

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(f"{code_name(code)}: {message}")

    def to_proto(self) -> p4r.Error:
        """The ``p4.v1.Error`` reporting this failure for one update."""
        return p4r.Error(canonical_code=self.code, message=self.message, space=ERROR_SPACE)


def unknown(message: str) -> P4RuntimeError:
    return P4RuntimeError(rpc_code.UNKNOWN, message)


def invalid(message: str) -> P4RuntimeError:
    return P4RuntimeError(rpc_code.INVALID_ARGUMENT, message)


def not_found(message: str) -> P4RuntimeError:
    return P4RuntimeError(rpc_code.NOT_FOUND, message)


def already_exists(message: str) -> P4RuntimeError:
    return P4RuntimeError(rpc_code.ALREADY_EXISTS, message)


def permission_denied(message: str) -> P4RuntimeError:
    return P4RuntimeError(rpc_code.PERMISSION_DENIED, message)


def resource_exhausted(message: str) -> P4RuntimeError:
    return P4RuntimeError(rpc_code.RESOURCE_EXHAUSTED, message)


def failed_precondition(message: str) -> P4RuntimeError:
    return P4RuntimeError(rpc_code.FAILED_PRECONDITION, message)


def out_of_range(message: str) -> P4RuntimeError:
    return P4RuntimeError(rpc_code.OUT_OF_RANGE, message)


def unimplemented(message: str) -> P4RuntimeError:
    return P4RuntimeError(rpc_code.UNIMPLEMENTED, message)
