"""The controller's own decoding of a failed batch Write (P4Runtime spec, "Error
Reporting"): the per-update ``p4.v1.Error`` list travels in a trailer."""

from __future__ import annotations

import grpc
from finsy.proto import p4r, rpc_code, rpc_status

from controller.p4rt_client import STATUS_DETAILS_KEY, describe_rpc_error, per_update_errors


class FakeRpcError(grpc.RpcError):
    def __init__(self, trailer: tuple[tuple[str, bytes], ...]) -> None:
        self._trailer = trailer

    def trailing_metadata(self) -> tuple[tuple[str, bytes], ...]:
        return self._trailer

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return "1 of 2 updates failed: no such table"


def _status_bytes(errors: list[p4r.Error]) -> bytes:
    status = rpc_status.Status(code=rpc_code.UNKNOWN, message="batch")
    for error in errors:
        status.details.add().Pack(error)
    return status.SerializeToString()


def test_per_update_errors_keeps_order_and_ok_entries() -> None:
    errors = [
        p4r.Error(canonical_code=rpc_code.OK),
        p4r.Error(canonical_code=rpc_code.NOT_FOUND, message="no such table"),
    ]
    exc = FakeRpcError((("other", b"x"), (STATUS_DETAILS_KEY, _status_bytes(errors))))
    assert per_update_errors(exc) == errors


def test_per_update_errors_skips_details_of_another_type() -> None:
    status = rpc_status.Status(code=rpc_code.UNKNOWN)
    status.details.add().Pack(rpc_status.Status(code=rpc_code.INTERNAL))
    status.details.add().Pack(p4r.Error(canonical_code=rpc_code.INTERNAL, message="boom"))
    exc = FakeRpcError(((STATUS_DETAILS_KEY, status.SerializeToString()),))
    assert [e.message for e in per_update_errors(exc)] == ["boom"]


def test_per_update_errors_without_trailer_is_empty() -> None:
    assert per_update_errors(FakeRpcError(())) == []
    assert per_update_errors(grpc.RpcError()) == []


def test_describe_rpc_error_names_the_status() -> None:
    assert describe_rpc_error(FakeRpcError(())) == (
        "UNKNOWN",
        "1 of 2 updates failed: no such table",
    )
