"""Encoding P4Runtime errors as gRPC statuses (P4Runtime spec §"Error Reporting").

A batch Write that fails reports gRPC UNKNOWN with a ``google.rpc.Status`` in the
``grpc-status-details-bin`` trailer whose ``details`` hold one ``p4.v1.Error`` per update, in
order, successful ones with ``canonical_code`` OK. Clients decode it with
:func:`p4emu.p4rt.messages.per_update_errors`.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from finsy.proto import p4r, rpc_code, rpc_status

from p4emu.p4rt.messages import STATUS_DETAILS_KEY

_GRPC_CODES = {code.value[0]: code for code in grpc.StatusCode}


def grpc_code(code: int) -> grpc.StatusCode:
    return _GRPC_CODES.get(code, grpc.StatusCode.UNKNOWN)


def set_error(context: grpc.ServicerContext, code: int, message: str) -> None:
    """Sets a plain error status on the call (the handler then returns/raises)."""
    status = rpc_status.Status(code=code, message=message)
    context.set_trailing_metadata(((STATUS_DETAILS_KEY, status.SerializeToString()),))
    context.set_code(grpc_code(code))
    context.set_details(message)


def set_batch_error(context: grpc.ServicerContext, errors: Sequence[p4r.Error]) -> bool:
    """Reports a Write's per-update errors; returns False (nothing set) if all succeeded."""
    failed = [error for error in errors if error.canonical_code != rpc_code.OK]
    if not failed:
        return False
    status = rpc_status.Status(code=rpc_code.UNKNOWN, message=_summary(failed, len(errors)))
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
