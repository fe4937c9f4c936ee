"""P4Runtime table writes answered as BMv2 1.15's server answers them (PI + p4c 1.2.4.8's
JSON), where that differs from a plain reading of the P4Runtime specification: a table the
program never applies does not exist, a table given ``entries`` takes no entries, and an
LPM prefix counts over the key's bytes. ``tests/conformance/test_p4fuzz.py`` (``-m bmv2``)
and ``tests/conformance/test_bmv2_write_rules.py`` compare the same cases with BMv2."""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4r, rpc_code

from p4emu.p4rt import P4RuntimeState
from p4emu.p4rt.codec import lpm_padding
from p4emu.switch import Switch

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> f0; bit<7> k; bit<1> z; bit<8> o; }
struct headers_t { h_t h; }
struct metadata_t { }
parser P(packet_in pk, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.o = v; }
    table lpm7 { key = { hdr.h.k: lpm; } actions = { set; NoAction; } default_action = NoAction(); }
    table lpm8 { key = { hdr.h.f0: lpm; } actions = { set; NoAction; } default_action = NoAction(); }
    table never { key = { hdr.h.f0: exact; } actions = { set; NoAction; } default_action = NoAction(); }
    table init {
        key = { hdr.h.f0: exact; }
        actions = { set; NoAction; }
        entries = { 0x01 : set(0x11); }
        default_action = NoAction();
    }
    table fixed {
        key = { hdr.h.f0: exact; }
        actions = { set; NoAction; }
        const entries = { 0x02 : set(0x22); }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        lpm7.apply();
        if (hdr.h.f0 == 0) { lpm8.apply(); }
        init.apply();
        fixed.apply();
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


@pytest.fixture(scope="module")
def switch(tmp_path_factory: pytest.TempPathFactory) -> Switch:
    path: Path = tmp_path_factory.mktemp("rules") / "rules.p4"
    path.write_text(PROGRAM)
    return Switch(path)


@pytest.fixture
def state(switch: Switch) -> P4RuntimeState:
    for info in switch.objects.table_info.values():  # a fresh start for each test
        if not info.is_const and not info.initial_entries:
            info.table.clear()
    return P4RuntimeState(switch.objects)


def _id(switch: Switch, name: str) -> int:
    return switch.objects.table_info[f"I.{name}"].id


def _set_action(switch: Switch, value: int) -> p4r.TableAction:
    action = p4r.TableAction()
    action.action.action_id = switch.objects.actions["I.set"].id
    action.action.params.add(param_id=1, value=bytes([value]))
    return action


def _entry(switch: Switch, table: str, key: int, prefix: int | None = None) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=_id(switch, table), action=_set_action(switch, 0x77))
    match = te.match.add(field_id=1)
    if prefix is None:
        match.exact.value = bytes([key])
    else:
        match.lpm.value = bytes([key])
        match.lpm.prefix_len = prefix
    return te


def _write(state: P4RuntimeState, kind: int, te: p4r.TableEntry) -> p4r.Error:
    (error,) = state.write([p4r.Update(type=kind, entity=p4r.Entity(table_entry=te))])
    return error


# --- a table no statement applies ------------------------------------------------------


def test_a_table_never_applied_is_not_in_the_p4info_and_its_id_is_refused(
    switch: Switch, state: P4RuntimeState
) -> None:
    assert "I.never" not in {t.preamble.name for t in switch.p4info.tables}
    error = _write(state, INSERT, _entry(switch, "never", 5))
    assert error.canonical_code == rpc_code.INVALID_ARGUMENT
    assert "unknown table id" in error.message
    read = p4r.Entity(table_entry=p4r.TableEntry(table_id=_id(switch, "never")))
    with pytest.raises(Exception, match="unknown table id"):
        list(state.read(read))


def test_a_wildcard_read_lists_only_the_p4info_tables(
    switch: Switch, state: P4RuntimeState
) -> None:
    assert _write(state, INSERT, _entry(switch, "lpm8", 0x40, 2)).canonical_code == rpc_code.OK
    read = p4r.Entity(table_entry=p4r.TableEntry(table_id=0, is_default_action=False))
    tables = {e.table_entry.table_id for e in state.read(read)}
    assert _id(switch, "lpm8") in tables and _id(switch, "never") not in tables


# --- a table given `entries` (not const) ---------------------------------------------


def test_a_table_with_program_entries_takes_no_insert(
    switch: Switch, state: P4RuntimeState
) -> None:
    error = _write(state, INSERT, _entry(switch, "init", 5))
    assert error.canonical_code == rpc_code.UNKNOWN
    assert "Error when adding match entry to target" in error.message


@pytest.mark.parametrize("kind", [MODIFY, DELETE])
def test_its_program_entries_are_not_found(
    switch: Switch, state: P4RuntimeState, kind: int
) -> None:
    error = _write(state, kind, _entry(switch, "init", 1))
    assert error.canonical_code == rpc_code.NOT_FOUND
    assert "Cannot find match entry" in error.message
    switch.inject(0, bytes([0x01, 0x00, 0x00]))
    switch.run_until_idle()
    [(_port, out)] = switch.collect()
    assert out[-1] == 0x11  # the program's entry is still there, unchanged


def test_its_default_entry_can_still_be_set(switch: Switch, state: P4RuntimeState) -> None:
    te = p4r.TableEntry(
        table_id=_id(switch, "init"), is_default_action=True, action=_set_action(switch, 5)
    )
    assert _write(state, MODIFY, te).canonical_code == rpc_code.OK
    te.action.action.action_id = switch.objects.actions["NoAction"].id
    del te.action.action.params[:]
    assert _write(state, MODIFY, te).canonical_code == rpc_code.OK


def test_a_const_entries_table_keeps_its_own_answer(switch: Switch, state: P4RuntimeState) -> None:
    error = _write(state, INSERT, _entry(switch, "fixed", 5))
    assert error.canonical_code == rpc_code.PERMISSION_DENIED


# --- LPM keys whose width is not a multiple of 8 -------------------------------------


def test_the_padding_is_what_whole_bytes_add() -> None:
    assert [lpm_padding(w) for w in (1, 7, 8, 9, 15, 16, 32, 128)] == [7, 1, 0, 7, 1, 0, 0, 0]


def _bmv2_lpm(value: int, prefix: int, width: int) -> set[int] | None:
    """BMv2's answer, from its rule: refused (None) unless the last ``8n - prefix`` bits of
    the ``8n``-bit bytestring are 0; else the keys whose padded bytes share the first
    ``prefix`` bits with the value's."""
    padded = width + lpm_padding(width)
    if value & ((1 << (padded - prefix)) - 1):
        return None
    return {k for k in range(1 << width) if k >> (padded - prefix) == value >> (padded - prefix)}


def test_lpm_on_a_7_bit_key_as_bmv2(switch: Switch, state: P4RuntimeState) -> None:
    table = switch.objects.table_info["I.lpm7"].table
    seen_refused = seen_accepted = 0
    for prefix in range(1, 8):
        for value in range(0, 128, 1 << (7 - prefix)):  # every value the field allows
            table.clear()
            error = _write(state, INSERT, _entry(switch, "lpm7", value, prefix))
            expected = _bmv2_lpm(value, prefix, 7)
            if expected is None:
                seen_refused += 1
                assert error.canonical_code == rpc_code.INVALID_ARGUMENT, (value, prefix)
                assert "incorrect number of trailing zeros" in error.message
                continue
            seen_accepted += 1
            assert error.canonical_code == rpc_code.OK, (value, prefix, error.message)
            hits = {k for k in range(128) if table.lookup([k]) is not None}
            assert hits == expected, (value, prefix)
            # read back as written; a prefix no longer than the padding (0/1 here) matches
            # every key, and reads back as the don't-care form (no match field)
            read = p4r.TableEntry(table_id=_id(switch, "lpm7"))
            [entity] = state.read(p4r.Entity(table_entry=read))
            if prefix <= lpm_padding(7):
                assert not entity.table_entry.match
                continue
            lpm = entity.table_entry.match[0].lpm
            assert (int.from_bytes(lpm.value, "big"), lpm.prefix_len) == (value, prefix)
    assert seen_refused and seen_accepted


def test_measured_bmv2_cases() -> None:
    """What BMv2 1.15 did (docs/conformance.md): 0x20/3 matches 32-63, 0x10/3 is refused."""
    assert _bmv2_lpm(0x20, 3, 7) == set(range(32, 64))
    assert _bmv2_lpm(0x40, 2, 7) == set(range(64, 128))
    assert _bmv2_lpm(0x10, 7, 7) == {16, 17}
    assert _bmv2_lpm(0x10, 3, 7) is None and _bmv2_lpm(0x7F, 7, 7) is None


def test_lpm_on_a_byte_wide_key_is_unchanged(switch: Switch, state: P4RuntimeState) -> None:
    table = switch.objects.table_info["I.lpm8"].table
    assert _write(state, INSERT, _entry(switch, "lpm8", 0x50, 4)).canonical_code == rpc_code.OK
    assert {k for k in range(256) if table.lookup([k]) is not None} == set(range(0x50, 0x60))
