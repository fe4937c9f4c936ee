"""Entities built by name from a P4Info (p4emu.p4rt.names), validated by P4RuntimeState."""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4r

from p4emu.p4rt import P4RuntimeState
from p4emu.p4rt.exceptions import EntityNameError
from p4emu.p4rt.names import EntityNames, encode_value
from p4emu.switch import Switch

BASIC = Path(__file__).resolve().parents[1] / "programs" / "basic.p4"


@pytest.fixture(scope="module")
def switch() -> Switch:
    return Switch(BASIC)


def test_lpm_entry_is_accepted_and_reads_back(switch: Switch) -> None:
    names = EntityNames(switch.p4info)
    state = P4RuntimeState(switch.objects)
    entity = names.table_entry(
        "MyIngress.ipv4_lpm",
        {"hdr.ipv4.dstAddr": (0x0A000000, 8)},
        "MyIngress.ipv4_forward",
        {"dstAddr": 0x0200000000AA, "port": 3},
    )
    errors = state.write([p4r.Update(type=p4r.Update.INSERT, entity=entity)])
    assert [e.canonical_code for e in errors] == [0]
    (read,) = state.read(names.table_entry("ipv4_lpm", {}))  # aliases work too
    assert read.table_entry == entity.table_entry


def test_a_zero_length_prefix_is_left_out_as_dont_care(switch: Switch) -> None:
    entity = EntityNames(switch.p4info).table_entry(
        "MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0, 0)}, "MyIngress.drop"
    )
    assert list(entity.table_entry.match) == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda n: n.table_entry("MyIngress.nope", {}), "no table named 'MyIngress.nope'"),
        (lambda n: n.table_entry("MyIngress.ipv4_lpm", {"hdr.x": 1}), "no match field 'hdr.x'"),
        (
            lambda n: n.action("MyIngress.ipv4_forward", {"port": 1}),
            "parameter 'dstAddr' is missing",
        ),
        (lambda n: n.action("MyIngress.drop", {"port": 1}), "no parameter 'port'"),
        (
            lambda n: n.action("MyIngress.ipv4_forward", {"dstAddr": 1, "port": 512}),
            "does not fit bit<9>",
        ),
        (lambda n: n.counter_entry("MyIngress.none"), "no counter named"),
    ],
)
def test_bad_names_and_values_are_explained(switch: Switch, call, message: str) -> None:
    with pytest.raises(EntityNameError, match=message):
        call(EntityNames(switch.p4info))


def test_encode_value_is_canonical() -> None:
    assert (encode_value(0, 8), encode_value(0x0102, 16), encode_value(1, 48)) == (
        b"\0",
        b"\x01\x02",
        b"\x01",
    )
    with pytest.raises(EntityNameError):
        encode_value(-1, 8)
