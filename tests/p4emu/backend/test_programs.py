"""Whole example programs through the compiler, the compiled-program API, tracing and
compile-time errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from backend_helpers import PROGRAMS, switch_for
from scapy.all import IP, UDP, Ether, raw

from p4emu.backend import compile_program
from p4emu.backend.exceptions import CompileError
from p4emu.backend.rt import PacketContext
from p4emu.exceptions import P4UnsupportedError
from p4emu.frontend import load_program
from p4emu.runtime.clock import VirtualClock
from p4emu.runtime.tables import Exact, Ternary
from p4emu.switch import Switch

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", sorted(p.name for p in PROGRAMS.glob("*.p4")))
def test_every_example_program_compiles(name: str) -> None:
    compiled = compile_program(load_program(PROGRAMS / name), clock=VirtualClock())
    assert "def ingress_block" in compiled.source
    assert compiled.objects.tables.keys() == {t.name for t in compiled.checked.tables}


def test_mrc_switch_compiles_with_p4info_ids() -> None:
    compiled = compile_program(load_program(ROOT / "p4src" / "mrc_switch.p4"))
    info = compiled.objects.p4info
    assert info is not None
    for table in info.tables:
        assert compiled.objects.table_by_id(table.preamble.id).name == table.preamble.name
    for action in info.actions:
        params = [(p.id, p.name, p.bitwidth) for p in action.params]
        ours = compiled.objects.action_by_id(action.preamble.id)
        assert [(p.id, p.name, p.width) for p in ours.params] == params
    header = compiled.objects.controller_headers["packet_in"]
    assert [f.name for f in header.fields] == ["ingress_port", "_pad0", "reason"]


def test_features_program_language_features_end_to_end() -> None:
    switch = Switch(PROGRAMS / "features.p4")
    objects = switch.objects
    tenants = objects.tables["MyIngress.tenants"]
    tenants.insert(
        [Exact(0x020000000001), Exact(1), Ternary(10, 0xFF)],
        objects.actions["MyIngress.fwd"].id,
        [2],
        priority=1,
    )
    packet = Ether(dst="00:00:00:00:00:01", src="02:00:00:00:00:01") / IP(dst="10.1.2.3", ttl=64)
    packet = packet / UDP() / b"hello"
    switch.inject(1, raw(packet))
    [(port, data)] = switch.collect()
    assert port == 2
    assert data[12:14] == b"\x08\x00"
    assert data[14:18] == b"\x00\x02\x00\x00"  # pushed VLAN tag: vid 2 (tenant != 5)
    out_ip = IP(data[18:])
    assert out_ip.ttl == 63 and out_ip.dst == "10.1.2.3"  # TtlControl(1) decremented
    assert scratch_value(switch) == 1  # scratch.write(3, tmp |+| 1)
    # the default action (global_drop) drops packets that miss the table
    switch.inject(1, raw(Ether(src="02:00:00:00:00:09") / IP(dst="10.1.2.3")))
    assert switch.collect() == []


def scratch_value(switch: Switch) -> int:
    return switch.objects.registers["MyIngress.scratch"].get(3)


def test_compiled_program_blocks_can_be_driven_directly() -> None:
    compiled = compile_program(load_program(PROGRAMS / "basic.p4"), clock=VirtualClock())
    hdr = compiled.new_headers()
    meta = compiled.new_metadata()
    sm = compiled.new_standard_metadata()
    frame = raw(Ether() / IP(dst="1.2.3.4") / b"xyz")
    ctx = PacketContext(len(frame))
    sm.parser_error = -1  # the parser stores its error (0: none) on every path
    offset = compiled.parse(frame, hdr, meta, sm, ctx)
    assert sm.parser_error == 0 and offset == 34
    assert hdr.ipv4.valid_ and hdr.ipv4.dstAddr == 0x01020304
    copy = compiled.copy_headers(hdr)
    copy.ipv4.ttl = 1
    assert hdr.ipv4.ttl == 64
    ctx.payload = frame[offset:]  # the deparser gives the whole packet
    assert compiled.deparse(hdr, ctx) == frame
    assert compiled.error_name(1) == "PacketTooShort"


def test_parse_stores_its_error_in_the_standard_metadata() -> None:
    # parse returns the payload offset only; the error code goes to sm.parser_error on
    # every path: PacketTooShort for a cut IPv4 header (the Ethernet header kept), then
    # back to 0 (NoError) for a whole frame parsed with the same standard metadata
    compiled = compile_program(load_program(PROGRAMS / "basic.p4"), clock=VirtualClock())
    hdr = compiled.new_headers()
    meta = compiled.new_metadata()
    sm = compiled.new_standard_metadata()
    frame = raw(Ether() / IP(dst="1.2.3.4") / b"xyz")
    short = frame[:20]
    offset = compiled.parse(short, hdr, meta, sm, PacketContext(len(short)))
    assert offset == 14 and hdr.ethernet.valid_ and not hdr.ipv4.valid_
    assert compiled.error_name(sm.parser_error) == "PacketTooShort"
    compiled.init_headers(hdr)
    assert compiled.parse(frame, hdr, meta, sm, PacketContext(len(frame))) == 34
    assert sm.parser_error == 0


def test_init_functions_restore_the_state_of_new_objects() -> None:
    # features.p4's headers hold a stack, a union and plain headers; metadata a struct
    compiled = compile_program(load_program(PROGRAMS / "features.p4"), clock=VirtualClock())
    hdr = compiled.new_headers()
    meta = compiled.new_metadata()
    sm = compiled.new_standard_metadata()
    fresh = (repr(hdr), repr(meta), repr(sm))
    frame = raw(Ether(src="02:00:00:00:00:01") / IP(dst="10.1.2.3", ttl=9) / UDP() / b"x")
    sm.ingress_port = 3
    ctx = PacketContext(len(frame))
    compiled.parse(frame, hdr, meta, sm, ctx)
    compiled.ingress(hdr, meta, sm, ctx)
    hdr.vlans.items[1].valid_ = True
    hdr.vlans.items[1].vid = 7
    hdr.vlans.nxt = 2
    assert (repr(hdr), repr(meta), repr(sm)) != fresh
    compiled.init_headers(hdr)
    compiled.init_metadata(meta)
    compiled.init_standard_metadata(sm)
    assert (repr(hdr), repr(meta), repr(sm)) == fresh


def test_a_reused_packet_state_does_not_leak_into_the_next_packet() -> None:
    # the switch resets and reuses the header and metadata objects of sent packets
    def configured() -> Switch:
        switch = Switch(PROGRAMS / "features.p4")
        objects = switch.objects
        objects.tables["MyIngress.tenants"].insert(
            [Exact(0x020000000001), Exact(1), Ternary(10, 0xFF)],
            objects.actions["MyIngress.fwd"].id,
            [2],
            priority=1,
        )
        return switch

    first = Ether(dst="00:00:00:00:00:01", src="02:00:00:00:00:01") / IP(dst="10.1.2.3")
    second = Ether(dst="00:00:00:00:00:01", src="02:00:00:00:00:01") / b"not ip"
    reused = configured()
    reused.inject(1, raw(first / UDP() / b"hello"))
    assert len(reused.collect()) == 1 and reused._spare
    reused.inject(1, raw(second))
    alone = configured()
    alone.inject(1, raw(second))
    assert reused.collect() == alone.collect()
    assert reused.drops == alone.drops


SET_FIRST = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { bit<8> first; bit<8> parsed; bit<8> second; bit<8> kept; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); hdr.h.b = meta.parsed; transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        meta.first = 1;
        meta.parsed = 2;
        bool unused = true;
        meta.second = 3;
        hdr.h.a = meta.kept;
        meta.kept = 9;
        sm.egress_spec = 1;
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def test_a_reused_packet_keeps_only_the_metadata_ingress_sets_before_reading() -> None:
    # the constant assignments opening ingress need no reset for a reused packet, unless
    # the parser mentions the field (it read meta.parsed: 0, not the last packet's 2)
    switch = switch_for(SET_FIRST)
    assert "# ingress sets these first: first, second\n" in switch.program.source
    for _ in range(3):
        switch.inject(0, bytes([5, 6]))
        assert switch.collect() == [(1, bytes([0, 0]))]


def test_trace_reports_parser_states_tables_and_transmissions() -> None:
    switch = Switch(PROGRAMS / "basic.p4", trace=True)
    events: list[tuple[str, object]] = []
    switch.trace_callback = lambda kind, name, a, b: events.append((kind, name))
    switch.inject(1, raw(Ether() / IP(dst="10.0.0.1")))
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "ingress"
    assert ("state", "MyParser.parse_ipv4") in events
    assert ("table", "MyIngress.ipv4_lpm") in events
    assert "drop" in kinds  # default action drop()


def test_hash_algorithm_random_is_refused_like_bmv2() -> None:
    source = (
        (PROGRAMS / "stateful.p4")
        .read_text()
        .replace("HashAlgorithm.crc32, 16w0", "HashAlgorithm.random, 16w0")
    )
    with pytest.raises(CompileError, match=r"HashAlgorithm\.random is not implemented by BMv2"):
        switch_for(source, "stateful.p4")


def test_unsupported_constructs_raise_located_errors() -> None:
    source = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> v; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { mark_to_drop(); }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""
    with pytest.raises(
        P4UnsupportedError, match=r"bad\.p4:12:\d+: error: unsupported construct: mark_to_drop\(\)"
    ):
        switch_for(source, "bad.p4")
