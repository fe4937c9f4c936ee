"""P4TableEntry (p4emu.p4rt_client.entity): the one table entry by name that encodes and
decodes itself; every match kind round-trips, the wire form is canonical, bad names and
values are refused with what is wrong, and p4emu's switch side accepts what it builds."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from finsy.proto import p4i, p4r

from p4emu.p4rt import P4RuntimeState
from p4emu.p4rt_client.entity import P4TableEntry, decode_action_call, encode_action
from p4emu.p4rt_client.exceptions import EntityNameError
from p4emu.p4rt_client.messages import EntityNames
from p4emu.p4rt_client.schema import P4Schema
from p4emu.switch import Switch

BASIC = Path(__file__).resolve().parents[1] / "programs" / "basic.p4"
WIDTH = 16


def _kinds_p4info() -> p4i.P4Info:
    """One table with a key of every match kind (16 bits each) and one 12-bit action."""
    info = p4i.P4Info()
    action = info.actions.add()
    action.preamble.id, action.preamble.name, action.preamble.alias = 0x01000001, "C.set", "set"
    action.params.add(id=1, name="v", bitwidth=12)
    action.params.add(id=2, name="w", bitwidth=1)
    table = info.tables.add()
    table.preamble.id, table.preamble.name, table.preamble.alias = 0x02000001, "C.t", "t"
    kinds = [
        ("e", p4i.MatchField.EXACT),
        ("l", p4i.MatchField.LPM),
        ("t", p4i.MatchField.TERNARY),
        ("r", p4i.MatchField.RANGE),
        ("o", p4i.MatchField.OPTIONAL),
    ]
    for number, (name, kind) in enumerate(kinds, 1):
        table.match_fields.add(id=number, name=name, bitwidth=WIDTH, match_type=kind)
    table.action_refs.add(id=action.preamble.id)
    return info


@pytest.fixture(scope="module")
def schema() -> P4Schema:
    return P4Schema(_kinds_p4info())


def test_every_match_kind_round_trips(schema: P4Schema) -> None:
    match = {"e": 7, "l": (0xAB00, 8), "t": (0x0102, 0x0F0F), "r": (3, 9), "o": 0}
    entry = P4TableEntry("C.t", match, "C.set", {"v": 0xFFF, "w": 1}, priority=5)
    entity = entry.encode(schema)
    assert [m.WhichOneof("field_match_type") for m in entity.table_entry.match] == [
        "exact",
        "lpm",
        "ternary",
        "range",
        "optional",
    ]
    assert P4TableEntry.decode(entity, schema) == entry


def _random_entry(rng: random.Random) -> P4TableEntry:
    full = (1 << WIDTH) - 1
    match: dict[str, int | tuple[int, int]] = {"e": rng.randrange(1 << WIDTH)}
    if rng.random() < 0.7:
        prefix = rng.randint(1, WIDTH)
        match["l"] = (rng.randrange(1 << WIDTH) & (full << (WIDTH - prefix)) & full, prefix)
    if rng.random() < 0.7:
        mask = rng.randint(1, full)
        match["t"] = (rng.randrange(1 << WIDTH) & mask, mask)
    if rng.random() < 0.7:
        low = rng.randrange(1 << WIDTH)
        match["r"] = (low, rng.randint(low, full))
    if rng.random() < 0.7:
        match["o"] = rng.randrange(1 << WIDTH)
    keys = list(match)
    rng.shuffle(keys)  # the wire keeps the caller's order
    if rng.random() < 0.2:
        return P4TableEntry("C.t", {k: match[k] for k in keys}, priority=rng.randint(1, 9))
    params = {"w": rng.randrange(2), "v": rng.randrange(1 << 12)}
    return P4TableEntry(
        "C.t", {k: match[k] for k in keys}, "C.set", params, priority=rng.randint(1, 1 << 31)
    )


@pytest.mark.parametrize("seed", range(1, 21))
def test_random_entries_round_trip_and_keep_the_match_order(schema: P4Schema, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        entry = _random_entry(rng)
        entity = entry.encode(schema)
        assert P4TableEntry.decode(entity, schema) == entry
        by_id = {f.id: f.name for f in schema.table("C.t").fields}
        assert [by_id[m.field_id] for m in entity.table_entry.match] == list(entry.match)
        # serialized and parsed again: the same entry
        again = p4r.Entity.FromString(entity.SerializeToString())
        assert P4TableEntry.decode(again, schema) == entry


def test_wire_form_is_canonical(schema: P4Schema) -> None:
    entity = P4TableEntry("t", {"e": 0, "l": (0x0100, 8)}, "set", {"w": 0, "v": 1}).encode(schema)
    message = entity.table_entry
    assert message.table_id == 0x02000001
    assert [m.exact.value for m in message.match[:1]] == [b"\x00"]
    assert (message.match[1].lpm.value, message.match[1].lpm.prefix_len) == (b"\x01\x00", 8)
    # parameters go in P4Info order whatever the caller's order; priority 0 and a
    # non-default entry leave their fields unset
    assert [(p.param_id, p.value) for p in message.action.action.params] == [
        (1, b"\x01"),
        (2, b"\x00"),
    ]
    assert not message.HasField("action") or message.action.WhichOneof("type") == "action"
    assert (message.priority, message.is_default_action) == (0, False)


def test_a_dont_care_lpm_is_left_out_and_stays_out(schema: P4Schema) -> None:
    entry = P4TableEntry("t", {"e": 1, "l": (0, 0)})
    entity = entry.encode(schema)
    assert [m.field_id for m in entity.table_entry.match] == [1]
    assert P4TableEntry.decode(entity, schema) == P4TableEntry("C.t", {"e": 1})


def test_default_entry_round_trips(schema: P4Schema) -> None:
    entry = P4TableEntry("C.t", {}, "C.set", {"v": 3, "w": 0}, is_default=True)
    entity = entry.encode(schema)
    assert entity.table_entry.is_default_action
    assert list(entity.table_entry.match) == []
    assert P4TableEntry.decode(entity, schema) == entry


def test_delete_update_carries_only_the_key(schema: P4Schema) -> None:
    entry = P4TableEntry("C.t", {"e": 1}, "C.set", {"v": 3, "w": 0}, priority=4)
    delete = entry.encode_update(schema, p4r.Update.DELETE)
    assert delete.type == p4r.Update.DELETE
    assert not delete.entity.table_entry.HasField("action")
    assert delete.entity.table_entry.priority == 4
    assert P4TableEntry.decode(delete.entity, schema) == P4TableEntry("C.t", {"e": 1}, priority=4)
    insert = entry.encode_update(schema, p4r.Update.INSERT)
    assert P4TableEntry.decode(insert.entity, schema) == entry
    # a default entry's DELETE keeps everything (P4Runtime refuses it, the switch says so)
    default = P4TableEntry("C.t", {}, "C.set", {"v": 3, "w": 0}, is_default=True)
    assert default.encode_update(schema, p4r.Update.DELETE).entity == default.encode(schema)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (P4TableEntry("C.nope"), "no table named 'C.nope'"),
        (P4TableEntry("C.t", {"x": 1}), "table C.t: no match field 'x'"),
        (P4TableEntry("C.t", {"e": (1, 2)}), "C.t key e: exact match needs an integer"),
        (P4TableEntry("C.t", {"l": 5}), r"C.t key l: LPM match needs \(value, prefix_len\)"),
        (P4TableEntry("C.t", {"l": (0xAB01, 8)}), "has bits set beyond the prefix"),
        (P4TableEntry("C.t", {"l": (0, 17)}), "prefix length 17 is outside 0..16"),
        (P4TableEntry("C.t", {"r": (1, 2, 3)}), r"RANGE match needs \(low, high\)"),
        (
            P4TableEntry("C.t", {"t": (0x1_0000, 1)}),
            r"C.t key t: value 65536 \(0x10000\) does not fit bit<16>",
        ),
        (P4TableEntry("C.t", {}, "C.nope"), "no action named 'C.nope'"),
        (P4TableEntry("C.t", {}, "C.set", {"v": 1}), "parameter 'w' is missing"),
        (P4TableEntry("C.t", {}, "C.set", {"v": 1, "w": 0, "z": 0}), "no parameter 'z'"),
        (P4TableEntry("C.t", {}, "C.set", {"v": 1, "w": 2}), r"C.set\(w\): value 2 .* bit<1>"),
    ],
)
def test_bad_entries_name_what_is_wrong(
    schema: P4Schema, entry: P4TableEntry, message: str
) -> None:
    with pytest.raises(EntityNameError, match=message):
        entry.encode(schema)


def test_decoding_names_what_does_not_fit_the_p4info(schema: P4Schema) -> None:
    wrong_kind = P4TableEntry("t", {"e": 1}).encode(schema)
    wrong_kind.table_entry.match[0].ClearField("exact")
    wrong_kind.table_entry.match[0].lpm.value = b"\x01"
    with pytest.raises(EntityNameError, match="key e is EXACT but the entry has lpm"):
        P4TableEntry.decode(wrong_kind, schema)
    with pytest.raises(EntityNameError, match="entry lacks key field e"):
        P4TableEntry.decode(P4TableEntry("t", {"o": 1}).encode(schema), schema)
    unknown_field = P4TableEntry("t", {"e": 1}).encode(schema)
    unknown_field.table_entry.match[0].field_id = 9
    with pytest.raises(EntityNameError, match="match field id 9 is unknown"):
        P4TableEntry.decode(unknown_field, schema)
    profile = P4TableEntry("t", {"e": 1}).encode(schema)
    profile.table_entry.action.action_profile_member_id = 3
    with pytest.raises(EntityNameError, match="uses action_profile_member_id"):
        P4TableEntry.decode(profile, schema)
    unknown = P4TableEntry("t", {"e": 1}).encode(schema)
    unknown.table_entry.table_id = 0x02000099
    with pytest.raises(EntityNameError, match="table id 0x2000099 is not in the P4Info"):
        P4TableEntry.decode(unknown, schema)
    with pytest.raises(EntityNameError, match="expected a table entry, got counter_entry"):
        P4TableEntry.decode(p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=1)), schema)
    missing_param = P4TableEntry("t", {"e": 1}, "set", {"v": 1, "w": 1}).encode(schema)
    del missing_param.table_entry.action.action.params[1]
    with pytest.raises(EntityNameError, match=r"C\.set: parameter w is missing"):
        P4TableEntry.decode(missing_param, schema)


def test_action_helpers_round_trip_and_refuse_unknown_ids(schema: P4Schema) -> None:
    message = p4r.Action()
    encode_action(schema, message, "set", {"w": 1, "v": 0xABC})
    args = [(p.param_id, p.value) for p in message.params]
    assert decode_action_call(schema, message.action_id, args) == ("C.set", {"v": 0xABC, "w": 1})
    with pytest.raises(EntityNameError, match="parameter id 7 is unknown"):
        decode_action_call(schema, message.action_id, [(7, b"\x01")])
    with pytest.raises(EntityNameError, match="action id 0x1000009 is not in the P4Info"):
        decode_action_call(schema, 0x01000009, [])


def test_the_switch_accepts_what_it_builds_and_reads_back_the_same_entry() -> None:
    switch = Switch(BASIC)
    schema = P4Schema(switch.p4info)
    state = P4RuntimeState(switch.objects)
    entry = P4TableEntry(
        "MyIngress.ipv4_lpm",
        {"hdr.ipv4.dstAddr": (0x0A000000, 8)},
        "MyIngress.ipv4_forward",
        {"dstAddr": 0x0200000000AA, "port": 3},
    )
    errors = state.write([entry.encode_update(schema, p4r.Update.INSERT)])
    assert [e.canonical_code for e in errors] == [0]
    (read,) = state.read(P4TableEntry("ipv4_lpm").encode(schema))
    assert P4TableEntry.decode(read, schema) == entry
    # EntityNames builds table entries through P4TableEntry: the same message
    names = EntityNames(schema)
    assert names.table_entry(
        "MyIngress.ipv4_lpm",
        {"hdr.ipv4.dstAddr": (0x0A000000, 8)},
        "MyIngress.ipv4_forward",
        {"port": 3, "dstAddr": 0x0200000000AA},
    ) == entry.encode(schema)
    assert names.decode_table_entry(read) == entry
