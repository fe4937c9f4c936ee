"""Switches of one program share the generated module and its code objects, and generate
its text once (a template per checked program and options), never its run-time state
(tables, registers, counters, value sets, hooks, random streams, custom CRCs, digests)."""

from __future__ import annotations

import ast
import gc
import weakref
from collections.abc import Callable
from types import CodeType, ModuleType

import pytest
from backend_helpers import program_compiler

from clikit import hotpath
from p4emu.backend import native, program
from p4emu.backend.exceptions import CompileError
from p4emu.backend.ids import assign_ids
from p4emu.backend.program import (
    Hooks,
    SharedCode,
    compile_program,
    compile_stats,
)
from p4emu.backend.runtime_objects import RuntimeBuilder
from p4emu.frontend import load_program_text
from p4emu.p4info.ids import ResourceType
from p4emu.runtime import hashes
from p4emu.runtime.clock import VirtualClock
from p4emu.runtime.externs import DigestQueue, RandomSource
from p4emu.runtime.pre import ReplicationEngine
from p4emu.runtime.tables import Exact, Ternary
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


#: the shared module's functions are Python functions (code objects) on the pure path;
#: compiled, they are an extension module's, whose sharing the module identity shows
pure_generated_code = pytest.mark.skipif(
    not hotpath.pure_forced(),
    reason="compares Python code objects: the generated module runs pure only with "
    "$MRC_TESTBED_PURE set (tests/conftest.py's default)",
)


@pure_generated_code
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
    if hotpath.pure_forced():  # compiled, the same text is one extension module
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


DEEP = "x = 0\nif x == 0:\n    pass\n" + "".join(
    f"elif x == {case}:\n    pass\n" for case in range(1, 20000)
)


def native_wanted(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process runs the compiled hot path (as far as SharedCode asks)."""
    monkeypatch.setattr(native, "wanted", lambda: None)


def test_a_text_too_deep_for_the_declarations_proof_is_the_same_compile_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    native_wanted(monkeypatch)
    loads: list[str] = []
    monkeypatch.setattr(native, "load", lambda *args: loads.append("load"))
    with pytest.raises(CompileError, match="nested too deeply for CPython's compiler"):
        SharedCode(DEEP, "<p4emu deep.p4>", lambda: ast.dump(ast.parse(DEEP)))
    assert loads == []


def test_a_cached_native_module_is_used_without_compiling_the_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    native_wanted(monkeypatch)
    module = ModuleType("cached")
    module.__make__ = lambda ns: {"ns": ns}  # type: ignore[attr-defined]
    seen: list[object] = []

    def load(source: str, pxd: str, check: Callable[[], object]) -> ModuleType:
        seen.append(check)  # a hit: the check is not called
        return module

    monkeypatch.setattr(native, "load", load)
    compiled: list[str] = []

    def counting_compile(source: str, filename: str, mode: str) -> CodeType:
        compiled.append(filename)
        return compile(source, filename, mode)

    # the module's own name shadows the builtin for SharedCode only
    monkeypatch.setattr(program, "compile", counting_compile, raising=False)
    shared = SharedCode("def __make__(ns):\n    return ns\n", "<p4emu cached.p4>", "decl")
    assert shared.how == "compiled" and shared.make({"a": 1}) == {"ns": {"a": 1}}
    assert compiled == [] and len(seen) == 1
    assert shared.code().co_filename == "<p4emu cached.p4>"  # compiled when asked
    assert compiled == ["<p4emu cached.p4>"]


def test_on_a_native_miss_the_text_is_checked_before_the_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    native_wanted(monkeypatch)

    def load(source: str, pxd: str, check: Callable[[], object]) -> ModuleType:
        check()  # a miss: native.load checks before building
        raise AssertionError("built a text that does not compile")

    monkeypatch.setattr(native, "load", load)
    with pytest.raises(CompileError, match="nested too deeply"):
        SharedCode(DEEP, "<p4emu deep.p4>", "decl")


# a second program: random(), a custom CRC the control plane configures per switch, a
# digest, a direct counter, an action only ever called directly (its id is given while
# the code is generated) and a trace point per table
STATEFUL = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<16> r; bit<16> c; }
struct headers_t { h_t h; }
struct meta_t { bit<8> unused; }
struct learn_t { bit<8> k; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets) seen;
    action fwd() { sm.egress_spec = 1; }
    action only_called() { hdr.h.k = hdr.h.k + 1; }
    table t { key = { hdr.h.k: ternary; } actions = { fwd; } default_action = fwd(); counters = seen; }
    apply {
        random(hdr.h.r, 16w0, 16w65535);
        hash(hdr.h.c, HashAlgorithm.crc16_custom, 16w0, { hdr.h.k }, 32w65536);
        digest<learn_t>(1, { hdr.h.k });
        only_called();
        t.apply();
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def _out(switch: Switch, k: int) -> tuple[int, int, int]:
    switch.inject(0, bytes([k, 0, 0, 0, 0]))
    [(_, data)] = switch.collect()
    return data[0], int.from_bytes(data[1:3], "big"), int.from_bytes(data[3:5], "big")


def test_switches_of_one_program_generate_its_code_once() -> None:
    checked = load_program_text(STATEFUL, "stateful.p4")
    before = compile_stats()
    switches = [Switch(checked, clock=VirtualClock(), seed=i) for i in range(5)]
    after = compile_stats()
    assert (after.generated - before.generated, after.reused - before.reused) == (1, 4)
    template = switches[0].program.template
    assert template is not None
    assert all(s.program.template is template for s in switches)
    assert all(s.program.source is template.source for s in switches)
    # every switch's control-plane objects are the same as the generating switch's: the
    # late action id, the digest and the CRC's call site were replayed
    first = switches[0].objects
    for other in (s.objects for s in switches[1:]):
        assert sorted(other.actions) == sorted(first.actions)
        assert "Ing.only_called" in other.actions
        assert other.actions["Ing.only_called"].id == first.actions["Ing.only_called"].id
        assert other.digests.keys() == first.digests.keys() and other.digests
        assert other.hash_crcs.keys() == first.hash_crcs.keys() and other.hash_crcs
        assert other.tables["Ing.t"] is not first.tables["Ing.t"]


def test_switches_of_one_program_compute_its_control_plane_ids_once() -> None:
    """A further switch's ids are the generating switch's (assign_ids is not run again):
    the symbol table and the P4Info shared, the late ids each switch's own."""
    checked = load_program_text(STATEFUL, "stateful.p4")
    first, second, third = (Switch(checked, clock=VirtualClock(), seed=i) for i in range(3))
    reference = assign_ids(checked)
    ids = [s.program.ids for s in (first, second, third)]
    assert ids[1].symbols is ids[0].symbols and ids[2].p4info is ids[0].p4info
    assert ids[1].extra is not ids[0].extra and ids[2].extra is not ids[1].extra
    for resource in ResourceType:
        for name in reference.symbols.names(resource):
            assert {i.id(resource, name) for i in ids} == {reference.id(resource, name)}
    assert ids[1].action_params == reference.action_params
    assert ids[1].match_fields == reference.match_fields
    # a late id (an action p4c leaves out of the P4Info) assigned in one switch is not
    # in another's table until that one asks for it, and then it is the same id
    late = (ResourceType.ACTION, "Ing.another_late_one")
    assert late not in ids[2].extra
    got = ids[2].id(*late)
    assert late in ids[2].extra and late not in ids[1].extra
    assert ids[1].id(*late) == got == reference.id(*late)


def test_switches_sharing_a_template_keep_their_own_random_crc_digests_and_counters() -> None:
    checked = load_program_text(STATEFUL, "stateful.p4")
    a = Switch(checked, clock=VirtualClock(), seed=7)
    b = Switch(checked, clock=VirtualClock(), seed=7)
    assert b.program.template is a.program.template
    # a's random stream moves on; b's still starts where a's did (same seed)
    first_a = [_out(a, 1)[1] for _ in range(3)]
    assert _out(b, 1)[1] == first_a[0]
    # a custom CRC reconfigured in a only
    before_a, before_b = _out(a, 9)[2], _out(b, 9)[2]
    assert before_a == before_b
    [crc_a] = a.objects.hash_crcs.values()
    [crc_b] = b.objects.hash_crcs.values()
    assert crc_a is not crc_b
    crc_a.configure(hashes.CrcConfig(0x8005, 0xFFFF, 0, False, False))
    assert _out(a, 9)[2] != before_a
    assert _out(b, 9)[2] == before_b
    # digests: each switch's own queue (a: 5 packets, b: 3)
    learnt_a = sum(len(d.samples) for d in a.digest_queue.poll())
    learnt_b = sum(len(d.samples) for d in b.digest_queue.poll())
    assert (learnt_a, learnt_b) == (5, 3)
    # the same entry in both tables: each switch's packets count in its own entry only
    fwd = a.objects.actions["Ing.fwd"].id
    for switch in (a, b):
        switch.objects.tables["Ing.t"].insert([Ternary(4, 0xFF)], fwd, priority=1)
    for _ in range(2):
        assert _out(a, 3)[0] == 4  # only_called() adds 1 before the table
    _out(b, 3)
    _out(b, 4)  # no entry: the default action, nothing counted
    [entry_a] = a.objects.tables["Ing.t"].entries()
    [entry_b] = b.objects.tables["Ing.t"].entries()
    assert (entry_a.packets, entry_b.packets) == (2, 1)


def test_different_options_or_programs_get_their_own_template() -> None:
    checked = load_program_text(STATEFUL, "stateful.p4")
    plain = compile_program(checked)
    assert compile_program(checked).template is plain.template
    before = compile_stats()
    traced = compile_program(checked, trace=True)
    strict = compile_program(checked, no_match_error=True)
    dropping = compile_program(checked, drop_port=100)
    other = compile_program(load_program_text(STATEFUL, "stateful.p4"))  # checked again
    after = compile_stats()
    assert after.generated - before.generated == 4
    templates = {id(p.template) for p in (plain, traced, strict, dropping, other)}
    assert len(templates) == 5
    assert "TRACE(" in traced.source and "TRACE(" not in plain.source
    assert dropping.drop_port == 100 and plain.drop_port == 511
    # the text of another checked copy of the same program is the same: one module
    assert other.source == plain.source and other.shared is plain.shared


def test_a_template_lives_as_long_as_a_program_made_from_it() -> None:
    checked = load_program_text(STATEFUL, "stateful.p4")
    compiled = compile_program(checked)
    template = weakref.ref(compiled.template)  # type: ignore[arg-type]
    del compiled
    gc.collect()
    assert template() is None
    before = compile_stats()
    compile_program(checked)
    assert compile_stats().generated - before.generated == 1


def test_binding_an_object_no_switch_can_find_is_an_error() -> None:
    checked = load_program_text(STATEFUL, "stateful.p4")
    clock = VirtualClock()
    compiler = program_compiler(checked)
    with pytest.raises(CompileError, match="none of the switch's run-time objects"):
        compiler.bind([0, 0], "stray")
    table = compiler.runtime.objects.tables["Ing.t"]
    name = compiler.bind(table.apply, "apply")
    origin = compiler.origins[name]
    assert (origin.kind, origin.steps) == ("table", (("attr", "apply"),))
    # resolved against another switch's run-time objects: that switch's table
    other = Switch(checked, clock=VirtualClock())
    runtime = RuntimeBuilder(
        checked, other.program.ids, clock, ReplicationEngine(), DigestQueue(clock)
    ).build()
    found = origin.resolve(runtime, Hooks(), RandomSource(0))
    assert found.__self__ is runtime.objects.tables["Ing.t"] and found.__name__ == "apply"
    assert found.__self__ is not table
