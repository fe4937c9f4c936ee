"""Thousands of random and malformed P4Runtime messages: the server stays up, the state holds
exactly the valid writes, and every refusal is a specific error."""

from __future__ import annotations

import os
import random
from pathlib import Path

import grpc
import pytest
from finsy.proto import p4r, rpc_code

from p4emu.server.client import P4RuntimeClient, WriteError
from p4emu.server.service import P4RuntimeService, start_grpc_server
from p4emu.server.switch_device import DeviceSettings, SwitchDevice

PROGRAM = Path(__file__).parent / "programs" / "p4rt_demo.p4"
TABLE = "DemoIngress.l2_fwd"
ROUNDS = int(os.environ.get("P4EMU_FUZZ_ROUNDS", "2000"))


@pytest.fixture(scope="module")
def server():
    device = SwitchDevice(DeviceSettings(cpu_port=510))
    grpc_server, port = start_grpc_server(P4RuntimeService(device), "127.0.0.1:0")
    client = P4RuntimeClient(f"127.0.0.1:{port}").connect()
    client.set_pipeline_from_program(PROGRAM)
    yield client, device, port
    client.close()
    grpc_server.stop(None)


def random_bytes(rng: random.Random, limit: int = 40) -> bytes:
    return rng.randbytes(rng.randint(0, limit))


def corrupt(rng: random.Random, entity: p4r.Entity) -> p4r.Entity:
    """A table-entry entity broken in one specific way that must be refused."""
    bad = p4r.Entity()
    bad.CopyFrom(entity)
    entry = bad.table_entry
    choice = rng.randrange(8)
    if choice == 0:
        entry.table_id = rng.choice([0, 1, 0x02000000 | rng.randrange(1 << 24)])
    elif choice == 1:
        entry.match[0].exact.value = b"\x01" + rng.randbytes(6)  # 56 bits into bit<48>
    elif choice == 2:
        del entry.match[:]  # exact key missing
    elif choice == 3:
        entry.match[0].field_id = 9
    elif choice == 4:
        entry.action.action.action_id = rng.randrange(1 << 32)
    elif choice == 5:
        del entry.action.action.params[:]
    elif choice == 6:
        entry.action.action.params[0].value = b"\x02\x00"  # 10 bits into bit<9>
    else:
        entry.priority = rng.randint(1, 100)  # exact tables take no priority
    return bad


def test_random_and_malformed_writes_leave_exactly_the_valid_ones(server) -> None:
    client, _, _ = server
    rng = random.Random(20261122)
    model: dict[int, int] = {}  # dst mac -> port
    keys = [rng.randrange(1 << 48) for _ in range(40)]

    def entry(mac: int, port: int | None = None) -> p4r.Entity:
        if port is None:
            return client.table_entry(TABLE, {"hdr.ethernet.dst": mac})
        return client.table_entry(
            TABLE, {"hdr.ethernet.dst": mac}, "DemoIngress.forward", {"port": port}
        )

    for _ in range(ROUNDS // 4):
        batch: list[tuple[int, p4r.Entity]] = []
        expected: list[bool] = []
        staged = dict(model)
        for _ in range(4):
            mac = rng.choice(keys)
            kind = rng.randrange(5)
            if kind == 0:
                update = (p4r.Update.INSERT, entry(mac, rng.randrange(1, 500)))
                ok = mac not in staged
            elif kind == 1:
                update = (p4r.Update.MODIFY, entry(mac, rng.randrange(1, 500)))
                ok = mac in staged
            elif kind == 2:
                update = (p4r.Update.DELETE, entry(mac))
                ok = mac in staged
            elif kind == 3:
                update = (
                    rng.choice([p4r.Update.INSERT, p4r.Update.MODIFY]),
                    corrupt(rng, entry(mac, 3)),
                )
                ok = False
            else:
                update = (p4r.Update.UNSPECIFIED, entry(mac, 1))
                ok = False
            if ok:
                if update[0] == p4r.Update.DELETE:
                    staged.pop(mac)
                else:
                    staged[mac] = int.from_bytes(
                        update[1].table_entry.action.action.params[0].value, "big"
                    )
            batch.append(update)
            expected.append(ok)
        try:
            client.write(batch)
            codes = [rpc_code.OK] * len(batch)
        except WriteError as exc:
            codes = [e.canonical_code for e in exc.errors]
            assert all(e.message for e in exc.errors if e.canonical_code != rpc_code.OK)
        assert [code == rpc_code.OK for code in codes] == expected
        model = staged

    held = {
        int.from_bytes(e.table_entry.match[0].exact.value, "big"): int.from_bytes(
            e.table_entry.action.action.params[0].value, "big"
        )
        for e in client.read(client.table_entry(TABLE, {}))
    }
    assert held == model


@pytest.mark.scenario  # a fuzz campaign against one server (CI, not -m unit)
def test_garbage_requests_and_reads_never_take_the_server_down(server) -> None:
    client, _, port = server
    rng = random.Random(7)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    raw_write = channel.unary_unary(
        "/p4.v1.P4Runtime/Write", request_serializer=None, response_deserializer=None
    )
    raw_read = channel.unary_stream(
        "/p4.v1.P4Runtime/Read", request_serializer=None, response_deserializer=None
    )
    refused = 0
    for _ in range(ROUNDS // 4):
        try:
            raw_write(random_bytes(rng, 200), timeout=5)
        except grpc.RpcError as exc:
            refused += 1
            assert exc.code() != grpc.StatusCode.UNAVAILABLE
        try:
            list(raw_read(random_bytes(rng, 100), timeout=5))
        except grpc.RpcError as exc:
            assert exc.code() != grpc.StatusCode.UNAVAILABLE
        entity = p4r.Entity()
        kind = rng.choice(
            [
                "table_entry",
                "counter_entry",
                "register_entry",
                "meter_entry",
                "direct_counter_entry",
                "packet_replication_engine_entry",
                "value_set_entry",
                "action_profile_member",
            ]
        )
        sub = getattr(entity, kind)
        sub.SetInParent()
        for field in sub.DESCRIPTOR.fields:
            if (
                field.name.endswith("_id")
                and field.type == field.TYPE_UINT32
                and rng.random() < 0.7
            ):
                setattr(sub, field.name, rng.randrange(1 << 32))
        try:
            client.read(entity)
        except Exception as exc:  # a specific refusal, never a dead server
            assert "UNAVAILABLE" not in str(exc)
    assert refused > 0
    channel.close()
    assert client.read(client.table_entry(TABLE, {})) is not None


def test_stream_garbage_gets_stream_errors_and_the_primary_keeps_working(server) -> None:
    client, _, _ = server
    rng = random.Random(99)
    packet_out_info = next(
        m for m in client.p4info.controller_packet_metadata if m.preamble.name == "packet_out"
    )
    for _ in range(ROUNDS // 10):
        request = p4r.StreamMessageRequest()
        choice = rng.randrange(4)
        if choice == 0:
            request.packet.payload = random_bytes(rng, 64)
            request.packet.metadata.add(
                metadata_id=rng.choice([1, 2, 7, 99]), value=random_bytes(rng, 4) or b"\x00"
            )
        elif choice == 1:
            request.digest_ack.digest_id = rng.randrange(1 << 32)
            request.digest_ack.list_id = rng.randrange(1 << 64)
        elif choice == 2:
            request.packet.payload = random_bytes(rng, 64)
            request.packet.metadata.add(
                metadata_id=packet_out_info.metadata[0].id, value=b"\xff\xff"
            )
        else:
            request.other.type_url = "type.googleapis.com/nonsense"
        client._requests.put(request)
    errors = 0
    while True:
        try:
            error = client.stream_errors.get(timeout=2)
        except Exception:
            break
        errors += 1
        assert error.message
    assert errors > 0
    client.insert(
        client.table_entry(TABLE, {"hdr.ethernet.dst": 0xABC}, "DemoIngress.forward", {"port": 4})
    )
    client.delete(client.table_entry(TABLE, {"hdr.ethernet.dst": 0xABC}))


def test_a_large_failed_batch_reports_every_update_error(server) -> None:
    client, _, _ = server
    duplicate = client.table_entry(
        TABLE, {"hdr.ethernet.dst": 0xD00D}, "DemoIngress.forward", {"port": 1}
    )
    client.insert(duplicate)
    broken = corrupt(random.Random(1), duplicate)
    broken.table_entry.table_id = 1
    with pytest.raises(WriteError) as info:
        client.write([(p4r.Update.INSERT, broken)] * 400)
    assert len(info.value.errors) == 400
    assert all(e.canonical_code == rpc_code.INVALID_ARGUMENT for e in info.value.errors)
    client.delete(duplicate)
