"""Controls: tables, actions, switch on action_run, exit/return, functions, sub-controls,
structs and headers (initializers, assignment, validity), header stacks."""

from __future__ import annotations

import re

import pytest
from backend_helpers import Harness

from p4emu.backend import native
from p4emu.backend.body import calls
from p4emu.frontend import types as t
from p4emu.runtime.action_profiles import GROUP_REF, MEMBER_REF
from p4emu.runtime.exceptions import ConstDefaultActionError, ConstEntryError
from p4emu.runtime.externs import MeterConfig
from p4emu.runtime.tables import Exact, Lpm, Ternary

TABLES = Harness(
    "bit<8> a; bit<32> ip;",
    "bit<8> r; bit<8> h; bit<8> run;",
    """
    hdr.o.r = 0;
    if (t.apply().hit) { hdr.o.h = 1; } else { hdr.o.h = 2; }
    switch (lpm.apply().action_run) {
        set: { hdr.o.run = 1; }
        nop:
        other: { hdr.o.run = 2; }
        default: { hdr.o.run = 3; }
    }
    """,
    locals_="""
    action set(bit<8> x) { hdr.o.r = hdr.o.r + x; }
    action nop() { }
    action other() { }
    action third() { }
    table t { key = { hdr.i.a: exact; } actions = { set; nop; } default_action = set(8w99); }
    table lpm {
        key = { hdr.i.ip: lpm; }
        actions = { set; nop; other; third; }
        default_action = third();
    }
    """,
)


def test_table_hit_miss_default_action_and_action_run_switch() -> None:
    objects = TABLES.switch.objects
    table = objects.tables["Ing.t"]
    set_id = objects.actions["Ing.set"].id
    assert TABLES.run(a=5, ip=0) == {"r": 99, "h": 2, "run": 3}  # miss: default set(99)
    table.insert([Exact(5)], set_id, [3])
    assert TABLES.run(a=5, ip=0) == {"r": 3, "h": 1, "run": 3}
    table.set_default_action(objects.actions["Ing.nop"].id)
    assert TABLES.run(a=6, ip=0)["r"] == 0
    lpm = objects.tables["Ing.lpm"]
    lpm.insert([Lpm(0x0A000000, 8)], set_id, [10])
    lpm.insert([Lpm(0x0A010000, 16)], objects.actions["Ing.nop"].id)
    lpm.insert([Lpm(0x0B000000, 8)], objects.actions["Ing.other"].id)
    assert TABLES.run(a=5, ip=0x0A020304) == {"r": 13, "h": 1, "run": 1}
    assert TABLES.run(a=5, ip=0x0A010304)["run"] == 2  # fall-through label
    assert TABLES.run(a=5, ip=0x0B000001)["run"] == 2
    assert TABLES.run(a=5, ip=0x0C000001)["run"] == 3  # default action third -> default


def test_exit_return_and_local_variables() -> None:
    harness = Harness(
        "bit<8> a;",
        "bit<8> r; bit<8> s;",
        """
        bit<8> local = 5;
        hdr.o.s = counter_var;
        counter_var = counter_var + 1;
        if (hdr.i.a == 1) { stop(); }
        hdr.o.r = local;
        if (hdr.i.a == 2) { return; }
        hdr.o.r = 7;
        """,
        locals_="""
        bit<8> counter_var = 40;
        action stop() { hdr.o.r = 9; exit; }
        """,
    )
    assert harness.run(a=1) == {"r": 9, "s": 40}
    assert harness.run(a=2) == {"r": 5, "s": 40}  # control locals start afresh per packet
    assert harness.run(a=3) == {"r": 7, "s": 40}


def test_functions_with_out_and_inout_parameters() -> None:
    harness = Harness(
        "bit<8> a; bit<8> b;",
        "bit<8> sum; bit<8> q; bit<8> rem; bit<8> swapped; bit<8> big;",
        """
        bit<8> q; bit<8> r;
        divmod(hdr.i.a, hdr.i.b, q, r);
        hdr.o.q = q;
        hdr.o.rem = r;
        hdr.o.sum = add_sat(hdr.i.a, hdr.i.b);
        bit<8> x = hdr.i.a;
        bit<8> y = hdr.i.b;
        swap(x, y);
        hdr.o.swapped = x;
        hdr.o.big = bigger(hdr.i.a, hdr.i.b) ? 8w1 : 8w0;
        """,
        decls="""
        bit<8> add_sat(in bit<8> a, in bit<8> b) { return a |+| b; }
        void divmod(in bit<8> a, in bit<8> b, out bit<8> q, out bit<8> r) {
            if (b == 0) { q = 0; r = 0; return; }
            q = a / b;
            r = a % b;
        }
        void swap(inout bit<8> a, inout bit<8> b) { bit<8> t = a; a = b; b = t; }
        bool bigger(in bit<8> a, in bit<8> b) { if (a > b) { return true; } return false; }
        """,
    )
    assert harness.run(a=200, b=100) == {"sum": 255, "q": 2, "rem": 0, "swapped": 100, "big": 1}
    assert harness.run(a=17, b=5) == {"sum": 22, "q": 3, "rem": 2, "swapped": 5, "big": 1}
    assert harness.run(a=3, b=0)["q"] == 0


SUBCONTROL_DECLS = """
control Adder(inout bit<8> value, out bit<8> calls)(bit<8> amount) {
    action add() { value = value + amount; }
    table tbl { key = { value: exact; } actions = { add; NoAction; } default_action = add(); }
    apply {
        calls = 1;
        if (value == 0) { return; }
        tbl.apply();
    }
}
"""


def test_sub_controls_with_constructor_parameters_and_copy_out() -> None:
    harness = Harness(
        "bit<8> a;",
        "bit<8> r; bit<8> calls;",
        """
        bit<8> v = hdr.i.a;
        add1.apply(v, hdr.o.calls);
        add10.apply(v, hdr.o.calls);
        hdr.o.r = v;
        """,
        decls=SUBCONTROL_DECLS,
        locals_="Adder(1) add1; Adder(10) add10;",
    )
    assert harness.run(a=5) == {"r": 16, "calls": 1}
    assert harness.run(a=0) == {"r": 0, "calls": 1}  # return before the table
    tables = harness.switch.objects.tables
    assert {"Ing.add1.tbl", "Ing.add10.tbl"} <= set(tables)
    objects = harness.switch.objects
    tables["Ing.add10.tbl"].insert([Exact(6)], objects.actions["NoAction"].id)
    assert harness.run(a=5)["r"] == 6  # add1 ran, add10's entry for 6 does nothing


def test_struct_and_header_initializers_assignment_and_equality() -> None:
    harness = Harness(
        "bit<8> a; bit<8> b;",
        "bit<8> first; bit<8> second; bit<8> eq; bit<8> hdr_eq; bit<8> copy_valid; bit<8> c2;",
        """
        pair_t p = { hdr.i.a, hdr.i.b };
        pair_t q;
        q = { second = hdr.i.a, first = hdr.i.b };
        pair_t r = p;
        p.first = 0;
        hdr.o.first = r.first;
        hdr.o.second = q.second;
        pair_t same = { hdr.i.a, hdr.i.b };
        hdr.o.eq = (r == same && r != q) ? 8w1 : 8w0;
        two_t t1 = { 1, 2 };
        two_t t2;
        t2.setValid();
        t2.x = 1; t2.y = 2;
        hdr.o.hdr_eq = (t1 == t2) ? 8w1 : 8w0;
        two_t t3;
        t3 = t1;
        t1.setInvalid();
        t3 = t1;
        hdr.o.copy_valid = t3.isValid() ? 8w1 : 8w0;
        hdr.o.c2 = t3.y;
        """,
        decls="struct pair_t { bit<8> first; bit<8> second; }\nheader two_t { bit<8> x; bit<8> y; }",
    )
    out = harness.run(a=3, b=4)
    assert out["first"] == 3 and out["second"] == 3 and out["eq"] == 1
    assert out["hdr_eq"] == 1
    # assigning an invalid header only invalidates the target (BMv2 assign_header)
    assert out["copy_valid"] == 0 and out["c2"] == 2


def test_set_valid_zeroes_an_invalid_header_and_set_invalid_keeps_fields() -> None:
    harness = Harness(
        "bit<8> a;",
        "bit<8> before; bit<8> after_valid; bit<8> after_invalid; bit<8> revalid;",
        """
        two_t h;
        h.setValid();
        h.x = hdr.i.a;
        hdr.o.before = h.x;
        h.setValid();
        hdr.o.after_valid = h.x;
        h.setInvalid();
        hdr.o.after_invalid = h.x;
        h.setValid();
        hdr.o.revalid = h.x;
        """,
        decls="header two_t { bit<8> x; bit<8> y; }",
    )
    assert harness.run(a=42) == {"before": 42, "after_valid": 42, "after_invalid": 42, "revalid": 0}


def test_header_stack_push_pop_indexing() -> None:
    harness = Harness(
        "bit<8> a; bit<8> idx;",
        "bit<8> v0; bit<8> v1; bit<8> v2; bit<8> valid; bit<8> dyn; bit<32> last;",
        """
        tag_t[3] s;
        s[0].setValid(); s[0].v = 1;
        s[1].setValid(); s[1].v = 2;
        s.push_front(1);
        s[0].setValid(); s[0].v = hdr.i.a;
        hdr.o.v0 = s[0].v; hdr.o.v1 = s[1].v; hdr.o.v2 = s[2].v;
        s.pop_front(2);
        hdr.o.valid = (s[0].isValid() ? 8w1 : 0) | (s[1].isValid() ? 8w2 : 0) | (s[2].isValid() ? 8w4 : 0);
        hdr.o.dyn = s[hdr.i.idx].v;
        """,
        decls="header tag_t { bit<8> v; }",
    )
    out = harness.run(a=9, idx=0)
    assert (out["v0"], out["v1"], out["v2"]) == (9, 1, 2)
    assert out["valid"] == 1  # only the old s[2] (value 2) moved to s[0]
    assert out["dyn"] == 2
    assert harness.run(a=9, idx=7)["dyn"] == 0  # out-of-range index reads an invalid header


def test_const_entries_priorities_and_const_default_action() -> None:
    harness = Harness(
        "bit<8> a;",
        "bit<8> r;",
        "t.apply();",
        locals_="""
        action set(bit<8> x) { hdr.o.r = x; }
        table t {
            key = { hdr.i.a: ternary; }
            actions = { set; }
            const default_action = set(0);
            const entries = {
                0x10 &&& 0xF0: set(1);
                0x11: set(2);
                _: set(4);
                0x12: set(3);
            }
        }
        """,
    )
    assert harness.run(a=0x11)["r"] == 1  # earlier entries win without explicit priorities
    assert harness.run(a=0x12)["r"] == 1  # the order written decides
    assert harness.run(a=0x55)["r"] == 4
    objects = harness.switch.objects
    table = objects.tables["Ing.t"]
    with pytest.raises(ConstEntryError):
        table.insert([Ternary(1, 0xFF)], objects.actions["Ing.set"].id, [1], priority=5)
    with pytest.raises(ConstDefaultActionError):
        table.set_default_action(objects.actions["Ing.set"].id, [9])


def test_direct_counter_direct_meter_and_action_selector() -> None:
    harness = Harness(
        "bit<8> a; bit<8> flow;",
        "bit<8> r; bit<8> color;",
        """
        hdr.o.color = 9;
        counted.apply();
        metered.apply();
        selected.apply();
        """,
        locals_="""
        direct_counter(CounterType.packets_and_bytes) hits;
        direct_meter<bit<8>>(MeterType.packets) colors;
        action c() { }
        action m() { colors.read(hdr.o.color); }
        action pick(bit<8> x) { hdr.o.r = x; }
        table counted { key = { hdr.i.a: exact; } actions = { c; } counters = hits; }
        table metered { key = { hdr.i.a: exact; } actions = { m; } meters = colors; }
        action_selector(HashAlgorithm.identity, 32w64, 32w8) sel;
        table selected {
            key = { hdr.i.a: exact; hdr.i.flow: selector; }
            actions = { pick; }
            implementation = sel;
        }
        """,
    )
    objects = harness.switch.objects
    actions = objects.actions
    counted = objects.tables["Ing.counted"]
    entry = counted.insert([Exact(1)], actions["Ing.c"].id)
    metered = objects.tables["Ing.metered"]
    metered.insert([Exact(1)], actions["Ing.m"].id)
    metered.set_direct_meter_config([Exact(1)], MeterConfig(cir=1, cburst=1, pir=1, pburst=2))
    profile = objects.action_profiles["Ing.sel"]
    for member in range(3):
        profile.insert_member(member, actions["Ing.pick"].id, [10 + member])
    profile.insert_group(7, {0: 1, 1: 1, 2: 1})
    selected = objects.tables["Ing.selected"]
    profile.reference(GROUP_REF, (7,))
    selected.insert([Exact(1)], GROUP_REF, (7,))
    colors = []
    picks = []
    for flow in range(6):
        out = harness.run(a=1, flow=flow)
        colors.append(out["color"])
        picks.append(out["r"])
    assert entry.packets == 6 and entry.bytes == 6 * 2
    assert colors == [0, 1, 2, 2, 2, 2]  # committed burst 1, peak burst 2 (trTCM)
    assert picks == [10 + (flow % 3) for flow in range(6)]  # identity hash % 3 members
    assert harness.run(a=2, flow=0)["color"] == 9  # miss: color untouched
    profile.reference(MEMBER_REF, (2,))
    selected.modify([Exact(1)], MEMBER_REF, (2,))
    assert harness.run(a=1, flow=0)["r"] == 12


def test_switch_statement_on_values_and_enums_with_fall_through() -> None:
    harness = Harness(
        "bit<8> a;",
        "bit<8> r; bit<8> e;",
        """
        switch (hdr.i.a) {
            1: { hdr.o.r = 10; }
            2:
            3: { hdr.o.r = 20; }
            default: { hdr.o.r = 30; }
        }
        color_t c = hdr.i.a == 1 ? color_t.GREEN : color_t.RED;
        switch (c) {
            color_t.GREEN: { hdr.o.e = 1; }
            color_t.RED: { hdr.o.e = 2; }
        }
        """,
        decls="enum color_t { GREEN, RED }",
    )
    assert [harness.run(a=a)["r"] for a in (1, 2, 3, 4)] == [10, 20, 20, 30]
    assert harness.run(a=1)["e"] == 1 and harness.run(a=5)["e"] == 2


def test_directional_action_arguments_in_a_table_action_list() -> None:
    harness = Harness(
        "bit<8> a;",
        "bit<8> r; bit<8> s;",
        "t.apply();",
        locals_="""
        action bump(inout bit<8> target, bit<8> step) { target = target + step; }
        table t {
            key = { hdr.i.a: exact; }
            actions = { bump(hdr.o.r); }
            default_action = bump(hdr.o.r, 5);
        }
        """,
    )
    objects = harness.switch.objects
    objects.tables["Ing.t"].insert([Exact(1)], objects.actions["Ing.bump"].id, [7])
    assert harness.run(a=1) == {"r": 7, "s": 0}
    assert harness.run(a=2) == {"r": 5, "s": 0}


def test_header_union_member_valid_invalidates_its_siblings() -> None:
    harness = Harness(
        "bit<8> a;",
        "bit<8> va; bit<8> vb; bit<8> u;",
        """
        u_t u;
        u.x.setValid();
        u.x.v = hdr.i.a;
        u.y.setValid();
        hdr.o.va = u.x.isValid() ? 8w1 : 0;
        hdr.o.vb = u.y.isValid() ? 8w1 : 0;
        hdr.o.u = u.isValid() ? 8w1 : 0;
        """,
        decls="header x_t { bit<8> v; }\nheader y_t { bit<16> v; }\nheader_union u_t { x_t x; y_t y; }",
    )
    assert harness.run(a=3) == {"va": 0, "vb": 1, "u": 1}


WIDTHS = Harness(
    "bit<1> p; bit<63> a; bit<64> b; bit<128> c;",
    "bit<8> r;",
    """
    hdr.o.r = 0;
    by_port.apply();
    by_63.apply();
    by_64.apply();
    by_128.apply();
    """,
    locals_="""
    action add(bit<8> x) { hdr.o.r = hdr.o.r + x; }
    table by_port { key = { sm.ingress_port: exact; } actions = { add; } }
    table by_63 { key = { hdr.i.a: exact; } actions = { add; } }
    table by_64 { key = { hdr.i.b: exact; } actions = { add; } }
    table by_128 { key = { hdr.i.c: exact; } actions = { add; } }
    """,
)


def test_exact_tables_of_one_key_up_to_63_bits_use_the_c_map_compiled() -> None:
    """The generated lookup: ``T.exact_at(key)`` on the compiled path for one exact key
    field of up to 63 bits (the port, a bit<63>), the dictionary for wider keys (bit<64>,
    bit<128>: not C long longs) and on the pure path; the same results either way."""
    source = WIDTHS.switch.program.source
    lookups = [line.strip() for line in source.splitlines() if ": TableAction = " in line]
    assert len(lookups) == 4
    by_name = {name: next(line for line in lookups if name in line) for name in WIDTHS_NAMES}
    for name in ("by_port", "by_63"):
        assert ".exact_at(" in by_name[name] and " if cython.compiled else (" in by_name[name]
    for name in ("by_64", "by_128"):
        assert "exact_at" not in by_name[name] and ".get(" in by_name[name]
    objects = WIDTHS.switch.objects
    add = objects.actions["Ing.add"].id
    top = (1 << 63) - 1
    assert WIDTHS.run(a=top, b=1 << 63, c=1 << 127) == {"r": 0}
    objects.tables["Ing.by_port"].insert([Exact(1)], add, [1])
    objects.tables["Ing.by_63"].insert([Exact(top)], add, [2])
    objects.tables["Ing.by_64"].insert([Exact(1 << 63)], add, [4])
    objects.tables["Ing.by_128"].insert([Exact(1 << 127)], add, [8])
    assert WIDTHS.run(a=top, b=1 << 63, c=1 << 127) == {"r": 15}
    assert WIDTHS.run(a=top - 1, b=1 << 63, c=1 << 127) == {"r": 13}
    objects.tables["Ing.by_63"].delete([Exact(top)])
    assert WIDTHS.run(a=top, b=0, c=0) == {"r": 1}


def test_action_ids_read_into_c_integer_locals() -> None:
    """Each action dispatch reads the entry's action id into a local annotated
    ``cython.longlong`` (compiled, each branch's test a C comparison; Python ignores the
    annotation); the dispatch itself is tested above, on both paths."""
    source = TABLES.switch.program.source
    reads = [line.strip() for line in source.splitlines() if line.rstrip().endswith(".action_id")]
    assert len(reads) == 2  # t (its hit and set) and lpm (the switch on action_run)
    for line in reads:
        if native.runtime_native():  # the entry's C copy while it is of this id
            assert re.search(
                r": cython\.longlong = \((e_\d+)\._c_id if \1\._c_id_src is \1\.action_id "
                r"else \1\.c_action_id\(\)\) if cython\.compiled else \1\.action_id$",
                line,
            ), line
        else:
            assert re.search(r": cython\.longlong = e_\d+\.action_id$", line), line


def test_an_entrys_action_replaced_is_followed() -> None:
    """The action id and arguments compiled code reads from an entry's C copies
    (``TableAction._c_id``, ``_c_argp``) follow the control plane: a modify to another
    action, the action id and arguments assigned (as P4Runtime's modify and rollback do),
    an action id the table does not know (no branch: nothing runs), and back."""
    objects = STORES.switch.objects
    table = objects.tables["Ing.t"]
    store, mixed = (objects.actions[f"Ing.{name}"].id for name in ("store", "mixed"))
    table.insert([Exact(4)], store, [1, 2])
    assert STORES.run(a=4) == {"r": 1, "s": 0, "u": 0, "v": 0}
    table.modify([Exact(4)], mixed, [3, 4])
    assert STORES.run(a=4) == {"r": 0, "s": 0, "u": 3, "v": 5}
    entry = table.get([Exact(4)])
    entry.action_id, entry.args = store, (6, 7)
    assert STORES.run(a=4) == {"r": 6, "s": 0, "u": 0, "v": 0}
    entry.action_id = store + mixed + 1  # no action's id
    assert STORES.run(a=4) == {"r": 0, "s": 0, "u": 0, "v": 0}
    entry.action_id = int(str(mixed))  # an equal int, another object
    assert STORES.run(a=4) == {"r": 0, "s": 0, "u": 6, "v": 8}
    table.delete([Exact(4)])


STORES = Harness(
    "bit<8> a;",
    "bit<8> r; bit<16> s; bit<8> u; bit<8> v;",
    "hdr.o.r = 0; hdr.o.s = 0; hdr.o.u = 0; hdr.o.v = 0; t.apply();",
    locals_="""
    action store(bit<8> x, bit<16> y) { hdr.o.r = x; if (hdr.i.a == 8w1) { hdr.o.s = y; } }
    action mixed(bit<8> x, bit<8> y) { hdr.o.u = x; hdr.o.v = y + 8w1; }
    action signed(int<8> x) { hdr.o.u = (bit<8>) x; }
    table t {
        key = { hdr.i.a: exact; }
        actions = { store; mixed; signed; }
        default_action = store(8w5, 16w300);
    }
    """,
)


def test_action_parameters_stored_whole_come_from_the_entrys_c_copy() -> None:
    """On a native runtime, an action whose ``bit<W>`` parameters are only stored whole
    reads them from ``TableAction.c_args`` (compiled; the unpacking kept beside it for
    an entry without a C copy and for the pure path); one that computes with a parameter,
    or has a signed one, unpacks as before. The same results on both paths, through
    inserts, a modify, arguments replaced by another tuple and by a list (no C copy)."""
    source = STORES.switch.program.source
    copies = [line.strip() for line in source.splitlines() if ".c_args()" in line]
    if native.runtime_native():
        assert len(copies) == 1  # store's; mixed computes with y, signed is signed
        assert "cython.compiled and _ca_" in source
    else:  # a pure runtime's TableAction has no C copy: nothing reads it
        assert copies == []
    objects = STORES.switch.objects
    table = objects.tables["Ing.t"]
    store, mixed, signed = (
        objects.actions[f"Ing.{name}"].id for name in ("store", "mixed", "signed")
    )
    assert STORES.run(a=1) == {"r": 5, "s": 300, "u": 0, "v": 0}  # the default action
    assert STORES.run(a=8) == {"r": 5, "s": 0, "u": 0, "v": 0}
    table.insert([Exact(1)], store, [1, 65535])
    table.insert([Exact(2)], mixed, [7, 255])
    table.insert([Exact(3)], signed, [0xFF])
    assert STORES.run(a=1) == {"r": 1, "s": 65535, "u": 0, "v": 0}
    assert STORES.run(a=2) == {"r": 0, "s": 0, "u": 7, "v": 0}  # 255 + 1 wraps
    assert STORES.run(a=3) == {"r": 0, "s": 0, "u": 0xFF, "v": 0}
    table.modify([Exact(1)], store, [2, 3])
    assert STORES.run(a=1) == {"r": 2, "s": 3, "u": 0, "v": 0}
    entry = table.get([Exact(1)])
    entry.args = (4, 5)
    assert STORES.run(a=1) == {"r": 4, "s": 5, "u": 0, "v": 0}
    entry.args = [6, 7]  # type: ignore[assignment]  # not a tuple: unpacked as before
    assert STORES.run(a=1) == {"r": 6, "s": 7, "u": 0, "v": 0}
    table.set_default_action(store, [9, 10])
    assert STORES.run(a=9) == {"r": 9, "s": 0, "u": 0, "v": 0}
    assert STORES.run(a=7) == {"r": 9, "s": 0, "u": 0, "v": 0}


def test_only_whole_stores_of_narrow_unsigned_parameters_use_the_c_copy() -> None:
    """``_stores_from_c_args`` on lines as the generator writes them: stores rewritten to
    the pointer's items, the lines kept as the fallback; a parameter read in an
    expression (or as part of a target) leaves the lines untouched; so do lines that
    name no parameter."""
    lines = [
        "x",
        "    a_1, b_2 = e_3.args",
        "    h.f = a_1",
        "    if h.g == 1:",
        "        h.k = b_2",
        "",
    ]
    out = list(lines)
    calls._stores_from_c_args(out, 1, ["a_1", "b_2"], "e_3", lambda hint: f"{hint}_9")
    assert out == [
        "x",
        "    _ca_9: cython.p_longlong",
        "    if cython.compiled:",
        "        _ca_9 = e_3._c_argp if e_3._c_src is e_3.args else e_3.c_args()",
        "    if cython.compiled and _ca_9 != cython.NULL:",
        "        h.f = _ca_9[0]",
        "        if h.g == 1:",
        "            h.k = _ca_9[1]",
        "",
        "    else:",
        "        a_1, b_2 = e_3.args",
        "        h.f = a_1",
        "        if h.g == 1:",
        "            h.k = b_2",
        "",
    ]
    for body in (["    h.f = a_1 + 1"], ["    h.f = g(a_1)"], ["    a_1 = 2"], ["    h.f = 3"]):
        kept = ["    a_1, = e_3.args", *body]
        before = list(kept)
        calls._stores_from_c_args(kept, 0, ["a_1"], "e_3", lambda hint: f"{hint}_9")
        assert kept == before, body
    assert calls._c_arg_type(t.BitsType(63, False))
    assert not calls._c_arg_type(t.BitsType(64, False))
    assert not calls._c_arg_type(t.BitsType(8, True))
    assert not calls._c_arg_type(t.BoolType())
    assert not calls._c_arg_type(None)


WIDTHS_NAMES = ("by_port", "by_63", "by_64", "by_128")
