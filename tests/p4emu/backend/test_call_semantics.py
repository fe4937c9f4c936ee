"""Calls as p4c + BMv2 run them: copy-out on ``exit``, ``in`` aggregates copied at the
call, left-to-right evaluation around calls with ``inout`` arguments, an argument's
stack index evaluated once (tests/conformance/semantics compares each with BMv2)."""

from __future__ import annotations

from backend_helpers import Harness

FUNCTIONS = """
bit<8> inc(inout bit<8> v) { v = v + 1; return v; }
bit<8> add(in bit<8> x, in bit<8> y) { return x + y; }
void bump(inout bit<8> i, inout bit<8> v) { i = i + 1; v = v + 0x10; }
void plus16(inout bit<8> v) { v = v + 0x10; }
struct pair_t { bit<8> x; bit<8> y; }
header e_t { bit<8> v; }
"""


def test_exit_in_an_action_copies_its_out_and_inout_arguments_out() -> None:
    harness = Harness(
        "bit<8> k;",
        "bit<8> a; bit<8> b; bit<8> c;",
        """
        hdr.o.a = 1;
        if (hdr.i.k == 1) { setx(hdr.o.a, hdr.o.b); }
        hdr.o.c = 0xCC;
        """,
        locals_="action setx(inout bit<8> v, out bit<8> w) { v = v + 0xA0; w = 0xBB; exit; }",
    )
    assert harness.run(k=1) == {"a": 0xA1, "b": 0xBB, "c": 0}
    assert harness.run(k=0) == {"a": 1, "b": 0, "c": 0xCC}


def test_exit_in_a_sub_control_copies_a_scalar_inout_argument_out() -> None:
    harness = Harness(
        "bit<8> k;",
        "bit<8> a; bit<8> c;",
        "sub.apply(hdr.o.a, hdr.i.k); hdr.o.c = 0xCC;",
        decls="control Sub(inout bit<8> x, in bit<8> k) "
        "{ apply { x = 0x5A; if (k == 2) { exit; } x = 0x5B; } }",
        locals_="Sub() sub;",
    )
    assert harness.run(k=2) == {"a": 0x5A, "c": 0}
    assert harness.run(k=1) == {"a": 0x5B, "c": 0xCC}


def test_an_in_header_parameter_is_the_value_at_the_call() -> None:
    harness = Harness(
        "bit<8> k;",
        "bit<8> a; bit<8> b; bit<8> c;",
        """
        hdr.o.a = 0x11;
        if (hdr.i.k == 1) { direct(hdr.o); } else { through(hdr.o, hdr.o); }
        """,
        locals_="""
        action direct(in out_t x) { hdr.o.a = 0x33; hdr.o.b = x.a; }
        action through(inout out_t y, in out_t x) { y.a = 0x44; y.c = x.a; }
        """,
    )
    assert harness.run(k=1) == {"a": 0x33, "b": 0x11, "c": 0}
    assert harness.run(k=2) == {"a": 0x44, "b": 0, "c": 0x11}


def test_operands_read_before_a_call_keep_their_value() -> None:
    harness = Harness(
        "bit<8> k; bit<8> f;",
        "bit<8> e; bit<8> f; bit<8> g;",
        """
        hdr.o.f = hdr.i.f;
        if (hdr.i.k == 1) { hdr.o.e = hdr.o.f + inc(hdr.o.f); }
        if (hdr.i.k == 2) { pair_t p = {hdr.o.f, inc(hdr.o.f)}; hdr.o.e = p.x; hdr.o.g = p.y; }
        if (hdr.i.k == 3) { hdr.o.e = (hdr.o.f == inc(hdr.o.f)) ? 8w1 : 8w2; }
        if (hdr.i.k == 4) { hdr.o.e = add(hdr.o.f, inc(hdr.o.f)); }
        if (hdr.i.k == 5) { hdr.o.e = (hdr.o.f ++ inc(hdr.o.f))[11:4]; }
        """,
        decls=FUNCTIONS,
    )
    assert harness.run(k=1, f=0x11) == {"e": 0x23, "f": 0x12, "g": 0}
    assert harness.run(k=2, f=0x11) == {"e": 0x11, "f": 0x12, "g": 0x12}
    assert harness.run(k=3, f=0x11) == {"e": 2, "f": 0x12, "g": 0}
    assert harness.run(k=4, f=0x11) == {"e": 0x23, "f": 0x12, "g": 0}
    assert harness.run(k=5, f=0x11) == {"e": 0x11, "f": 0x12, "g": 0}


def test_an_argument_stack_index_is_evaluated_once_at_the_call() -> None:
    harness = Harness(
        "bit<8> k;",
        "bit<8> i; bit<8> s0; bit<8> s1; bit<8> s2;",
        """
        e_t[3] s;
        s[0].setValid(); s[1].setValid(); s[2].setValid();
        bit<8> i = 0;
        if (hdr.i.k == 1) { bump(i, s[i].v); }
        if (hdr.i.k == 2) { plus16(s[inc(i)].v); }
        if (hdr.i.k == 3) { s[inc(i)].v = i; }
        hdr.o.i = i; hdr.o.s0 = s[0].v; hdr.o.s1 = s[1].v; hdr.o.s2 = s[2].v;
        """,
        decls=FUNCTIONS,
    )
    assert harness.run(k=1) == {"i": 1, "s0": 0x10, "s1": 0, "s2": 0}
    assert harness.run(k=2) == {"i": 1, "s0": 0, "s1": 0x10, "s2": 0}
    assert harness.run(k=3) == {"i": 1, "s0": 0, "s1": 1, "s2": 0}


def test_one_control_instance_passed_to_two_controls_is_shared() -> None:
    harness = Harness(
        "bit<8> k;",
        "bit<8> a; bit<8> b; bit<8> c;",
        "t.apply(hdr.o.a, hdr.o.b); o.apply(hdr.o.c);",
        decls="""
control Step(inout bit<8> v);
control Count(inout bit<8> v) {
    register<bit<8>>(1) r;
    apply { bit<8> n; r.read(n, 0); n = n + 1; r.write(0, n); v = n; }
}
control Twice(inout bit<8> v, inout bit<8> w)(Step c) { apply { c.apply(v); c.apply(w); } }
control Once(inout bit<8> v)(Step c) { apply { c.apply(v); } }
""",
        locals_="Count() shared; Twice(shared) t; Once(shared) o;",
    )
    assert harness.run() == {"a": 1, "b": 2, "c": 3}
    assert harness.run() == {"a": 4, "b": 5, "c": 6}
    assert [name for name in harness.switch.objects.registers] == ["Ing.shared.r"]


def test_a_store_before_an_extern_out_argument_is_removed_as_p4c_removes_it() -> None:
    harness = Harness(
        "bit<8> idx;",
        "bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e;",
        """
        hdr.o.a = 0x11; hdr.o.b = 0x11; hdr.o.c = 0x11; hdr.o.e = 0x11;
        r.write(0, 0x42);
        hdr.o.a = 0x55;
        r.read(hdr.o.a, (bit<32>)hdr.i.idx);
        hdr.o.b = 0x66;
        mt.execute_meter((bit<32>)hdr.i.idx, hdr.o.b);
        hdr.o.c = 0x77;
        t.apply();
        bit<8> loc = 0x99;
        r.read(loc, (bit<32>)hdr.i.idx);
        hdr.o.d = loc;
        hdr.o.e = 0x88;
        bit<8> seen = hdr.o.e;
        r.read(hdr.o.e, (bit<32>)hdr.i.idx);
        """,
        locals_="""
        register<bit<8>>(4) r;
        meter(4, MeterType.packets) mt;
        direct_meter<bit<8>>(MeterType.packets) dm;
        action hitme() { dm.read(hdr.o.c); }
        table t { key = { hdr.i.idx: exact; } actions = { hitme; } default_action = hitme();
                  meters = dm; }
        """,
    )
    assert harness.run(idx=0) == {"a": 0x42, "b": 0, "c": 0x11, "d": 0x42, "e": 0x42}
    # out of range: the values from before the removed stores; 0x88 was read, so it stays
    assert harness.run(idx=9) == {"a": 0x11, "b": 0x11, "c": 0x11, "d": 0, "e": 0x88}
