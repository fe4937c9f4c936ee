"""Bounded P4Runtime service (issue: hardening round 2): pipeline compiles run off the
service lock, one at a time, within their bounds and cancellable; StreamChannels cannot take
the workers of other RPCs; errors are canonical, bounded and name no host path."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from finsy.proto import p4r, p4r_grpc

import p4emu.server.service as service_module
from p4emu.bundle import MAX_BUNDLE_NAME_BYTES, MAX_BUNDLE_PATH_BYTES, SourceBundle
from p4emu.frontend import load_program
from p4emu.limits import CompileLimits
from p4emu.p4info import p4info_for_program
from p4emu.p4rt_client.messages import pipeline_config, set_pipeline_request
from p4emu.server.client import ClientError, P4RuntimeClient
from p4emu.server.service import P4RuntimeService, start_grpc_server
from p4emu.server.status import MAX_ERROR_MESSAGE_CHARS
from p4emu.server.switch_device import DeviceSettings, SwitchDevice

PROGRAM = Path(__file__).parent / "programs" / "p4rt_demo.p4"
TABLE = "DemoIngress.l2_fwd"
WAIT_S = 30.0  # generous: a loaded 2-core machine; never a timing claim


class GatedDevice(SwitchDevice):
    """A SwitchDevice whose compile can be held busy (a Python loop, as a compiler is)."""

    def __init__(self) -> None:
        super().__init__(DeviceSettings(cpu_port=510))
        self.hold = False
        self.release = threading.Event()
        self.entered = threading.Event()
        self.left = threading.Event()

    def verify_pipeline(self, config: p4r.ForwardingPipelineConfig):  # type: ignore[override]
        if self.hold:
            self.entered.set()
            try:
                while not self.release.is_set():
                    pass
            finally:
                self.left.set()
        return super().verify_pipeline(config)


class Rig:
    def __init__(self, limits: CompileLimits | None = None) -> None:
        self.device = GatedDevice()
        self.service = P4RuntimeService(self.device, compile_limits=limits)
        self.server, port = start_grpc_server(self.service, "127.0.0.1:0")
        self.address = f"127.0.0.1:{port}"
        self.channel = grpc.insecure_channel(self.address)
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self.client = P4RuntimeClient(self.address).connect()
        self.client.set_pipeline_from_program(PROGRAM)
        checked = load_program(PROGRAM)
        self.p4info = p4info_for_program(checked)

    def push_request(
        self, device_config: bytes | None = None, role: str = ""
    ) -> p4r.SetForwardingPipelineConfigRequest:
        config = device_config if device_config is not None else PROGRAM.read_bytes()
        return set_pipeline_request(0, 1, pipeline_config(self.p4info, config, 0), role=role)

    def close(self) -> None:
        self.device.release.set()
        self.client.close()
        self.channel.close()
        self.server.stop(None)


@pytest.fixture
def rig() -> Iterator[Rig]:
    rig = Rig()
    try:
        yield rig
    finally:
        rig.close()


def entry(rig: Rig, port: int) -> p4r.Entity:
    return rig.client.table_entry(
        TABLE, {"hdr.ethernet.dst": port}, "DemoIngress.forward", {"port": port}
    )


# --------------------------------------------------------------------------- bounded compiles


def test_reads_and_writes_are_served_while_a_pipeline_compiles(rig: Rig) -> None:
    rig.device.hold = True
    push = rig.stub.SetForwardingPipelineConfig.future(rig.push_request(), timeout=WAIT_S)
    assert rig.device.entered.wait(WAIT_S)
    rig.client.insert(entry(rig, 1))  # the running pipeline takes writes...
    assert len(rig.client.read(rig.client.table_entry(TABLE, {}))) == 1  # ...and reads
    assert rig.stub.Capabilities(p4r.CapabilitiesRequest(), timeout=WAIT_S)
    assert not push.done()
    rig.device.release.set()
    push.result()


def test_a_second_push_during_a_compile_is_resource_exhausted(rig: Rig) -> None:
    rig.device.hold = True
    push = rig.stub.SetForwardingPipelineConfig.future(rig.push_request(), timeout=WAIT_S)
    assert rig.device.entered.wait(WAIT_S)
    with pytest.raises(grpc.RpcError) as caught:
        rig.stub.SetForwardingPipelineConfig(rig.push_request(), timeout=WAIT_S)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "one pipeline at a time" in caught.value.details()
    rig.device.release.set()
    push.result()


def test_a_cancelled_push_stops_compiling(rig: Rig) -> None:
    rig.device.hold = True  # never released: only the cancel can end the compile
    push = rig.stub.SetForwardingPipelineConfig.future(rig.push_request(), timeout=WAIT_S)
    assert rig.device.entered.wait(WAIT_S)
    push.cancel()
    assert rig.device.left.wait(WAIT_S)
    rig.device.hold = False
    rig.client.set_pipeline_from_program(PROGRAM)  # the compile slot is free again


def test_a_compile_over_its_cpu_bound_is_resource_exhausted_naming_the_limit() -> None:
    rig = Rig(CompileLimits(cpu_seconds=0.3))
    try:
        rig.device.hold = True
        with pytest.raises(grpc.RpcError) as caught:
            rig.stub.SetForwardingPipelineConfig(rig.push_request(), timeout=WAIT_S)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "MAX_COMPILE_CPU_SECONDS" in caught.value.details()
        rig.client.insert(entry(rig, 2))  # the running pipeline is still the old one
    finally:
        rig.close()


def test_the_macro_bomb_pushed_with_verify_is_refused_naming_the_limit(rig: Rig) -> None:
    bomb = (
        "".join(
            f"#define {name} {' '.join([below] * 10)}\n"
            for name, below in zip("ABCDEFG", ["x", *"ABCDEF"], strict=True)
        )
        + "G\n"
    )
    request = rig.push_request(bomb.encode())
    request.action = p4r.SetForwardingPipelineConfigRequest.VERIFY
    with pytest.raises(grpc.RpcError) as caught:
        rig.stub.SetForwardingPipelineConfig(request, timeout=WAIT_S)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "MAX_MACRO_EXPANSION_TOKENS" in caught.value.details()


def test_an_include_bomb_bundle_is_refused_naming_the_limit(rig: Rig) -> None:
    files = {f"f{level}.p4": f'#include "f{level + 1}.p4"\n' * 2 for level in range(18)}
    files["f18.p4"] = "// leaf\n"
    config = SourceBundle(main="f0.p4", files=files).to_bytes()
    with pytest.raises(grpc.RpcError) as caught:
        rig.stub.SetForwardingPipelineConfig(rig.push_request(config), timeout=WAIT_S)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "MAX_INCLUDES" in caught.value.details()


# --------------------------------------------------------------------------- canonical errors


@pytest.mark.parametrize(
    "name",
    [
        "n" * (MAX_BUNDLE_NAME_BYTES + 1) + ".p4",
        "/".join(["d" * 200] * 6) + "/x.p4",  # each name fits, the path does not
    ],
)
def test_overlong_bundle_names_are_invalid_argument_and_name_no_host_path(
    rig: Rig, name: str
) -> None:
    config = json.dumps(
        {"format": "p4emu-source-bundle", "version": 1, "main": name, "files": {name: "x"}}
    ).encode()
    with pytest.raises(grpc.RpcError) as caught:
        rig.stub.SetForwardingPipelineConfig(rig.push_request(config), timeout=WAIT_S)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = caught.value.details()
    assert "MAX_BUNDLE_NAME_BYTES" in details and str(MAX_BUNDLE_PATH_BYTES) in details
    assert "/tmp" not in details and "p4emu-" not in details and len(details) < 400


def test_deeply_nested_json_is_invalid_argument(rig: Rig) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        rig.stub.SetForwardingPipelineConfig(rig.push_request(b"[" * 100_000), timeout=WAIT_S)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "nests too deeply" in caught.value.details()


def test_a_5000_character_role_is_refused_with_a_bounded_message(rig: Rig) -> None:
    request = p4r.WriteRequest(device_id=0, role="r" * 5000)
    request.election_id.low = 1
    with pytest.raises(grpc.RpcError) as caught:
        rig.stub.Write(request, timeout=WAIT_S)
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "(5000 characters)" in caught.value.details()
    assert len(caught.value.details()) <= MAX_ERROR_MESSAGE_CHARS + 100


def test_an_unexpected_exception_is_internal_and_leaks_nothing(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*args: object) -> None:
        raise RuntimeError("/tmp/secret-dir/private.p4 exploded")

    monkeypatch.setattr(rig.device, "read", explode)
    with pytest.raises(ClientError) as caught:
        rig.client.read(rig.client.table_entry(TABLE, {}))
    assert "INTERNAL" in str(caught.value) and "RuntimeError" in str(caught.value)
    assert "/tmp" not in str(caught.value) and "secret" not in str(caught.value)
    rig.client.insert(entry(rig, 3))  # the server goes on


# --------------------------------------------------------------------------- streams


def _idle(stop: threading.Event) -> Iterator[p4r.StreamMessageRequest]:
    stop.wait()
    yield from ()


def _open_idle_streams(rig: Rig, count: int, stop: threading.Event) -> list[grpc.Future]:
    return [rig.stub.StreamChannel(_idle(stop)) for _ in range(count)]


def _wait_streams(rig: Rig, count: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while len(rig.service._streams) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(rig.service._streams) == count


def test_idle_streams_past_the_per_peer_limit_are_refused_and_rpcs_go_on(rig: Rig) -> None:
    stop = threading.Event()
    rig.client.close()  # its stream would count too
    calls = _open_idle_streams(rig, service_module.MAX_STREAMS_PER_PEER, stop)
    try:
        _wait_streams(rig, service_module.MAX_STREAMS_PER_PEER)
        refused = rig.stub.StreamChannel(_idle(stop))
        with pytest.raises(grpc.RpcError) as caught:
            next(refused)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "MAX_STREAMS_PER_PEER" in caught.value.details()
        assert rig.stub.Capabilities(p4r.CapabilitiesRequest(), timeout=WAIT_S)
        read = p4r.ReadRequest(device_id=0)
        read.entities.add().table_entry.SetInParent()
        assert list(rig.stub.Read(read, timeout=WAIT_S))
    finally:
        stop.set()
        for call in calls:
            call.cancel()


def test_streams_past_the_server_limit_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_module, "MAX_STREAMS", 4)
    rig = Rig()
    stop = threading.Event()
    calls = _open_idle_streams(rig, 3, stop)  # with the client's own: 4
    try:
        _wait_streams(rig, 4)
        with pytest.raises(grpc.RpcError) as caught:
            next(rig.stub.StreamChannel(_idle(stop)))
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "MAX_STREAMS)" in caught.value.details()
        assert rig.stub.Capabilities(p4r.CapabilitiesRequest(), timeout=WAIT_S)
    finally:
        stop.set()
        for call in calls:
            call.cancel()
        rig.close()
