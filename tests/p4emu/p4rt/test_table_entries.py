from __future__ import annotations

import pytest
from finsy.proto import p4r
from p4rt_helpers import (
    DEF_ONLY,
    FWD,
    NO_ACTION,
    SET_MAC,
    T_CONST,
    T_EXACT,
    T_INIT,
    T_KEYLESS,
    T_LPM,
    T_TERN,
    TBL_ONLY,
    action,
    delete,
    entry,
    exact,
    insert,
    lpm,
    modify,
    new_state,
    optional,
    range_,
    table_entries,
    ternary,
    write_one,
)

from p4emu.runtime.tables import Exact


def exact_key(dst: int = 0xAABB, port: int = 3) -> list[p4r.FieldMatch]:
    return [exact(1, dst), exact(2, port)]


def test_insert_then_read_back_is_canonical() -> None:
    state = new_state()
    te = entry(
        T_EXACT, [exact(1, b"\x00\x00\xaa\xbb"), exact(2, b"\x00\x03")], action(FWD, b"\x00\x05")
    )
    assert write_one(state, insert(te)) == "OK"
    [got] = table_entries(state, T_EXACT)
    assert [m.exact.value for m in got.match] == [b"\xaa\xbb", b"\x03"]
    assert got.action.action.params[0].value == b"\x05"
    assert not got.HasField("counter_data")


def test_insert_twice_is_already_exists_and_changes_nothing() -> None:
    state = new_state()
    assert write_one(state, insert(entry(T_EXACT, exact_key(), action(FWD, 1)))) == "OK"
    assert write_one(state, insert(entry(T_EXACT, exact_key(), action(FWD, 2)))) == "ALREADY_EXISTS"
    [got] = table_entries(state, T_EXACT)
    assert got.action.action.params[0].value == b"\x01"


def test_table_full_is_resource_exhausted() -> None:
    state = new_state()
    for port in range(4):
        assert (
            write_one(state, insert(entry(T_EXACT, exact_key(port=port), action(FWD, 1)))) == "OK"
        )
    assert (
        write_one(state, insert(entry(T_EXACT, exact_key(port=9), action(FWD, 1))))
        == "RESOURCE_EXHAUSTED"
    )


@pytest.mark.parametrize(
    ("te", "code"),
    [
        (entry(0x02000099, exact_key(), action(FWD, 1)), "INVALID_ARGUMENT"),  # unknown table
        (entry(0x01000002, exact_key(), action(FWD, 1)), "INVALID_ARGUMENT"),  # action id as table
        (entry(T_EXACT, exact_key()), "INVALID_ARGUMENT"),  # no action
        (entry(T_EXACT, exact_key(), action(0x01000099)), "INVALID_ARGUMENT"),  # unknown action
        (entry(T_EXACT, exact_key(), action(FWD)), "INVALID_ARGUMENT"),  # missing param
        (entry(T_EXACT, exact_key(), action(FWD, 1, 2)), "INVALID_ARGUMENT"),  # extra param
        (entry(T_EXACT, exact_key(), action(FWD, 512)), "INVALID_ARGUMENT"),  # too wide
        (entry(T_EXACT, exact_key(), action(FWD, b"")), "INVALID_ARGUMENT"),  # empty bytes
        (entry(T_EXACT, exact_key(port=512), action(FWD, 1)), "INVALID_ARGUMENT"),
        (entry(T_EXACT, [exact(1, 1)], action(FWD, 1)), "INVALID_ARGUMENT"),  # missing exact
        (entry(T_EXACT, exact_key(), action(FWD, 1), priority=1), "INVALID_ARGUMENT"),
        (entry(T_EXACT, exact_key(), action(DEF_ONLY)), "PERMISSION_DENIED"),
        (entry(T_EXACT, exact_key(), action(FWD, 1), is_default_action=True), "INVALID_ARGUMENT"),
        (entry(T_EXACT, exact_key(), action(FWD, 1), idle_timeout_ns=-1), "INVALID_ARGUMENT"),
        (entry(T_TERN, [ternary(1, 1, 1)], action(FWD, 1)), "INVALID_ARGUMENT"),  # no priority
        (entry(T_TERN, [ternary(1, 1, 1)], action(FWD, 1), idle_timeout_ns=5), "INVALID_ARGUMENT"),
        (entry(T_KEYLESS, [], action(FWD, 1)), "INVALID_ARGUMENT"),
        (entry(T_CONST, [exact(1, 9)], action(FWD, 1)), "PERMISSION_DENIED"),
        (entry(T_EXACT, exact_key(), action(FWD, 1), is_const=True), "INVALID_ARGUMENT"),
        (entry(T_LPM, [lpm(1, 0x0A000000, 8)], action(FWD, 1), meter_counter_data=p4r.MeterCounterData()), "UNIMPLEMENTED"),
        (entry(T_TERN, [ternary(1, 1, 1)], action(FWD, 1), priority=1, counter_data=p4r.CounterData()), "INVALID_ARGUMENT"),
        (entry(T_TERN, [ternary(1, 1, 1)], action(FWD, 1), priority=1, meter_config=p4r.MeterConfig()), "INVALID_ARGUMENT"),
    ],
)  # fmt: skip
def test_bad_inserts_are_refused_with_the_spec_code(te: p4r.TableEntry, code: str) -> None:
    state = new_state()
    before = [e.SerializeToString() for e in table_entries(state)]
    assert write_one(state, insert(te)) == code
    assert [e.SerializeToString() for e in table_entries(state)] == before


def test_time_since_last_hit_in_a_write_is_invalid() -> None:
    state = new_state()
    te = entry(T_EXACT, exact_key(), action(FWD, 1))
    te.time_since_last_hit.elapsed_ns = 0
    assert write_one(state, insert(te)) == "INVALID_ARGUMENT"


def test_modify_changes_action_and_keeps_counter_when_counter_data_unset() -> None:
    state = new_state()
    te = entry(
        T_EXACT,
        exact_key(),
        action(FWD, 1),
        counter_data=p4r.CounterData(packet_count=7, byte_count=70),
    )
    assert write_one(state, insert(te)) == "OK"
    assert (
        write_one(state, modify(entry(T_EXACT, exact_key(), action(SET_MAC, 0x112233445566))))
        == "OK"
    )
    [got] = table_entries(state, T_EXACT, counter_data=p4r.CounterData())
    assert got.action.action.action_id == SET_MAC
    assert (got.counter_data.packet_count, got.counter_data.byte_count) == (7, 70)


def test_modify_without_action_keeps_the_action_but_replaces_metadata() -> None:
    state = new_state()
    te = entry(T_EXACT, exact_key(), action(FWD, 1), controller_metadata=5, metadata=b"m")
    assert write_one(state, insert(te)) == "OK"
    assert write_one(state, modify(entry(T_EXACT, exact_key(), controller_metadata=6))) == "OK"
    [got] = table_entries(state, T_EXACT)
    assert got.action.action.action_id == FWD
    assert (got.controller_metadata, got.metadata) == (6, b"")


def test_modify_and_delete_of_a_missing_entry_are_not_found() -> None:
    state = new_state()
    assert write_one(state, modify(entry(T_EXACT, exact_key(), action(FWD, 1)))) == "NOT_FOUND"
    assert write_one(state, delete(entry(T_EXACT, exact_key()))) == "NOT_FOUND"


def test_delete_only_uses_the_key() -> None:
    state = new_state()
    assert write_one(state, insert(entry(T_EXACT, exact_key(), action(FWD, 1)))) == "OK"
    # a nonsensical action must be ignored by DELETE
    assert write_one(state, delete(entry(T_EXACT, exact_key(), action(0x01000099)))) == "OK"
    assert table_entries(state, T_EXACT) == []


def test_priority_identifies_ternary_entries() -> None:
    state = new_state()
    key = [ternary(1, 0x0100, 0xFF00), range_(2, 1, 10), optional(3, 5)]
    assert write_one(state, insert(entry(T_TERN, key, action(FWD, 1), priority=10))) == "OK"
    assert write_one(state, insert(entry(T_TERN, key, action(FWD, 2), priority=20))) == "OK"
    assert write_one(state, delete(entry(T_TERN, key, priority=30))) == "NOT_FOUND"
    assert write_one(state, delete(entry(T_TERN, key, priority=10))) == "OK"
    [left] = table_entries(state, T_TERN)
    assert left.priority == 20
    assert [m.field_id for m in left.match] == [1, 2, 3]


def test_dont_care_entry_and_wildcard_reads_with_filters() -> None:
    state = new_state()
    assert write_one(state, insert(entry(T_TERN, [], action(FWD, 1), priority=1))) == "OK"
    assert write_one(state, insert(entry(T_TERN, [ternary(1, 1, 1)], action(NO_ACTION), priority=2, controller_metadata=9))) == "OK"  # fmt: skip
    assert len(table_entries(state, T_TERN)) == 2
    [dont_care] = table_entries(state, T_TERN, priority=1)
    assert list(dont_care.match) == []
    [by_action] = table_entries(
        state, T_TERN, action=p4r.TableAction(action=p4r.Action(action_id=NO_ACTION))
    )
    assert by_action.priority == 2
    assert [e.priority for e in table_entries(state, T_TERN, controller_metadata=9)] == [2]
    assert table_entries(state, T_TERN, metadata=b"nope") == []


def test_read_of_one_entry_by_key_and_of_a_missing_key() -> None:
    state = new_state()
    assert write_one(state, insert(entry(T_EXACT, exact_key(), action(FWD, 1)))) == "OK"
    assert len(table_entries(state, T_EXACT, match=exact_key())) == 1
    assert table_entries(state, T_EXACT, match=exact_key(port=7)) == []


def test_read_with_bad_key_or_table_raises() -> None:
    from p4emu.p4rt import P4RuntimeError

    state = new_state()
    with pytest.raises(P4RuntimeError, match="INVALID_ARGUMENT"):
        table_entries(state, 0x02000099)
    with pytest.raises(P4RuntimeError, match="INVALID_ARGUMENT"):
        table_entries(state, T_EXACT, match=[exact(1, 1)])
    with pytest.raises(P4RuntimeError, match="needs a table_id"):
        table_entries(state, 0, match=exact_key())


def test_wildcard_read_of_every_table_includes_const_entries() -> None:
    state = new_state()
    got = table_entries(state)
    const_entries = [e for e in got if e.table_id == T_CONST]
    assert len(const_entries) == 2
    assert all(e.is_const for e in const_entries)
    init_entries = {e.match[0].exact.value: e.is_const for e in got if e.table_id == T_INIT}
    assert init_entries == {b"\x01": True, b"\x02": False}


def test_const_table_allows_only_direct_resource_modify() -> None:
    state = new_state()
    key = [exact(1, 1)]
    assert write_one(state, modify(entry(T_CONST, key, action(FWD, 3)))) == "PERMISSION_DENIED"
    assert write_one(state, delete(entry(T_CONST, key))) == "PERMISSION_DENIED"
    te = entry(T_CONST, key, counter_data=p4r.CounterData(packet_count=4, byte_count=40))
    assert write_one(state, modify(te)) == "OK"
    [got] = table_entries(state, T_CONST, match=key, counter_data=p4r.CounterData())
    assert got.counter_data.packet_count == 4
    assert got.action.action.params[0].value == b"\x01"


def test_single_const_entry_of_an_entries_list() -> None:
    state = new_state()
    assert (
        write_one(state, modify(entry(T_INIT, [exact(1, 1)], action(FWD, 3))))
        == "PERMISSION_DENIED"
    )
    assert write_one(state, delete(entry(T_INIT, [exact(1, 1)]))) == "PERMISSION_DENIED"
    assert write_one(state, modify(entry(T_INIT, [exact(1, 2)], action(FWD, 3)))) == "OK"
    assert write_one(state, delete(entry(T_INIT, [exact(1, 2)]))) == "OK"
    assert write_one(state, insert(entry(T_INIT, [exact(1, 3)], action(FWD, 3)))) == "OK"


def test_default_entry_modify_read_and_reset() -> None:
    state = new_state()
    [default] = table_entries(state, T_EXACT, is_default_action=True)
    assert default.is_default_action and default.action.action.action_id == NO_ACTION
    te = entry(T_EXACT, [], action(FWD, 7), is_default_action=True, controller_metadata=3)
    assert write_one(state, modify(te)) == "OK"
    [default] = table_entries(state, T_EXACT, is_default_action=True)
    assert default.action.action.action_id == FWD
    assert default.controller_metadata == 3
    table = state.objects.tables["MyIngress.t_exact"]
    assert table.default_action.args == (7,)
    # MODIFY without action: back to the program's default, metadata reset too
    assert write_one(state, modify(entry(T_EXACT, [], is_default_action=True))) == "OK"
    [default] = table_entries(state, T_EXACT, is_default_action=True)
    assert default.action.action.action_id == NO_ACTION
    assert default.controller_metadata == 0


@pytest.mark.parametrize(
    ("te", "kind", "code"),
    [
        (entry(T_EXACT, [], action(FWD, 1), is_default_action=True), "insert", "INVALID_ARGUMENT"),
        (entry(T_EXACT, [], is_default_action=True), "delete", "INVALID_ARGUMENT"),
        (entry(T_EXACT, exact_key(), action(FWD, 1), is_default_action=True), "modify", "INVALID_ARGUMENT"),
        (entry(T_TERN, [], action(FWD, 1), is_default_action=True, priority=1), "modify", "INVALID_ARGUMENT"),
        (entry(T_EXACT, [], action(TBL_ONLY), is_default_action=True), "modify", "PERMISSION_DENIED"),
        (entry(T_EXACT, [], action(DEF_ONLY), is_default_action=True), "modify", "OK"),
        (entry(T_LPM, [], action(FWD, 2), is_default_action=True), "modify", "PERMISSION_DENIED"),
        (entry(T_EXACT, [], action(FWD, 1), is_default_action=True, idle_timeout_ns=5), "modify", "INVALID_ARGUMENT"),
        (entry(0x02000006, [], action(FWD, 1), is_default_action=True), "modify", "INVALID_ARGUMENT"),
    ],
)  # fmt: skip
def test_default_entry_rules(te: p4r.TableEntry, kind: str, code: str) -> None:
    state = new_state()
    upd = {"insert": insert, "modify": modify, "delete": delete}[kind](te)
    assert write_one(state, upd) == code


def test_const_default_action_reads_as_const() -> None:
    state = new_state()
    [default] = table_entries(state, T_LPM, is_default_action=True)
    assert default.is_const
    assert default.action.action.params[0].value == b"\x01"


def test_keyless_table_default_entry_can_be_set() -> None:
    state = new_state()
    assert (
        write_one(state, modify(entry(T_KEYLESS, [], action(FWD, 4), is_default_action=True)))
        == "OK"
    )
    assert state.objects.tables["MyIngress.t_keyless"].default_action.args == (4,)


def test_idle_timeout_and_time_since_last_hit() -> None:
    state = new_state()
    assert (
        write_one(state, insert(entry(T_EXACT, exact_key(), action(FWD, 1), idle_timeout_ns=10**9)))
        == "OK"
    )
    state.objects.clock.advance(1000)  # µs
    request = p4r.TableEntry(table_id=T_EXACT)
    request.time_since_last_hit.SetInParent()
    [got] = [e.table_entry for e in state.read(p4r.Entity(table_entry=request))]
    assert got.idle_timeout_ns == 10**9
    assert got.time_since_last_hit.elapsed_ns == 1_000_000
    # a table without idle timeout refuses the request
    from p4emu.p4rt import P4RuntimeError

    request.table_id = T_TERN
    with pytest.raises(P4RuntimeError, match="INVALID_ARGUMENT"):
        list(state.read(p4r.Entity(table_entry=request)))


def test_entry_proto_for_idle_notifications() -> None:
    state = new_state()
    assert (
        write_one(state, insert(entry(T_EXACT, exact_key(), action(FWD, 1), idle_timeout_ns=5)))
        == "OK"
    )
    table = state.objects.tables["MyIngress.t_exact"]
    [installed] = table.entries()
    proto = state.table_entry_proto("MyIngress.t_exact", installed)
    assert proto.table_id == T_EXACT and proto.idle_timeout_ns == 5
    assert not proto.HasField("counter_data")


def test_lpm_entries_and_packet_lookup_see_the_write() -> None:
    state = new_state()
    assert write_one(state, insert(entry(T_LPM, [lpm(1, 0x0A000000, 8)], action(FWD, 9)))) == "OK"
    table = state.objects.tables["MyIngress.t_lpm"]
    hit = table.apply((0x0A010203,), 64)
    assert hit.hit and hit.args == (9,)
    assert not table.apply((0x0B000000,), 64).hit


def test_runtime_key_values_match_the_written_entry() -> None:
    state = new_state()
    assert write_one(state, insert(entry(T_EXACT, exact_key(0x1, 2), action(FWD, 1)))) == "OK"
    table = state.objects.tables["MyIngress.t_exact"]
    assert table.find([Exact(1), Exact(2)]) is not None


def test_reads_follow_every_change_of_an_entry_after_a_read() -> None:
    """Reads reuse an entry's encoding: each change after a read must still show."""
    state = new_state()
    assert write_one(state, insert(entry(T_EXACT, exact_key(), action(FWD, 1)))) == "OK"
    [first] = table_entries(state, T_EXACT)
    first.action.action.params[0].value = b"\x63"  # a caller mutating its result
    [again] = table_entries(state, T_EXACT)
    assert again.action.action.params[0].value == b"\x01"
    assert write_one(state, modify(entry(T_EXACT, exact_key(), action(FWD, 2)))) == "OK"
    [got] = table_entries(state, T_EXACT)
    assert got.action.action.params[0].value == b"\x02"
    te = entry(T_EXACT, exact_key(), controller_metadata=9, metadata=b"x", idle_timeout_ns=5)
    assert write_one(state, modify(te)) == "OK"
    [got] = table_entries(state, T_EXACT)
    assert (got.controller_metadata, got.metadata, got.idle_timeout_ns) == (9, b"x", 5)
    # a rolled-back MODIFY leaves the entry (and what reads show) as before
    batch = [
        modify(entry(T_EXACT, exact_key(), action(SET_MAC, 0x112233445566))),
        insert(entry(T_EXACT, exact_key(), action(FWD, 3))),  # ALREADY_EXISTS
    ]
    errors = state.write(batch, p4r.WriteRequest.ROLLBACK_ON_ERROR)
    assert [e.canonical_code for e in errors] != [0, 0]
    [got] = table_entries(state, T_EXACT)
    assert got.action.action.action_id == FWD
    assert got.action.action.params[0].value == b"\x02"
    assert (got.controller_metadata, got.metadata, got.idle_timeout_ns) == (9, b"x", 5)
    [with_counter] = table_entries(state, T_EXACT, counter_data=p4r.CounterData())
    assert with_counter.HasField("counter_data")
    assert not table_entries(state, T_EXACT)[0].HasField("counter_data")
