"""Encoding P4Runtime errors as gRPC statuses (P4Runtime spec §"Error Reporting").

A batch Write that fails reports gRPC UNKNOWN with a ``google.rpc.Status`` in the
``grpc-status-details-bin`` trailer whose ``details`` hold one ``p4.v1.Error`` per update, in
order, successful ones with ``canonical_code`` OK. Clients decode it with
:func:`p4emu.p4rt_client.messages.per_update_errors`.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc

from p4emu.p4rt_client.messages import STATUS_DETAILS_KEY
from p4emu.proto import p4r, rpc_code, rpc_status

_GRPC_CODES = {code.value[0]: code for code in grpc.StatusCode}

MAX_QUOTED_CHARS = 64
"""Most characters of a client's own input (a role name, a port name) an error quotes."""
MAX_ERROR_MESSAGE_CHARS = 1024
"""Longest error message the server sends: a status travels in gRPC metadata, whose
default limit (8 KiB) a message echoing a long input would cross, turning the answer into
the client's RESOURCE_EXHAUSTED."""


def quoted(text: str, limit: int = MAX_QUOTED_CHARS) -> str:
    """``repr(text)``, cut to ``limit`` characters with the full length said."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def bounded(message: str, limit: int = MAX_ERROR_MESSAGE_CHARS) -> str:
    """``message`` cut to ``limit`` characters (the rest is said to be cut)."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}... (message cut: {len(message)} characters)"


def grpc_code(code: int) -> grpc.StatusCode:
    return _GRPC_CODES.get(code, grpc.StatusCode.UNKNOWN)


def set_error(context: grpc.ServicerContext, code: int, message: str) -> None:
    """Sets a plain error status on the call (the handler then returns/raises)."""
    message = bounded(message)
    status = rpc_status.Status(code=code, message=message)
    context.set_trailing_metadata(((STATUS_DETAILS_KEY, status.SerializeToString()),))
    context.set_code(grpc_code(code))
    context.set_details(message)


def set_batch_error(context: grpc.ServicerContext, errors: Sequence[p4r.Error]) -> bool:
    """Reports a Write's per-update errors; returns False (nothing set) if all succeeded."""
    failed = [error for error in errors if error.canonical_code != rpc_code.OK]
    if not failed:
        return False
    status = rpc_status.Status(
        code=rpc_code.UNKNOWN, message=bounded(_summary(failed, len(errors)))
    )
    for error in errors:
        status.details.add().Pack(error)
    context.set_trailing_metadata(((STATUS_DETAILS_KEY, status.SerializeToString()),))
    context.set_code(grpc.StatusCode.UNKNOWN)
    context.set_details(status.message)
    return True


def _summary(failed: Sequence[p4r.Error], total: int) -> str:
    first = failed[0].message
    if len(failed) == 1:
        return f"1 of {total} updates failed: {first}"
    return f"{len(failed)} of {total} updates failed; first: {first}"
