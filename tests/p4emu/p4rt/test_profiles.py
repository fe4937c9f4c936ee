from __future__ import annotations

import pytest
from finsy.proto import p4r
from p4rt_helpers import (
    FWD,
    PROF,
    SEL,
    SET_MAC,
    T_PROF,
    T_SEL,
    action,
    b,
    codes,
    delete,
    entry,
    exact,
    insert,
    modify,
    new_state,
    read,
    table_entries,
    update,
    write_one,
)

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


def member(
    profile: int, member_id: int, port: int | None = 1, action_id: int = FWD
) -> p4r.ActionProfileMember:
    m = p4r.ActionProfileMember(action_profile_id=profile, member_id=member_id)
    if port is not None:
        m.action.CopyFrom(
            p4r.Action(action_id=action_id, params=[p4r.Action.Param(param_id=1, value=b(port))])
        )
    return m


def group(
    profile: int, group_id: int, *members: tuple[int, int], max_size: int = 0
) -> p4r.ActionProfileGroup:
    g = p4r.ActionProfileGroup(action_profile_id=profile, group_id=group_id, max_size=max_size)
    for member_id, weight in members:
        g.members.add(member_id=member_id, weight=weight)
    return g


def w_member(kind: int, m: p4r.ActionProfileMember) -> str:
    return codes_of(update(kind, action_profile_member=m))


def w_group(kind: int, g: p4r.ActionProfileGroup) -> str:
    return codes_of(update(kind, action_profile_group=g))


STATE = None


def codes_of(upd: p4r.Update) -> str:
    assert STATE is not None
    return codes(STATE.write([upd]))[0]


@pytest.fixture(autouse=True)
def fresh_state():
    global STATE
    STATE = new_state()
    yield STATE
    STATE = None


def member_entry(table_id: int, key: int, member_id: int) -> p4r.TableEntry:
    te = entry(table_id, [exact(1, key)])
    te.action.action_profile_member_id = member_id
    return te


def group_entry(table_id: int, key: int, group_id: int) -> p4r.TableEntry:
    te = entry(table_id, [exact(1, key)])
    te.action.action_profile_group_id = group_id
    return te


def test_member_lifecycle_and_read_back(fresh_state) -> None:
    assert w_member(INSERT, member(PROF, 1, 5)) == "OK"
    assert w_member(INSERT, member(PROF, 1, 6)) == "ALREADY_EXISTS"
    assert w_member(MODIFY, member(PROF, 1, 7)) == "OK"
    [got] = read(fresh_state, action_profile_member=p4r.ActionProfileMember(action_profile_id=PROF))
    assert got.action_profile_member.action.params[0].value == b"\x07"
    assert w_member(DELETE, member(PROF, 1, None)) == "OK"
    assert w_member(DELETE, member(PROF, 1, None)) == "NOT_FOUND"
    assert w_member(MODIFY, member(PROF, 1, 7)) == "NOT_FOUND"


@pytest.mark.parametrize(
    ("m", "code"),
    [
        (member(PROF, 1, None), "INVALID_ARGUMENT"),  # no action
        (member(PROF, 0, 1), "INVALID_ARGUMENT"),  # member id 0
        (member(PROF, 1, 1, action_id=SET_MAC), "INVALID_ARGUMENT"),  # not an action of t_prof
        (member(PROF, 1, 1, action_id=0x01000099), "INVALID_ARGUMENT"),
        (member(PROF, 1, 600), "INVALID_ARGUMENT"),  # param too wide
        (member(0x11000099, 1, 1), "INVALID_ARGUMENT"),  # unknown profile
    ],
)
def test_bad_members(m: p4r.ActionProfileMember, code: str) -> None:
    assert w_member(INSERT, m) == code


def test_profile_size_is_resource_exhausted() -> None:
    for member_id in range(1, 5):
        assert w_member(INSERT, member(PROF, member_id)) == "OK"
    assert w_member(INSERT, member(PROF, 5)) == "RESOURCE_EXHAUSTED"


def test_member_used_by_entry_cannot_be_deleted(fresh_state) -> None:
    assert w_member(INSERT, member(PROF, 1, 5)) == "OK"
    assert write_one(fresh_state, insert(member_entry(T_PROF, 1, 2))) == "NOT_FOUND"
    assert write_one(fresh_state, insert(member_entry(T_PROF, 1, 1))) == "OK"
    assert w_member(DELETE, member(PROF, 1, None)) == "FAILED_PRECONDITION"
    [te] = table_entries(fresh_state, T_PROF)
    assert te.action.action_profile_member_id == 1
    assert write_one(fresh_state, delete(entry(T_PROF, [exact(1, 1)]))) == "OK"
    assert w_member(DELETE, member(PROF, 1, None)) == "OK"


def test_indirect_table_action_kinds() -> None:
    state = STATE
    assert w_member(INSERT, member(PROF, 1, 5)) == "OK"
    assert (
        write_one(state, insert(entry(T_PROF, [exact(1, 1)], action(FWD, 1)))) == "INVALID_ARGUMENT"
    )
    assert write_one(state, insert(group_entry(T_PROF, 1, 1))) == "INVALID_ARGUMENT"  # no selector
    assert (
        write_one(state, insert(member_entry(0x02000001, 1, 1))) == "INVALID_ARGUMENT"
    )  # direct table


def test_group_lifecycle_with_weights_and_watch_ports(fresh_state) -> None:
    for member_id in (1, 2):
        assert w_member(INSERT, member(SEL, member_id, member_id)) == "OK"
    g = group(SEL, 10, (2, 1), (1, 2), max_size=4)
    g.members[0].watch_port = b"\x00\x07"
    assert w_group(INSERT, g) == "OK"
    [got] = read(fresh_state, action_profile_group=p4r.ActionProfileGroup(action_profile_id=SEL))
    got = got.action_profile_group
    assert got.max_size == 4
    assert [(m.member_id, m.weight) for m in got.members] == [(1, 2), (2, 1)]
    assert got.members[1].watch_port == b"\x07"
    assert w_group(INSERT, g) == "ALREADY_EXISTS"
    assert w_member(DELETE, member(SEL, 1, None)) == "FAILED_PRECONDITION"  # in a group
    assert w_group(MODIFY, group(SEL, 10, (1, 1), max_size=3)) == "INVALID_ARGUMENT"
    assert w_group(MODIFY, group(SEL, 10, (1, 1))) == "OK"  # max_size 0 = keep
    assert write_one(fresh_state, insert(group_entry(T_SEL, 1, 10))) == "OK"
    assert w_group(DELETE, group(SEL, 10)) == "FAILED_PRECONDITION"
    assert write_one(fresh_state, delete(entry(T_SEL, [exact(1, 1)]))) == "OK"
    assert w_group(DELETE, group(SEL, 10)) == "OK"
    assert w_group(DELETE, group(SEL, 10)) == "NOT_FOUND"
    assert w_group(MODIFY, group(SEL, 10)) == "NOT_FOUND"


@pytest.mark.parametrize(
    ("g", "code"),
    [
        (group(SEL, 1, (9, 1)), "NOT_FOUND"),
        (group(SEL, 1, (1, 0)), "INVALID_ARGUMENT"),
        (group(SEL, 1, (1, 1), (1, 1)), "INVALID_ARGUMENT"),
        (group(SEL, 1, (1, 1), max_size=-1), "INVALID_ARGUMENT"),
        (group(SEL, 1, (1, 1), max_size=5), "INVALID_ARGUMENT"),  # above max_group_size 4
        (group(SEL, 1, (1, 3), (2, 2)), "RESOURCE_EXHAUSTED"),  # 5 > max_group_size
        (group(SEL, 1, (1, 2), (2, 1), max_size=2), "RESOURCE_EXHAUSTED"),
        (group(PROF, 1, (1, 1)), "INVALID_ARGUMENT"),  # action profile without selector
        (group(SEL, 0, (1, 1)), "INVALID_ARGUMENT"),
    ],
)
def test_bad_groups(g: p4r.ActionProfileGroup, code: str) -> None:
    for member_id in (1, 2):
        assert w_member(INSERT, member(SEL, member_id)) == "OK"
    assert w_group(INSERT, g) == code


def test_member_and_group_wildcard_reads() -> None:
    assert w_member(INSERT, member(SEL, 1)) == "OK"
    assert w_member(INSERT, member(PROF, 1)) == "OK"
    assert w_group(INSERT, group(SEL, 3, (1, 1))) == "OK"
    everything = read(STATE, action_profile_member=p4r.ActionProfileMember())
    assert {e.action_profile_member.action_profile_id for e in everything} == {SEL, PROF}
    one = read(
        STATE, action_profile_member=p4r.ActionProfileMember(action_profile_id=SEL, member_id=1)
    )
    assert len(one) == 1
    assert (
        read(
            STATE, action_profile_member=p4r.ActionProfileMember(action_profile_id=SEL, member_id=7)
        )
        == []
    )
    assert len(read(STATE, action_profile_group=p4r.ActionProfileGroup())) == 1


def test_selector_picks_a_member_of_the_group() -> None:
    for member_id in (1, 2):
        assert w_member(INSERT, member(SEL, member_id, 10 + member_id)) == "OK"
    assert w_group(INSERT, group(SEL, 5, (1, 1), (2, 1))) == "OK"
    assert write_one(STATE, insert(group_entry(T_SEL, 7, 5))) == "OK"
    selector = STATE.objects.action_profiles["MyIngress.sel"]
    hit = STATE.objects.tables["MyIngress.t_sel"].apply((7,), 64)
    chosen = {selector.resolve(hit.action_id, hit.args, (x,)).args for x in range(4)}
    assert chosen == {(11,), (12,)}


def oneshot_entry(key: int, *ports_and_weights: tuple[int, int]) -> p4r.TableEntry:
    te = entry(T_SEL, [exact(1, key)])
    for port, weight in ports_and_weights:
        item = te.action.action_profile_action_set.action_profile_actions.add(weight=weight)
        item.action.CopyFrom(
            p4r.Action(action_id=FWD, params=[p4r.Action.Param(param_id=1, value=b(port))])
        )
    return te


def test_oneshot_programming_reads_back_as_written() -> None:
    te = oneshot_entry(1, (5, 1), (6, 2), (5, 1))
    te.action.action_profile_action_set.action_profile_actions[1].watch_port = b"\x03"
    assert write_one(STATE, insert(te)) == "OK"
    [got] = table_entries(STATE, T_SEL)
    assert got.action == te.action
    # hidden members/groups are not visible through member/group reads
    assert read(STATE, action_profile_member=p4r.ActionProfileMember(action_profile_id=SEL)) == []
    assert read(STATE, action_profile_group=p4r.ActionProfileGroup(action_profile_id=SEL)) == []
    selector = STATE.objects.action_profiles["MyIngress.sel"]
    assert len(selector.members()) == 3 and len(selector.groups()) == 1
    # mixing styles is refused
    assert w_member(INSERT, member(SEL, 100)) == "INVALID_ARGUMENT"
    # MODIFY replaces the hidden group; DELETE removes everything
    assert write_one(STATE, modify(oneshot_entry(1, (7, 1)))) == "OK"
    assert len(selector.members()) == 1
    [got] = table_entries(STATE, T_SEL)
    assert len(got.action.action_profile_action_set.action_profile_actions) == 1
    assert write_one(STATE, delete(entry(T_SEL, [exact(1, 1)]))) == "OK"
    assert selector.members() == [] and selector.groups() == []
    assert w_member(INSERT, member(SEL, 100)) == "OK"  # manual style possible again
    assert write_one(STATE, insert(oneshot_entry(2, (5, 1)))) == "INVALID_ARGUMENT"


@pytest.mark.parametrize(
    ("te", "code"),
    [
        (oneshot_entry(1, (5, 0)), "INVALID_ARGUMENT"),  # weight 0
        (oneshot_entry(1, (5, 3), (6, 2)), "INVALID_ARGUMENT"),  # weights above max_group_size
        (oneshot_entry(1, (600, 1)), "INVALID_ARGUMENT"),
    ],
)
def test_bad_oneshots(te: p4r.TableEntry, code: str) -> None:
    assert write_one(STATE, insert(te)) == code
    assert STATE.objects.action_profiles["MyIngress.sel"].members() == []


def test_oneshot_on_a_profile_without_selector_is_invalid() -> None:
    te = oneshot_entry(1, (5, 1))
    te.table_id = T_PROF
    assert write_one(STATE, insert(te)) == "INVALID_ARGUMENT"
