"""p4emu's client stack (p4emu.p4rt_client.schema, .messages): entities by name, checked
by P4RuntimeState, read back by name; requests; a failed Write's per-update errors."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from finsy.proto import p4i, p4r, rpc_code, rpc_status

from p4emu.p4rt import P4RuntimeState
from p4emu.p4rt_client.exceptions import EntityNameError
from p4emu.p4rt_client.messages import (
    STATUS_DETAILS_KEY,
    EntityNames,
    arbitration_request,
    describe_rpc_error,
    failed_updates,
    from_uint128,
    get_pipeline_request,
    per_update_errors,
    pipeline_config,
    read_request,
    set_pipeline_request,
    uint128,
    write_request,
)
from p4emu.p4rt_client.schema import encode_value
from p4emu.switch import Switch

BASIC = Path(__file__).resolve().parents[1] / "programs" / "basic.p4"


@pytest.fixture(scope="module")
def switch() -> Switch:
    return Switch(BASIC)


def test_lpm_entry_is_accepted_and_reads_back(switch: Switch) -> None:
    names = EntityNames(switch.p4info)
    state = P4RuntimeState(switch.objects)
    entity = names.table_entry(
        "MyIngress.ipv4_lpm",
        {"hdr.ipv4.dstAddr": (0x0A000000, 8)},
        "MyIngress.ipv4_forward",
        {"dstAddr": 0x0200000000AA, "port": 3},
    )
    errors = state.write([p4r.Update(type=p4r.Update.INSERT, entity=entity)])
    assert [e.canonical_code for e in errors] == [0]
    (read,) = state.read(names.table_entry("ipv4_lpm", {}))  # aliases work too
    assert read.table_entry == entity.table_entry


def test_a_zero_length_prefix_is_left_out_as_dont_care(switch: Switch) -> None:
    entity = EntityNames(switch.p4info).table_entry(
        "MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0, 0)}, "MyIngress.drop"
    )
    assert list(entity.table_entry.match) == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda n: n.table_entry("MyIngress.nope", {}), "no table named 'MyIngress.nope'"),
        (lambda n: n.table_entry("MyIngress.ipv4_lpm", {"hdr.x": 1}), "no match field 'hdr.x'"),
        (
            lambda n: n.action("MyIngress.ipv4_forward", {"port": 1}),
            "parameter 'dstAddr' is missing",
        ),
        (lambda n: n.action("MyIngress.drop", {"port": 1}), "no parameter 'port'"),
        (
            lambda n: n.action("MyIngress.ipv4_forward", {"dstAddr": 1, "port": 512}),
            "does not fit bit<9>",
        ),
        (lambda n: n.counter_entry("MyIngress.none"), "no counter named"),
    ],
)
def test_bad_names_and_values_are_explained(switch: Switch, call, message: str) -> None:
    with pytest.raises(EntityNameError, match=message):
        call(EntityNames(switch.p4info))


def test_encode_value_is_canonical() -> None:
    assert (encode_value(0, 8), encode_value(0x0102, 16), encode_value(1, 48)) == (
        b"\0",
        b"\x01\x02",
        b"\x01",
    )
    with pytest.raises(EntityNameError):
        encode_value(-1, 8)


# --- a failed batch Write (P4Runtime spec, "Error Reporting"): one p4.v1.Error per update
# travels in a trailer; both clients (p4emu's and the controller's) decode it here.


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


def test_failed_updates_keeps_the_index_of_each_failure() -> None:
    errors = [
        p4r.Error(canonical_code=rpc_code.OK),
        p4r.Error(canonical_code=rpc_code.NOT_FOUND, message="gone"),
        p4r.Error(canonical_code=rpc_code.OK),
        p4r.Error(canonical_code=rpc_code.ALREADY_EXISTS, message="twice"),
    ]
    assert [(f.index, f.code, f.message) for f in failed_updates(errors)] == [
        (1, "NOT_FOUND", "gone"),
        (3, "ALREADY_EXISTS", "twice"),
    ]


def test_requests_carry_device_role_and_the_election_id_as_uint128() -> None:
    election = (5 << 64) | 7
    update = p4r.Update(type=p4r.Update.INSERT)
    write = write_request(3, election, [update], role="r")
    assert (write.device_id, write.role, write.election_id.high, write.election_id.low) == (
        3,
        "r",
        5,
        7,
    )
    assert list(write.updates) == [update]
    assert write.atomicity == p4r.WriteRequest.CONTINUE_ON_ERROR
    arbitration = arbitration_request(3, election, "r").arbitration
    assert from_uint128(arbitration.election_id) == election == from_uint128(uint128(election))
    assert arbitration.role.name == "r"
    read = read_request(3, [p4r.Entity()])
    assert (read.device_id, len(read.entities)) == (3, 1)
    config = pipeline_config(p4i.P4Info(), b"cfg", cookie=9)
    pipeline = set_pipeline_request(3, election, config)
    assert (pipeline.config.cookie.cookie, pipeline.election_id.high) == (9, 5)
    assert get_pipeline_request(3, "COOKIE_ONLY").response_type == (
        p4r.GetForwardingPipelineConfigRequest.COOKIE_ONLY
    )


def test_the_package_names_entity_names_and_imports_its_module_on_use() -> None:
    import subprocess
    import sys

    import p4emu.p4rt_client as package

    assert package.EntityNames is EntityNames
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        package.Nothing  # noqa: B018 - the lookup is the point
    # the entity layer a controller's codec uses does not import the messages module
    script = (
        "import sys\n"
        "import controller.entities, p4emu.p4rt_client\n"
        "print('p4emu.p4rt_client.messages' in sys.modules)\n"
        "from p4emu.p4rt_client import EntityNames\n"
        "print('p4emu.p4rt_client.messages' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "True"]
