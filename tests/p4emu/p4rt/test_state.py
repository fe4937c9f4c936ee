from __future__ import annotations

import threading

import pytest
from finsy.proto import p4r, rpc_code
from p4rt_helpers import (
    FWD,
    PROF,
    SEL,
    T_EXACT,
    T_LPM,
    T_PROF,
    T_SEL,
    T_TERN,
    action,
    b,
    build_objects,
    codes,
    delete,
    entry,
    exact,
    insert,
    lpm,
    modify,
    new_state,
    read,
    table_entries,
    ternary,
    update,
    write_one,
)

from p4emu.p4rt import (
    CONTINUE_ON_ERROR,
    DATAPLANE_ATOMIC,
    ROLLBACK_ON_ERROR,
    P4RuntimeError,
    P4RuntimeState,
    errors_to_status,
)
from p4emu.runtime import tables as tables_module


def key(port: int) -> list[p4r.FieldMatch]:
    return [exact(1, 0xAA), exact(2, port)]


def snapshot(state: P4RuntimeState) -> list[bytes]:
    """Everything readable, serialized deterministically."""
    queries = [
        p4r.Entity(table_entry=p4r.TableEntry(counter_data=p4r.CounterData())),
        p4r.Entity(action_profile_member=p4r.ActionProfileMember()),
        p4r.Entity(action_profile_group=p4r.ActionProfileGroup()),
        p4r.Entity(counter_entry=p4r.CounterEntry()),
        p4r.Entity(meter_entry=p4r.MeterEntry()),
        p4r.Entity(register_entry=p4r.RegisterEntry()),
        p4r.Entity(value_set_entry=p4r.ValueSetEntry()),
        p4r.Entity(digest_entry=p4r.DigestEntry()),
        p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
            multicast_group_entry=p4r.MulticastGroupEntry())),
        p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
            clone_session_entry=p4r.CloneSessionEntry())),
    ]  # fmt: skip
    out = []
    for query in queries:
        out.extend(e.SerializeToString(deterministic=True) for e in state.read(query))
    for name in ("MyIngress.t_exact", "MyIngress.t_lpm", "MyIngress.t_keyless"):
        default = state.read(
            p4r.Entity(
                table_entry=p4r.TableEntry(
                    table_id=state.objects.table_info[name].id, is_default_action=True
                )
            )
        )
        out.extend(e.SerializeToString(deterministic=True) for e in default)
    return out


def test_no_pipeline_is_failed_precondition() -> None:
    state = P4RuntimeState()
    with pytest.raises(P4RuntimeError) as info:
        state.write([insert(entry(T_EXACT, key(1), action(FWD, 1)))])
    assert info.value.code == rpc_code.FAILED_PRECONDITION
    with pytest.raises(P4RuntimeError, match="FAILED_PRECONDITION"):
        state.read(p4r.Entity(table_entry=p4r.TableEntry()))
    state.load(build_objects())
    assert codes(state.write([insert(entry(T_EXACT, key(1), action(FWD, 1)))])) == ["OK"]
    state.load(None)
    assert state.objects is None


def test_continue_on_error_applies_the_good_updates() -> None:
    state = new_state()
    errors = state.write(
        [
            insert(entry(T_EXACT, key(1), action(FWD, 1))),
            insert(entry(T_EXACT, key(1), action(FWD, 1))),
            insert(entry(T_EXACT, key(2), action(FWD, 1))),
        ]
    )
    assert codes(errors) == ["OK", "ALREADY_EXISTS", "OK"]
    assert len(table_entries(state, T_EXACT)) == 2
    assert errors[1].message and errors[1].space == "ALL-sswitch-p4org"


@pytest.mark.parametrize("atomicity", [ROLLBACK_ON_ERROR, DATAPLANE_ATOMIC])
def test_atomic_modes_roll_everything_back(atomicity: int) -> None:
    state = new_state()
    assert write_one(state, insert(entry(T_EXACT, key(9), action(FWD, 1), counter_data=p4r.CounterData(packet_count=3)))) == "OK"  # fmt: skip
    assert write_one(state, insert(entry(T_LPM, [lpm(1, 0x0A000000, 8)], action(FWD, 1),
                                         meter_config=p4r.MeterConfig(cir=1, cburst=2, pir=3, pburst=4)))) == "OK"  # fmt: skip
    assert (
        write_one(state, insert(entry(T_TERN, [ternary(1, 1, 1)], action(FWD, 1), priority=5)))
        == "OK"
    )
    before = snapshot(state)
    batch = [
        insert(entry(T_EXACT, key(1), action(FWD, 1))),
        modify(entry(T_EXACT, key(9), action(FWD, 2), controller_metadata=4)),
        delete(entry(T_LPM, [lpm(1, 0x0A000000, 8)])),
        delete(entry(T_TERN, [ternary(1, 1, 1)], priority=5)),
        modify(entry(T_EXACT, [], action(FWD, 3), is_default_action=True)),
        update(p4r.Update.MODIFY, counter_entry=p4r.CounterEntry(counter_id=0x12000001, data=p4r.CounterData(packet_count=8))),
        update(p4r.Update.MODIFY, register_entry=p4r.RegisterEntry(register_id=0x16000001, data={"bitstring": b"\x05"})),
        update(p4r.Update.INSERT, packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
            multicast_group_entry=p4r.MulticastGroupEntry(multicast_group_id=3, replicas=[p4r.Replica(port=b"\x01")]))),
        update(p4r.Update.INSERT, digest_entry=p4r.DigestEntry(digest_id=0x17000001, config=p4r.DigestEntry.Config(max_list_size=1))),
        update(p4r.Update.MODIFY, value_set_entry=p4r.ValueSetEntry(value_set_id=0x03000001, members=[
            p4r.ValueSetMember(match=[exact(1, 7)])])),
        insert(entry(T_EXACT, key(1), action(FWD, 1))),  # fails: ALREADY_EXISTS
        insert(entry(T_EXACT, key(2), action(FWD, 1))),
    ]  # fmt: skip
    errors = state.write(batch, atomicity)
    result = codes(errors)
    assert result[10] == "ALREADY_EXISTS"
    assert result[:10] == ["ABORTED"] * 10 and result[11] == "ABORTED"
    assert "rolled back" in errors[0].message and "not attempted" in errors[11].message
    assert snapshot(state) == before
    # the restored direct meter and counters are the very same state
    [te] = table_entries(state, T_LPM, meter_config=p4r.MeterConfig())
    assert te.meter_config.pburst == 4


def test_rollback_restores_profiles_and_oneshots() -> None:
    state = new_state()
    member = p4r.ActionProfileMember(action_profile_id=PROF, member_id=1, action=p4r.Action(
        action_id=FWD, params=[p4r.Action.Param(param_id=1, value=b(3))]))  # fmt: skip
    assert write_one(state, update(p4r.Update.INSERT, action_profile_member=member)) == "OK"
    te = entry(T_PROF, [exact(1, 1)])
    te.action.action_profile_member_id = 1
    assert write_one(state, insert(te)) == "OK"
    oneshot = entry(T_SEL, [exact(1, 1)])
    item = oneshot.action.action_profile_action_set.action_profile_actions.add(weight=1)
    item.action.CopyFrom(
        p4r.Action(action_id=FWD, params=[p4r.Action.Param(param_id=1, value=b(4))])
    )
    assert write_one(state, insert(oneshot)) == "OK"
    before = snapshot(state)
    new_oneshot = entry(T_SEL, [exact(1, 1)])
    new_oneshot.action.action_profile_action_set.CopyFrom(oneshot.action.action_profile_action_set)
    new_oneshot.action.action_profile_action_set.action_profile_actions[0].weight = 2
    batch = [
        delete(entry(T_PROF, [exact(1, 1)])),
        update(p4r.Update.DELETE, action_profile_member=p4r.ActionProfileMember(action_profile_id=PROF, member_id=1)),
        modify(new_oneshot),
        delete(entry(T_SEL, [exact(1, 2)])),  # fails: NOT_FOUND
    ]  # fmt: skip
    assert codes(state.write(batch, ROLLBACK_ON_ERROR))[3] == "NOT_FOUND"
    assert snapshot(state) == before
    selector = state.objects.action_profiles["MyIngress.sel"]
    assert len(selector.members()) == 1 and len(selector.groups()) == 1
    assert state.objects.action_profiles["MyIngress.prof"].get_member(1).references == 1


def test_atomic_batch_that_succeeds_is_applied() -> None:
    state = new_state()
    errors = state.write(
        [insert(entry(T_EXACT, key(p), action(FWD, 1))) for p in range(3)], DATAPLANE_ATOMIC
    )
    assert codes(errors) == ["OK"] * 3
    assert len(table_entries(state, T_EXACT)) == 3


class RecordingLock:
    """A pipeline lock that records how many times it was taken."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.acquisitions = 0

    def __enter__(self) -> None:
        self.lock.acquire()
        self.acquisitions += 1

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


def test_pipeline_lock_per_update_or_per_batch() -> None:
    lock = RecordingLock()
    state = P4RuntimeState(build_objects(), lock=lock)
    batch = [insert(entry(T_EXACT, key(p), action(FWD, 1))) for p in range(3)]
    state.write(batch, CONTINUE_ON_ERROR)
    assert lock.acquisitions == 3
    lock.acquisitions = 0
    state.write([delete(entry(T_EXACT, key(p))) for p in range(3)], DATAPLANE_ATOMIC)
    assert lock.acquisitions == 1


def test_request_level_errors() -> None:
    state = new_state()
    with pytest.raises(P4RuntimeError, match="atomicity"):
        state.write([], 7)
    with pytest.raises(P4RuntimeError, match="INVALID_ARGUMENT"):
        state.read(p4r.Entity())
    with pytest.raises(P4RuntimeError, match="UNIMPLEMENTED"):
        state.read(p4r.Entity(extern_entry=p4r.ExternEntry()))
    assert codes(state.write([p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity())])) == [
        "INVALID_ARGUMENT"
    ]
    assert codes(state.write([update(p4r.Update.INSERT, extern_entry=p4r.ExternEntry())])) == [
        "UNIMPLEMENTED"
    ]
    unspecified = p4r.Update(entity=p4r.Entity(table_entry=entry(T_EXACT, key(1), action(FWD, 1))))
    assert codes(state.write([unspecified])) == ["INVALID_ARGUMENT"]


@pytest.mark.skipif(
    not tables_module.__file__ or not tables_module.__file__.endswith(".py"),
    reason="patches a Table method: the native build's Table is an extension type (the suite "
    "runs pure: tests/conftest.py)",
)
def test_internal_errors_become_internal_update_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    state = new_state()
    table = state.objects.tables["MyIngress.t_exact"]

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(table, "insert_validated", broken)
    [error] = state.write([insert(entry(T_EXACT, key(1), action(FWD, 1)))])
    assert error.canonical_code == rpc_code.INTERNAL and "boom" in error.message


def test_write_request_and_read_all() -> None:
    state = new_state()
    request = p4r.WriteRequest(
        updates=[insert(entry(T_EXACT, key(1), action(FWD, 1)))], atomicity=ROLLBACK_ON_ERROR
    )
    assert codes(state.write_request(request)) == ["OK"]
    results = state.read_all([p4r.Entity(table_entry=p4r.TableEntry(table_id=T_EXACT)),
                              p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=0x12000002))])  # fmt: skip
    assert len(results) == 3


def test_errors_to_status() -> None:
    ok = errors_to_status([p4r.Error(), p4r.Error()])
    assert ok.code == rpc_code.OK and not ok.details
    failed = errors_to_status([p4r.Error(), P4RuntimeError(rpc_code.NOT_FOUND, "x").to_proto()])
    assert failed.code == rpc_code.UNKNOWN
    assert len(failed.details) == 2
    unpacked = p4r.Error()
    assert failed.details[1].Unpack(unpacked) and unpacked.canonical_code == rpc_code.NOT_FOUND


def test_reads_of_selector_entries_by_member_filter() -> None:
    state = new_state()
    member = p4r.ActionProfileMember(action_profile_id=SEL, member_id=4, action=p4r.Action(
        action_id=FWD, params=[p4r.Action.Param(param_id=1, value=b(3))]))  # fmt: skip
    assert write_one(state, update(p4r.Update.INSERT, action_profile_member=member)) == "OK"
    te = entry(T_SEL, [exact(1, 1)])
    te.action.action_profile_member_id = 4
    assert write_one(state, insert(te)) == "OK"
    assert len(table_entries(state, T_SEL, action=p4r.TableAction(action_profile_member_id=4))) == 1
    assert table_entries(state, T_SEL, action=p4r.TableAction(action_profile_member_id=5)) == []
    assert len(read(state, table_entry=p4r.TableEntry(table_id=T_SEL))) == 1
