"""Entries <-> P4Runtime entities through the P4Info of p4src/mrc_switch.p4."""

from __future__ import annotations

import pytest
from finsy.proto import p4i, p4r

import topologies
from controller import p4names
from controller.artifacts import Pipeline
from controller.entities import EntityCodec, canonical_bytes, widen_port_fields
from controller.exceptions import DecodeError, EncodeError, P4InfoMismatchError
from controller.plan import Entry, LpmPrefix, SwitchPlan, plan_fabric
from topologies import Role


@pytest.fixture(scope="module")
def codec(pipeline: Pipeline) -> EntityCodec:
    return EntityCodec(pipeline.p4info)


def test_every_planned_entry_round_trips(codec: EntityCodec) -> None:
    plan = plan_fabric(topologies.load("small"), down_links=["p2-t0-1,p2-t1-0"])
    for sw in plan:
        codec.check_plan(sw)
        for entry in sw.entries:
            assert codec.decode(codec.encode(entry)) == entry


def test_canonical_bytes() -> None:
    assert canonical_bytes(0, 9, "x") == b"\x00"
    assert canonical_bytes(3, 9, "x") == b"\x03"
    assert canonical_bytes(0x0800, 16, "x") == b"\x08\x00"
    assert canonical_bytes(0xFCBBBB000400, 48, "x") == bytes.fromhex("fcbbbb000400")
    with pytest.raises(EncodeError, match=r"x: value 512 \(0x200\) does not fit bit<9>"):
        canonical_bytes(512, 9, "x")
    with pytest.raises(EncodeError, match="does not fit"):
        canonical_bytes(-1, 9, "x")


def test_encoded_usid_route_uses_p4info_ids_and_canonical_values(
    codec: EntityCodec, pipeline: Pipeline
) -> None:
    entry = Entry(p4names.USID_ROUTE, (0x0800,), p4names.FORWARD, (3,))
    message = codec.encode(entry).table_entry
    tables = {t.preamble.name: t for t in pipeline.p4info.tables}
    actions = {a.preamble.name: a for a in pipeline.p4info.actions}
    assert message.table_id == tables[p4names.USID_ROUTE].preamble.id
    assert message.match[0].field_id == tables[p4names.USID_ROUTE].match_fields[0].id
    assert message.match[0].exact.value == b"\x08\x00"
    assert message.action.action.action_id == actions[p4names.FORWARD].preamble.id
    assert message.action.action.params[0].value == b"\x03"


def _shifted_ids(info: p4i.P4Info, by: int) -> p4i.P4Info:
    """The same program with every table and action id moved by ``by``."""
    moved = p4i.P4Info()
    moved.CopyFrom(info)
    for table in moved.tables:
        table.preamble.id += by
        for ref in table.action_refs:
            ref.id += by
        if table.HasField("initial_default_action"):
            table.initial_default_action.action_id += by
    for action in moved.actions:
        action.preamble.id += by
    return moved


def test_no_id_is_hard_coded(pipeline: Pipeline) -> None:
    plain = EntityCodec(pipeline.p4info)
    moved = EntityCodec(_shifted_ids(pipeline.p4info, 5))
    entry = Entry(p4names.MY_USID, (0xFCBBBB000400,), p4names.USID_UN)
    a, b = plain.encode(entry).table_entry, moved.encode(entry).table_entry
    assert b.table_id == a.table_id + 5
    assert b.action.action.action_id == a.action.action.action_id + 5
    assert moved.decode(moved.encode(entry)) == entry


def test_default_entry(codec: EntityCodec, pipeline: Pipeline) -> None:
    entry = Entry(
        p4names.SWITCH_CONFIG, (), p4names.SET_SWITCH_CONFIG, (1, 7, 1, 0, 0, 0), is_default=True
    )
    message = codec.encode(entry).table_entry
    assert message.is_default_action and not message.match
    assert codec.decode(codec.encode(entry)) == entry
    # p4c 1.2.4.8's P4Info (and p4emu's) has no initial_default_action: unknown
    assert codec.tables[p4names.SWITCH_CONFIG].initial_default is None
    # newer p4c's (P4Runtime 1.4) says it
    newer = p4i.P4Info()
    newer.CopyFrom(pipeline.p4info)
    set_id = codec.actions[p4names.SET_SWITCH_CONFIG].id
    for table in newer.tables:
        if table.preamble.name == p4names.SWITCH_CONFIG:
            table.initial_default_action.action_id = set_id
            for param_id, value in enumerate((0, 7, 0, 0, 0, 0), start=1):
                table.initial_default_action.arguments.add(param_id=param_id, value=bytes([value]))
    initial = EntityCodec(newer).tables[p4names.SWITCH_CONFIG].initial_default
    assert initial == Entry(
        p4names.SWITCH_CONFIG, (), p4names.SET_SWITCH_CONFIG, (0, 7, 0, 0, 0, 0), is_default=True
    )


def test_lpm_encoding(codec: EntityCodec) -> None:
    entry = Entry(p4names.IPV6_ROUTE, (LpmPrefix(0xFF02 << 112, 16),), p4names.TO_CPU)
    match = codec.encode(entry).table_entry.match[0]
    assert match.lpm.prefix_len == 16 and match.lpm.value == bytes.fromhex("ff02") + bytes(14)
    everything = Entry(p4names.IPV6_ROUTE, (LpmPrefix(0, 0),), p4names.TO_CPU)
    assert not codec.encode(everything).table_entry.match  # don't-care: omitted
    assert codec.decode(codec.encode(everything)) == everything
    with pytest.raises(EncodeError, match="has bits set beyond the prefix"):
        codec.encode(Entry(p4names.IPV6_ROUTE, (LpmPrefix(0xFF02 << 112 | 1, 16),), p4names.TO_CPU))
    with pytest.raises(EncodeError, match=r"prefix length 129 is outside 0..128"):
        codec.encode(Entry(p4names.IPV6_ROUTE, (LpmPrefix(0, 129),), p4names.TO_CPU))
    with pytest.raises(EncodeError, match=r"LPM match needs \(value, prefix_len\)"):
        codec.encode(Entry(p4names.IPV6_ROUTE, (5,), p4names.TO_CPU))


def test_bad_entries_name_the_problem(codec: EntityCodec) -> None:
    with pytest.raises(EncodeError, match=r"MrcIngress.forward\(port\): value 600"):
        codec.encode(Entry(p4names.USID_ROUTE, (1,), p4names.FORWARD, (600,)))
    with pytest.raises(EncodeError, match=r"cannot use action MrcIngress.usid_un"):
        codec.encode(Entry(p4names.USID_ROUTE, (1,), p4names.USID_UN))
    with pytest.raises(EncodeError, match="1 values for 0 parameters"):
        codec.encode(Entry(p4names.USID_ROUTE, (1,), p4names.TO_CPU, (1,)))
    with pytest.raises(EncodeError, match="2 match values for 1 key fields"):
        codec.encode(Entry(p4names.USID_ROUTE, (1, 2), p4names.TO_CPU))
    with pytest.raises(EncodeError, match=r"no table MrcIngress.nope"):
        codec.encode(Entry("MrcIngress.nope", (1,), p4names.TO_CPU))
    with pytest.raises(EncodeError, match=r"no action MrcIngress.nope"):
        codec.encode(Entry(p4names.USID_ROUTE, (1,), "MrcIngress.nope"))
    with pytest.raises(EncodeError, match="exact match needs an integer"):
        codec.encode(Entry(p4names.USID_ROUTE, (LpmPrefix(1, 2),), p4names.TO_CPU))


def test_delete_update_carries_only_the_key(codec: EntityCodec) -> None:
    update = codec.encode_update("DELETE", Entry(p4names.USID_ROUTE, (7,), p4names.FORWARD, (1,)))
    assert update.type == p4r.Update.DELETE
    assert not update.entity.table_entry.HasField("action")
    assert update.entity.table_entry.match[0].exact.value == b"\x07"


def test_ten_bit_ports_do_not_fit_bit9_unless_widened(pipeline: Pipeline) -> None:
    topo = topologies.two_tier(1, 1, 1, 511, port_bits=10)  # a T0 with ports 1..512
    plan = plan_fabric(topo, switches=["p0-t0-0"])
    with pytest.raises(EncodeError, match=r"p0-t0-0: .*value 512 \(0x200\) does not fit bit<9>"):
        EntityCodec(pipeline.p4info).check_plan(plan["p0-t0-0"])
    EntityCodec(widen_port_fields(pipeline.p4info, 10)).check_plan(plan["p0-t0-0"])


def test_table_size_is_checked(codec: EntityCodec) -> None:
    entries = tuple(Entry(p4names.MY_USID, (i,), p4names.USID_UN) for i in range(65))
    plan = SwitchPlan("p0-t0-0", Role.T0, 0, 0x400, entries)
    with pytest.raises(EncodeError, match=r"65 entries for MrcIngress.my_usid, which holds 64"):
        codec.check_plan(plan)


def test_p4info_without_a_needed_name_is_refused(pipeline: Pipeline) -> None:
    info = p4i.P4Info()
    info.CopyFrom(pipeline.p4info)
    kept = [t for t in info.tables if t.preamble.name != p4names.USID_ROUTE]
    del info.tables[:]
    info.tables.extend(kept)
    for action in info.actions:
        if action.preamble.name == p4names.SET_EGRESS_PORT_CONFIG:
            action.params[0].name = "klass"
    for table in info.tables:
        if table.preamble.name == p4names.MY_USID:
            table.match_fields[0].match_type = p4i.MatchField.TERNARY
    with pytest.raises(P4InfoMismatchError) as caught:
        EntityCodec(info)
    text = str(caught.value)
    assert "no table MrcIngress.usid_route" in text
    assert "action MrcIngress.set_egress_port_config: parameters are (klass, up)" in text
    assert "table MrcIngress.my_usid: key is (dst_prefix: ternary)" in text
    EntityCodec(info, require=False)  # show works on any program


def test_decode_errors(codec: EntityCodec) -> None:
    entity = p4r.Entity()
    entity.table_entry.table_id = 12345
    with pytest.raises(DecodeError, match="table id 0x3039 is not in the P4Info"):
        codec.decode(entity)
    good = codec.encode(Entry(p4names.USID_ROUTE, (1,), p4names.FORWARD, (2,)))
    profile = p4r.Entity()
    profile.CopyFrom(good)
    profile.table_entry.action.action_profile_member_id = 4
    with pytest.raises(DecodeError, match="uses action_profile_member_id"):
        codec.decode(profile)
    missing = p4r.Entity()
    missing.CopyFrom(good)
    del missing.table_entry.action.action.params[:]
    with pytest.raises(DecodeError, match="parameter port is missing"):
        codec.decode(missing)
    keyless = p4r.Entity()
    keyless.CopyFrom(good)
    del keyless.table_entry.match[:]
    with pytest.raises(DecodeError, match="lacks key field usid"):
        codec.decode(keyless)
    counter = p4r.Entity()
    counter.counter_entry.counter_id = 1
    with pytest.raises(DecodeError, match="expected a table entry, got counter_entry"):
        codec.decode(counter)


def test_read_requests(codec: EntityCodec) -> None:
    entities = codec.read_request_entities([p4names.USID_ROUTE, p4names.MY_USID])
    assert [e.table_entry.is_default_action for e in entities] == [False, True, False, True]
    counters = codec.counter_read_entities()
    assert len(counters) == len(codec.counters) > 0
    with pytest.raises(EncodeError, match="no counter nope"):
        codec.counter_read_entities(["nope"])
