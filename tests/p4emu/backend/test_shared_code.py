"""Switches of one program share the generated module and its code objects, never its
run-time state (tables, registers, counters, value sets, hooks)."""

from __future__ import annotations

import pytest

from p4emu.backend.exceptions import CompileError
from p4emu.backend.program import SharedCode, compile_program
from p4emu.frontend import load_program_text
from p4emu.runtime.clock import VirtualClock
from p4emu.runtime.tables import Exact
from p4emu.switch import Switch

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> kind; bit<8> k; bit<8> v; bit<8> seen; }
struct headers_t { h_t h; }
struct meta_t { bit<8> unused; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<8>>(4) kinds;
    state start { transition select(pkt.lookahead<bit<8>>()) { kinds: parse_h; default: accept; } }
    state parse_h { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<8>>(4) last;
    counter(8, CounterType.packets) hits;
    action set(bit<9> port, bit<8> v) { sm.egress_spec = port; hdr.h.v = v; }
    action drop() { mark_to_drop(sm); }
    table t { key = { hdr.h.k: exact; } actions = { set; drop; } default_action = drop(); }
    apply {
        if (!hdr.h.isValid()) { mark_to_drop(sm); return; }
        last.read(hdr.h.seen, 0);
        last.write(0, hdr.h.k);
        hits.count((bit<32>)hdr.h.k);
        log_msg("k={}", {hdr.h.k});
        t.apply();
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def _pair() -> tuple[Switch, Switch]:
    checked = load_program_text(PROGRAM, "shared.p4")
    return Switch(checked, clock=VirtualClock()), Switch(checked, clock=VirtualClock())


def test_switches_of_one_program_share_code_objects_and_classes() -> None:
    a, b = _pair()
    pa, pb = a.program, b.program
    assert pa.shared is not None and pa.shared is pb.shared
    for name in ("parse", "verify_checksum", "ingress", "egress", "compute_checksum", "deparse"):
        fa, fb = getattr(pa, name), getattr(pb, name)
        assert fa is not fb  # each switch has its own functions (own closures) ...
        assert fa.__code__ is fb.__code__  # ... over one code object
    assert pa.new_headers is pb.new_headers  # one class per type: attribute caches hold
    assert pa.copy_headers is pb.copy_headers
    # a separately loaded copy of the same source compiles to the same shared module
    again = compile_program(load_program_text(PROGRAM, "shared.p4"))
    assert again.shared is pa.shared


def test_a_different_program_gets_its_own_module() -> None:
    a, _ = _pair()
    other = compile_program(load_program_text(PROGRAM.replace("(4) last", "(8) last"), "x.p4"))
    assert other.shared is not a.program.shared
    assert other.ingress.__code__ is not a.program.ingress.__code__


def test_switches_of_one_program_never_share_state() -> None:
    a, b = _pair()
    set_id = a.objects.actions["Ing.set"].id
    a.objects.value_sets["P.kinds"].add([Exact(1)])
    a.objects.tables["Ing.t"].insert([Exact(5)], set_id, [2, 0x42])
    b.objects.value_sets["P.kinds"].add([Exact(1)])
    logs_a: list[str] = []
    logs_b: list[str] = []
    a.log_callback = logs_a.append
    b.log_callback = logs_b.append

    a.inject(1, bytes([1, 5, 0, 0]))
    assert a.collect() == [(2, bytes([1, 5, 0x42, 0]))]
    # b has no entry (default drop), its register and counter are untouched by a
    b.inject(1, bytes([1, 5, 0, 0]))
    assert b.collect() == []
    b.inject(1, bytes([1, 7, 0, 0]))
    assert b.collect() == []
    assert a.objects.registers["Ing.last"].get(0) == 5
    assert b.objects.registers["Ing.last"].get(0) == 7
    assert a.objects.counters["Ing.hits"].read(5)[0] == 1
    assert b.objects.counters["Ing.hits"].read(5)[0] == 1
    assert a.objects.counters["Ing.hits"].read(7)[0] == 0
    assert b.objects.counters["Ing.hits"].read(7)[0] == 1
    assert logs_a == ["k=5"]
    assert logs_b == ["k=5", "k=7"]

    # a value set and a table changed in one switch only
    a.objects.value_sets["P.kinds"].add([Exact(3)])
    b.objects.tables["Ing.t"].insert([Exact(5)], set_id, [3, 0x24])
    a.inject(1, bytes([3, 5, 0, 0]))
    b.inject(1, bytes([3, 5, 0, 0]))
    assert a.collect() == [(2, bytes([3, 5, 0x42, 5]))]
    assert b.collect() == []  # kind 3 is not in b's value set: not parsed, dropped
    b.objects.value_sets["P.kinds"].add([Exact(3)])
    b.inject(1, bytes([3, 5, 0, 0]))
    assert b.collect() == [(3, bytes([3, 5, 0x24, 7]))]
    assert len(a.objects.tables["Ing.t"]) == len(b.objects.tables["Ing.t"]) == 1


def test_generated_code_too_deep_for_cpython_is_a_compile_error() -> None:
    # an elif chain as a select of that many cases generates: CPython nests it
    deep = "x = 0\nif x == 0:\n    pass\n" + "".join(
        f"elif x == {case}:\n    pass\n" for case in range(1, 20000)
    )
    with pytest.raises(CompileError, match="nested too deeply for CPython's compiler"):
        SharedCode(deep, "<p4emu deep.p4>")
