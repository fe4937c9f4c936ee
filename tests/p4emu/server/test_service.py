"""The P4Runtime service over real gRPC, against a scripted device."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence

import grpc
import pytest
from finsy.proto import p4r, p4r_grpc, rpc_code

from p4emu.p4rt_client.messages import per_update_errors
from p4emu.server.device import DeviceError, StreamListener
from p4emu.server.service import P4RuntimeService, start_grpc_server

BAD_TABLE = 999


class ScriptedDevice:
    device_id = 7

    def __init__(self) -> None:
        self.config: p4r.ForwardingPipelineConfig | None = None
        self.entries: list[p4r.Entity] = []
        self.packets_out: list[p4r.PacketOut] = []
        self.acks: list[p4r.DigestListAck] = []
        self.listener: StreamListener | None = None
        self.commits: list[bool] = []

    def has_pipeline(self) -> bool:
        return self.config is not None

    def verify_pipeline(self, config: p4r.ForwardingPipelineConfig) -> object:
        if config.p4_device_config == b"bad":
            raise DeviceError(rpc_code.INVALID_ARGUMENT, "prog.p4:1:1: error: bad program")
        return config

    def commit_pipeline(self, prepared: object, *, reconcile: bool) -> None:
        self.config = prepared  # type: ignore[assignment]
        self.commits.append(reconcile)

    def pipeline_config(self) -> p4r.ForwardingPipelineConfig | None:
        return self.config

    def write(self, updates: Sequence[p4r.Update], atomicity: int) -> list[p4r.Error]:
        errors = []
        for update in updates:
            if update.entity.table_entry.table_id == BAD_TABLE:
                errors.append(
                    p4r.Error(
                        canonical_code=rpc_code.NOT_FOUND, message="table id 999 does not exist"
                    )
                )
            else:
                self.entries.append(update.entity)
                errors.append(p4r.Error(canonical_code=rpc_code.OK))
        return errors

    def read(self, entities: Sequence[p4r.Entity]) -> Iterator[p4r.Entity]:
        return iter(list(self.entries))

    def packet_out(self, packet: p4r.PacketOut) -> None:
        if not packet.payload:
            raise DeviceError(rpc_code.INVALID_ARGUMENT, "empty payload")
        self.packets_out.append(packet)
        if self.listener is not None:
            response = p4r.StreamMessageResponse()
            response.packet.payload = b"echo:" + packet.payload
            self.listener(response)

    def digest_ack(self, ack: p4r.DigestListAck) -> None:
        self.acks.append(ack)

    def set_stream_listener(self, listener: StreamListener | None) -> None:
        self.listener = listener


class StreamClient:
    """A StreamChannel driven from the test thread."""

    def __init__(self, stub: p4r_grpc.P4RuntimeStub) -> None:
        self.requests: queue.Queue[p4r.StreamMessageRequest | None] = queue.Queue()
        self.responses: queue.Queue[p4r.StreamMessageResponse | grpc.RpcError] = queue.Queue()
        self.call = stub.StreamChannel(iter(self.requests.get, None))
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        try:
            for response in self.call:
                self.responses.put(response)
        except grpc.RpcError as exc:
            self.responses.put(exc)

    def send(self, request: p4r.StreamMessageRequest) -> None:
        self.requests.put(request)

    def arbitrate(self, election_low: int, device_id: int = 7) -> None:
        request = p4r.StreamMessageRequest()
        request.arbitration.device_id = device_id
        request.arbitration.election_id.low = election_low
        self.send(request)

    def next(self, timeout: float = 5.0):
        return self.responses.get(timeout=timeout)

    def close(self) -> None:
        self.requests.put(None)
        self.call.cancel()


@pytest.fixture
def rig():
    device = ScriptedDevice()
    server, port = start_grpc_server(P4RuntimeService(device), "127.0.0.1:0")
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = p4r_grpc.P4RuntimeStub(channel)
    clients: list[StreamClient] = []

    def client() -> StreamClient:
        clients.append(StreamClient(stub))
        return clients[-1]

    yield device, stub, client
    for c in clients:
        c.close()
    channel.close()
    server.stop(None)


def primary(client_factory, low: int = 1) -> StreamClient:
    client = client_factory()
    client.arbitrate(low)
    assert client.next().arbitration.status.code == rpc_code.OK
    return client


def write_request(low: int, *table_ids: int) -> p4r.WriteRequest:
    request = p4r.WriteRequest(device_id=7)
    request.election_id.low = low
    for table_id in table_ids:
        update = request.updates.add()
        update.type = p4r.Update.INSERT
        update.entity.table_entry.table_id = table_id
    return request


def set_pipeline(
    stub,
    low: int,
    payload: bytes = b"prog",
    action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
):
    request = p4r.SetForwardingPipelineConfigRequest(device_id=7, action=action)
    request.election_id.low = low
    request.config.p4_device_config = payload
    request.config.cookie.cookie = 42
    request.config.p4info.pkg_info.arch = "v1model"
    return stub.SetForwardingPipelineConfig(request)


def test_capabilities(rig) -> None:
    _, stub, _ = rig
    assert stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version == "1.4.0"


def test_write_needs_primary_then_pipeline(rig) -> None:
    device, stub, client = rig
    with pytest.raises(grpc.RpcError) as info:
        stub.Write(write_request(1, 1))
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "no primary client" in info.value.details()
    primary(client, 1)
    with pytest.raises(grpc.RpcError) as info:
        stub.Write(write_request(1, 1))
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    set_pipeline(stub, 1)
    stub.Write(write_request(1, 1, 2))
    assert len(device.entries) == 2


def test_wrong_device_id_is_not_found(rig) -> None:
    _, stub, _ = rig
    request = write_request(1, 1)
    request.device_id = 3
    with pytest.raises(grpc.RpcError) as info:
        stub.Write(request)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_batch_errors_carry_one_p4_error_per_update(rig) -> None:
    device, stub, client = rig
    primary(client, 1)
    set_pipeline(stub, 1)
    with pytest.raises(grpc.RpcError) as info:
        stub.Write(write_request(1, 1, BAD_TABLE, 3))
    assert info.value.code() == grpc.StatusCode.UNKNOWN
    errors = per_update_errors(info.value)
    assert [e.canonical_code for e in errors] == [rpc_code.OK, rpc_code.NOT_FOUND, rpc_code.OK]
    assert "table id 999" in errors[1].message
    assert len(device.entries) == 2


def test_backup_cannot_write_and_primary_handover(rig) -> None:
    _, stub, client = rig
    first = primary(client, 5)
    second = client()
    second.arbitrate(3)
    assert second.next().arbitration.status.code == rpc_code.ALREADY_EXISTS
    set_pipeline(stub, 5)
    with pytest.raises(grpc.RpcError) as info:
        stub.Write(write_request(3, 1))
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    third = client()
    third.arbitrate(9)
    assert third.next().arbitration.status.code == rpc_code.OK
    assert first.next().arbitration.status.code == rpc_code.ALREADY_EXISTS
    assert second.next().arbitration.election_id.low == 9
    stub.Write(write_request(9, 1))


def test_duplicate_election_id_ends_that_stream(rig) -> None:
    _, _, client = rig
    primary(client, 4)
    intruder = client()
    intruder.arbitrate(4)
    error = intruder.next()
    assert isinstance(error, grpc.RpcError)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_packet_out_and_packet_in_go_through_the_primary_only(rig) -> None:
    device, stub, client = rig
    main = primary(client, 2)
    backup = client()
    backup.arbitrate(1)
    assert backup.next().arbitration.status.code == rpc_code.ALREADY_EXISTS
    set_pipeline(stub, 2)
    request = p4r.StreamMessageRequest()
    request.packet.payload = b"frame"
    backup.send(request)
    refused = backup.next()
    assert refused.error.canonical_code == rpc_code.PERMISSION_DENIED
    assert refused.error.packet_out.packet_out.payload == b"frame"
    main.send(request)
    assert main.next().packet.payload == b"echo:frame"
    empty = p4r.StreamMessageRequest()
    empty.packet.payload = b""
    main.send(empty)
    assert main.next().error.canonical_code == rpc_code.INVALID_ARGUMENT
    assert [p.payload for p in device.packets_out] == [b"frame"]


def test_pipeline_actions_and_get_config_response_types(rig) -> None:
    device, stub, client = rig
    primary(client, 1)
    actions = p4r.SetForwardingPipelineConfigRequest
    with pytest.raises(grpc.RpcError) as info:
        set_pipeline(stub, 1, b"bad")
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "bad program" in info.value.details()
    with pytest.raises(grpc.RpcError) as info:
        set_pipeline(stub, 1, action=actions.COMMIT)
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as info:
        stub.GetForwardingPipelineConfig(p4r.GetForwardingPipelineConfigRequest(device_id=7))
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    set_pipeline(stub, 1, action=actions.VERIFY)
    assert device.config is None
    set_pipeline(stub, 1, action=actions.VERIFY_AND_SAVE)
    set_pipeline(stub, 1, action=actions.COMMIT)
    set_pipeline(stub, 1, action=actions.RECONCILE_AND_COMMIT)
    assert device.commits == [False, True]
    kinds = p4r.GetForwardingPipelineConfigRequest
    got = {
        kind: stub.GetForwardingPipelineConfig(kinds(device_id=7, response_type=kind)).config
        for kind in (
            kinds.ALL,
            kinds.COOKIE_ONLY,
            kinds.P4INFO_AND_COOKIE,
            kinds.DEVICE_CONFIG_AND_COOKIE,
        )
    }
    assert {
        k: (c.cookie.cookie, c.p4_device_config, c.p4info.pkg_info.arch) for k, c in got.items()
    } == {
        kinds.ALL: (42, b"prog", "v1model"),
        kinds.COOKIE_ONLY: (42, b"", ""),
        kinds.P4INFO_AND_COOKIE: (42, b"", "v1model"),
        kinds.DEVICE_CONFIG_AND_COOKIE: (42, b"prog", ""),
    }


def test_read_returns_entities(rig) -> None:
    _, stub, client = rig
    primary(client, 1)
    set_pipeline(stub, 1)
    stub.Write(write_request(1, 1, 2, 3))
    request = p4r.ReadRequest(device_id=7)
    request.entities.add().table_entry.SetInParent()
    got = [e.table_entry.table_id for r in stub.Read(request) for e in r.entities]
    assert got == [1, 2, 3]
