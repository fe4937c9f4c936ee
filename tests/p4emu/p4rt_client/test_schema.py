"""p4emu.p4rt_client.schema: canonical bytestrings, the P4Info index by name, alias and id,
the match-kind table the switch side shares; and the stack's errors."""

from __future__ import annotations

import pytest
from finsy.proto import p4i, p4r, rpc_code

from p4emu.p4rt_client.exceptions import EntityNameError, code_name
from p4emu.p4rt_client.schema import (
    ONEOF_OF_KIND,
    P4Schema,
    decode_match,
    decode_value,
    encode_unsigned,
    encode_value,
)


def _p4info() -> p4i.P4Info:
    info = p4i.P4Info()
    action = info.actions.add()
    action.preamble.id, action.preamble.name, action.preamble.alias = 0x01000001, "C.set", "set"
    action.params.add(id=1, name="v", bitwidth=12)
    table = info.tables.add()
    table.preamble.id, table.preamble.name, table.preamble.alias = 0x02000001, "C.t", "t"
    table.match_fields.add(id=1, name="e", bitwidth=16, match_type=p4i.MatchField.EXACT)
    table.match_fields.add(id=2, name="x", bitwidth=8)  # no match type: OTHER
    table.action_refs.add(id=action.preamble.id)
    table.size = 64
    counter = info.counters.add()
    counter.preamble.id, counter.preamble.name = 0x12000001, "C.c"
    counter.spec.unit = p4i.CounterSpec.BOTH
    counter.size = 8
    packet_in = info.controller_packet_metadata.add()
    packet_in.preamble.name = "packet_in"
    packet_in.metadata.add(id=1, name="ingress_port", bitwidth=9)
    return info


def test_encode_unsigned_is_the_shortest_big_endian_form() -> None:
    assert [encode_unsigned(v) for v in (0, 1, 255, 256, 1 << 64)] == [
        b"\x00",
        b"\x01",
        b"\xff",
        b"\x01\x00",
        b"\x01" + bytes(8),
    ]
    with pytest.raises(ValueError, match="non-negative"):
        encode_unsigned(-1)


def test_encode_value_checks_the_width_and_names_the_value() -> None:
    assert encode_value(0xFFF, 12) == b"\x0f\xff"
    with pytest.raises(EntityNameError, match=r"C.set\(v\): value 4096 \(0x1000\) does not fit"):
        encode_value(0x1000, 12, lambda: "C.set(v)")
    assert decode_value(b"\x00\x00\x01") == 1


def test_schema_finds_by_name_alias_and_id() -> None:
    schema = P4Schema(_p4info())
    assert schema.table("t") is schema.table("C.t") is schema.table_by_id(0x02000001)
    assert schema.action("set") is schema.action_by_id(0x01000001)
    assert schema.counter("C.c") is schema.counter_by_id(0x12000001)
    table = schema.table("C.t")
    assert [(f.name, f.kind) for f in table.fields] == [("e", "EXACT"), ("x", "OTHER")]
    assert (table.size, table.action_ids) == (64, frozenset({0x01000001}))
    assert schema.counter("C.c").unit == "BOTH"
    assert schema.find("tables", "t").preamble.id == 0x02000001
    assert schema.packet_metadata("packet_in")["ingress_port"].bitwidth == 9
    assert schema.packet_metadata("packet_out") == {}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.table("C.nope"), "no table named 'C.nope'"),
        (lambda s: s.action("nope"), "no action named 'nope'"),
        (lambda s: s.counter("nope"), "no counter named 'nope'"),
        (lambda s: s.table_by_id(7), "table id 0x7 is not in the P4Info"),
        (lambda s: s.action_by_id(7), "action id 0x7 is not in the P4Info"),
        (lambda s: s.counter_by_id(7), "counter id 0x7 is not in the P4Info"),
        (lambda s: s.find("registers", "r"), "no register named 'r'"),
    ],
)
def test_unknown_names_and_ids_are_refused(call, message: str) -> None:
    with pytest.raises(EntityNameError, match=message):
        call(P4Schema(_p4info()))


def test_other_match_kinds_are_refused_when_encoding() -> None:
    from p4emu.p4rt_client.entity import P4TableEntry

    with pytest.raises(EntityNameError, match="OTHER match fields are not supported"):
        P4TableEntry("C.t", {"e": 1, "x": (1, 2)}).encode(P4Schema(_p4info()))


def test_match_kind_table_names_the_field_match_oneof() -> None:
    oneof = {f.name for f in p4r.FieldMatch.DESCRIPTOR.oneofs_by_name["field_match_type"].fields}
    assert set(ONEOF_OF_KIND.values()) == oneof - {"other"}
    assert all(kind == oneof_name.upper() for kind, oneof_name in ONEOF_OF_KIND.items())
    field = P4Schema(_p4info()).table("C.t").fields[0]
    match = p4r.FieldMatch(field_id=1)
    match.lpm.value, match.lpm.prefix_len = b"\x01", 8
    with pytest.raises(EntityNameError, match="key e is EXACT but the entry has lpm"):
        decode_match(field, match, "C.t")


def test_code_name() -> None:
    assert code_name(rpc_code.INVALID_ARGUMENT) == "INVALID_ARGUMENT"
    assert code_name(999) == "999"
