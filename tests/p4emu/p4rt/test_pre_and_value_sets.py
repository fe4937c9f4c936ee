from __future__ import annotations

import pytest
from finsy.proto import p4r
from p4rt_helpers import VS, VS2, exact, new_state, read, ternary, update, write_one

from p4emu.p4rt import P4RuntimeError
from p4emu.runtime.pre import Replica

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


def mc(group_id: int, *replicas: tuple[int, int], metadata: bytes = b"", legacy: bool = False):
    entry = p4r.MulticastGroupEntry(multicast_group_id=group_id, metadata=metadata)
    for port, instance in replicas:
        r = entry.replicas.add(instance=instance)
        if legacy:
            r.egress_port = port
        else:
            r.port = port.to_bytes(max(1, (port.bit_length() + 7) // 8), "big")
    return p4r.PacketReplicationEngineEntry(multicast_group_entry=entry)


def clone(session_id: int, *replicas: tuple[int, int], length: int = 0, cos: int = 0):
    entry = p4r.CloneSessionEntry(
        session_id=session_id, packet_length_bytes=length, class_of_service=cos
    )
    for port, instance in replicas:
        entry.replicas.add(port=bytes([port]), instance=instance)
    return p4r.PacketReplicationEngineEntry(clone_session_entry=entry)


def test_multicast_group_lifecycle_and_replication() -> None:
    state = new_state()
    assert write_one(state, update(INSERT, packet_replication_engine_entry=mc(1, (3, 1), (2, 1), (2, 0), metadata=b"x"))) == "OK"  # fmt: skip
    assert set(state.objects.pre.replicate(1)) == {Replica(3, 1), Replica(2, 1), Replica(2, 0)}
    [got] = read(state, packet_replication_engine_entry=mc(1))
    group = got.packet_replication_engine_entry.multicast_group_entry
    assert [(r.port, r.instance) for r in group.replicas] == [
        (b"\x02", 0),
        (b"\x02", 1),
        (b"\x03", 1),
    ]
    assert group.metadata == b"x"
    assert (
        write_one(state, update(INSERT, packet_replication_engine_entry=mc(1, (1, 0))))
        == "ALREADY_EXISTS"
    )
    assert (
        write_one(state, update(MODIFY, packet_replication_engine_entry=mc(1, (5, 0), legacy=True)))
        == "OK"
    )
    [got] = read(state, packet_replication_engine_entry=mc(0))
    [replica] = got.packet_replication_engine_entry.multicast_group_entry.replicas
    assert replica.WhichOneof("port_kind") == "egress_port" and replica.egress_port == 5
    assert write_one(state, update(DELETE, packet_replication_engine_entry=mc(1))) == "OK"
    assert state.objects.pre.replicate(1) == ()
    assert write_one(state, update(DELETE, packet_replication_engine_entry=mc(1))) == "NOT_FOUND"
    assert write_one(state, update(MODIFY, packet_replication_engine_entry=mc(1))) == "NOT_FOUND"
    with pytest.raises(P4RuntimeError, match="NOT_FOUND"):
        read(state, packet_replication_engine_entry=mc(1))


@pytest.mark.parametrize(
    ("entry", "code"),
    [
        (mc(0, (1, 0)), "INVALID_ARGUMENT"),
        (mc(1 << 15, (1, 0)), "OUT_OF_RANGE"),
        (mc(1, (1, 0), (1, 0)), "INVALID_ARGUMENT"),
        (mc(1, (512, 0)), "INVALID_ARGUMENT"),
        (mc(1, (1, 1 << 16)), "INVALID_ARGUMENT"),
        (clone(0, (1, 0)), "INVALID_ARGUMENT"),
        (clone(1 << 15, (1, 0)), "INVALID_ARGUMENT"),
        (clone(1, (1, 0), cos=1), "UNIMPLEMENTED"),
        (clone(1, (1, 0), length=-1), "INVALID_ARGUMENT"),
        (p4r.PacketReplicationEngineEntry(), "INVALID_ARGUMENT"),
    ],
)
def test_pre_errors(entry: p4r.PacketReplicationEngineEntry, code: str) -> None:
    assert write_one(new_state(), update(INSERT, packet_replication_engine_entry=entry)) == code


def test_replica_without_port_is_invalid() -> None:
    entry = mc(1)
    entry.multicast_group_entry.replicas.add(instance=1)
    assert (
        write_one(new_state(), update(INSERT, packet_replication_engine_entry=entry))
        == "INVALID_ARGUMENT"
    )


def test_clone_session_lifecycle() -> None:
    state = new_state()
    assert (
        write_one(
            state, update(INSERT, packet_replication_engine_entry=clone(5, (4, 0), length=64))
        )
        == "OK"
    )
    assert state.objects.pre.clone(5) == ((Replica(4, 0),), 64)
    [got] = read(state, packet_replication_engine_entry=clone(0))
    session = got.packet_replication_engine_entry.clone_session_entry
    assert (session.session_id, session.packet_length_bytes, session.replicas[0].port) == (
        5,
        64,
        b"\x04",
    )
    assert (
        write_one(state, update(MODIFY, packet_replication_engine_entry=clone(5, (6, 1)))) == "OK"
    )
    assert state.objects.pre.clone(5) == ((Replica(6, 1),), 0)
    assert (
        write_one(state, update(INSERT, packet_replication_engine_entry=clone(5, (6, 1))))
        == "ALREADY_EXISTS"
    )
    assert write_one(state, update(DELETE, packet_replication_engine_entry=clone(5))) == "OK"
    assert state.objects.pre.clone(5) == ((), 0)
    assert write_one(state, update(DELETE, packet_replication_engine_entry=clone(5))) == "NOT_FOUND"


def vs_entry(value_set_id: int, *members: list[p4r.FieldMatch]) -> p4r.ValueSetEntry:
    out = p4r.ValueSetEntry(value_set_id=value_set_id)
    for matches in members:
        out.members.add().match.extend(matches)
    return out


def test_value_set_modify_replaces_members() -> None:
    state = new_state()
    value_set = state.objects.value_sets["MyParser.vs"]
    assert write_one(state, update(MODIFY, value_set_entry=vs_entry(VS, [exact(1, 0x22F3)], [exact(1, 0x893B)]))) == "OK"  # fmt: skip
    assert value_set.contains((0x893B,)) and not value_set.contains((0x0800,))
    [got] = read(state, value_set_entry=p4r.ValueSetEntry(value_set_id=VS))
    assert [m.match[0].exact.value for m in got.value_set_entry.members] == [
        b"\x22\xf3",
        b"\x89\x3b",
    ]
    assert write_one(state, update(MODIFY, value_set_entry=vs_entry(VS))) == "OK"
    assert len(value_set) == 0
    assert len(read(state, value_set_entry=p4r.ValueSetEntry())) == 2


def test_value_set_with_ternary_fields() -> None:
    state = new_state()
    member = [ternary(1, 0x10, 0xF0), exact(2, 7)]
    assert (
        write_one(state, update(MODIFY, value_set_entry=vs_entry(VS2, member, [exact(2, 8)])))
        == "OK"
    )
    value_set = state.objects.value_sets["MyParser.vs2"]
    assert value_set.contains((0x1F, 7)) and value_set.contains((0xAB, 8))
    assert not value_set.contains((0x2F, 7))
    [got] = read(state, value_set_entry=p4r.ValueSetEntry(value_set_id=VS2))
    assert [len(m.match) for m in got.value_set_entry.members] == [2, 1]


@pytest.mark.parametrize(
    ("kind", "msg", "code"),
    [
        (INSERT, vs_entry(VS, [exact(1, 1)]), "INVALID_ARGUMENT"),
        (DELETE, vs_entry(VS), "INVALID_ARGUMENT"),
        (MODIFY, vs_entry(VS, [exact(1, 1)], [exact(1, 1)]), "ALREADY_EXISTS"),
        (MODIFY, vs_entry(VS, [exact(1, 1)], [exact(1, 2)], [exact(1, 3)]), "RESOURCE_EXHAUSTED"),
        (MODIFY, vs_entry(VS, [exact(1, 0x10000)]), "INVALID_ARGUMENT"),
        (MODIFY, vs_entry(VS, []), "INVALID_ARGUMENT"),  # exact field missing
        (MODIFY, vs_entry(0x03000099), "INVALID_ARGUMENT"),
    ],
)
def test_value_set_errors(kind: int, msg: p4r.ValueSetEntry, code: str) -> None:
    state = new_state()
    assert write_one(state, update(MODIFY, value_set_entry=vs_entry(VS, [exact(1, 5)]))) == "OK"
    assert write_one(state, update(kind, value_set_entry=msg)) == code
    assert state.objects.value_sets["MyParser.vs"].contains((5,))  # unchanged
