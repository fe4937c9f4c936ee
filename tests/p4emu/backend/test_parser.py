"""Parser semantics: select forms, value sets, header stacks, varbit, lookahead, advance,
verify, and BMv2's parser-error behaviour (the packet reaches ingress)."""

from __future__ import annotations

import pytest
from backend_helpers import switch_for

from p4emu.backend.exceptions import CompileError
from p4emu.runtime.tables import Exact

PARSER_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
error { BadLen }
header a_t { bit<8> kind; bit<8> len; }
header b_t { bit<16> v; }
header s_t { bit<8> v; }
header var_t { varbit<64> data; }
header res_t { bit<8> err; bit<8> valid_bits; bit<8> path; bit<8> la; }
struct headers_t { res_t res; a_t a; b_t b; s_t[3] s; var_t var; }
struct meta_t { bit<8> path; bit<8> la; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<8>>(4) vs;
    state start {
        pkt.extract(hdr.a);
        meta.la = pkt.lookahead<bit<8>>();
        transition select(hdr.a.kind, hdr.a.len) {
            (0x10 &&& 0xF0, _): p_mask;
            (0x20 .. 0x2F, _): p_range;
            (0x30, 0 .. 3): p_stack;
            (0x40, _): p_var;
            (0x50, _): p_verify;
            (0x60, _): p_reject;
            (0x70, _): p_advance;
            (0x80, _): p_vs;
            (0x90, _): p_nomatch;
            default: accept;
        }
    }
    state p_mask { meta.path = 1; transition accept; }
    state p_range { meta.path = 2; transition accept; }
    state p_stack { meta.path = 3; transition stack_loop; }
    state stack_loop {
        pkt.extract(hdr.s.next);
        transition select(hdr.s.last.v) { 0: accept; default: stack_loop; }
    }
    state p_var { meta.path = 4; pkt.extract(hdr.var, (bit<32>)hdr.a.len * 8); transition accept; }
    state p_verify { meta.path = 5; verify(hdr.a.len == 1, error.BadLen); transition p_b; }
    state p_b { pkt.extract(hdr.b); transition accept; }
    state p_reject { meta.path = 6; transition reject; }
    state p_advance { meta.path = 7; pkt.advance(16); pkt.extract(hdr.b); transition accept; }
    state p_vs { transition select(hdr.a.len) { vs: vs_hit; default: vs_miss; } }
    state vs_hit { meta.path = 8; transition accept; }
    state vs_miss { meta.path = 9; transition accept; }
    state p_nomatch { meta.path = 10; transition select(hdr.a.len) { 1: accept; } }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        hdr.res.path = meta.path;
        hdr.res.la = meta.la;
        if (sm.parser_error == error.NoError) { hdr.res.err = 0; }
        else if (sm.parser_error == error.PacketTooShort) { hdr.res.err = 1; }
        else if (sm.parser_error == error.NoMatch) { hdr.res.err = 2; }
        else if (sm.parser_error == error.StackOutOfBounds) { hdr.res.err = 3; }
        else if (sm.parser_error == error.HeaderTooShort) { hdr.res.err = 4; }
        else if (sm.parser_error == error.BadLen) { hdr.res.err = 7; }
        else { hdr.res.err = 99; }
        hdr.res.valid_bits = (hdr.a.isValid() ? 8w1 : 0) | (hdr.b.isValid() ? 8w2 : 0)
            | (hdr.s[0].isValid() ? 8w4 : 0) | (hdr.s[1].isValid() ? 8w8 : 0)
            | (hdr.s[2].isValid() ? 8w16 : 0) | (hdr.var.isValid() ? 8w32 : 0);
        sm.egress_spec = 2;
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.res); pkt.emit(hdr.a); pkt.emit(hdr.b); pkt.emit(hdr.s); pkt.emit(hdr.var); }
}
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def run(switch, frame: bytes) -> tuple[dict[str, int], bytes]:
    switch.inject(1, frame)
    frames = switch.collect()
    assert len(frames) == 1
    port, data = frames[0]
    assert port == 2
    res = {"err": data[0], "valid": data[1], "path": data[2], "la": data[3]}
    return res, data[4:]


@pytest.fixture(scope="module")
def parser_switch():
    return switch_for(PARSER_PROGRAM, "parser.p4")


def test_select_with_mask_range_and_default(parser_switch) -> None:
    res, rest = run(parser_switch, bytes([0x1A, 0x00, 0xEE]))
    assert res["path"] == 1 and res["err"] == 0 and res["la"] == 0xEE
    assert rest == bytes([0x1A, 0x00, 0xEE])  # header re-emitted, then the payload
    assert run(parser_switch, bytes([0x2F, 0x00, 0xEE]))[0]["path"] == 2
    assert run(parser_switch, bytes([0x30, 0x09, 0xEE]))[0]["path"] == 0  # tuple case misses
    assert run(parser_switch, bytes([0x05, 0x00, 0xEE]))[0]["path"] == 0
    # nothing after hdr.a: the lookahead stops the parser (BMv2: PacketTooShort)
    res, _ = run(parser_switch, bytes([0x2F, 0x00]))
    assert res == {"err": 1, "valid": 1, "path": 0, "la": 0}


def test_header_stack_loop_and_stack_out_of_bounds(parser_switch) -> None:
    res, rest = run(parser_switch, bytes([0x30, 0x02, 7, 8, 0, 0xAA]))
    assert res["path"] == 3 and res["err"] == 0
    assert res["valid"] == 1 | 4 | 8 | 16
    assert rest == bytes([0x30, 0x02, 7, 8, 0, 0xAA])
    res, rest = run(parser_switch, bytes([0x30, 0x02, 7, 8, 9, 10, 0xAA]))
    assert res["err"] == 3  # StackOutOfBounds: the three elements stay valid
    assert res["valid"] == 1 | 4 | 8 | 16
    assert rest == bytes([0x30, 0x02, 7, 8, 9, 10, 0xAA])


def test_varbit_extract_emit_and_header_too_short(parser_switch) -> None:
    res, rest = run(parser_switch, bytes([0x40, 0x03, 1, 2, 3, 4]))
    assert res["path"] == 4 and res["err"] == 0 and res["valid"] == 1 | 32
    assert rest == bytes([0x40, 0x03, 1, 2, 3, 4])
    res, _ = run(parser_switch, bytes([0x40, 0x09]) + bytes(9))
    assert res["err"] == 4 and res["valid"] == 1


def test_verify_and_packet_too_short_reach_ingress(parser_switch) -> None:
    res, rest = run(parser_switch, bytes([0x50, 0x02, 0xAB, 0xCD]))
    assert res["err"] == 7 and res["valid"] == 1  # BadLen, b not extracted
    assert rest == bytes([0x50, 0x02, 0xAB, 0xCD])
    res, rest = run(parser_switch, bytes([0x50, 0x01, 0xAB, 0xCD, 0xEF]))
    assert res["err"] == 0 and res["valid"] == 3
    res, rest = run(parser_switch, bytes([0x50, 0x01, 0xAB]))
    assert res["err"] == 1 and res["valid"] == 1  # PacketTooShort keeps hdr.a
    assert rest == bytes([0x50, 0x01, 0xAB])


def test_explicit_reject_ends_parsing_without_error_as_bmv2(parser_switch) -> None:
    res, _ = run(parser_switch, bytes([0x60, 0x00, 0x00]))
    assert res == {"err": 0, "valid": 1, "path": 6, "la": 0}


def test_advance_skips_bytes(parser_switch) -> None:
    res, rest = run(parser_switch, bytes([0x70, 0x00, 0xFF, 0xFF, 0x12, 0x34]))
    assert res["path"] == 7 and res["valid"] == 3
    assert rest == bytes([0x70, 0x00, 0x12, 0x34])  # skipped bytes are gone
    res, _ = run(parser_switch, bytes([0x70, 0x00, 0xFF]))
    assert res["err"] == 1


def test_value_set_membership_follows_the_control_plane(parser_switch) -> None:
    value_set = parser_switch.objects.value_sets["P.vs"]
    assert run(parser_switch, bytes([0x80, 0x07, 0xEE]))[0]["path"] == 9
    value_set.add([Exact(7)])
    assert run(parser_switch, bytes([0x80, 0x07, 0xEE]))[0]["path"] == 8
    value_set.replace([])
    assert run(parser_switch, bytes([0x80, 0x07, 0xEE]))[0]["path"] == 9


def test_select_without_match_accepts_like_bmv2_or_reports_nomatch(parser_switch) -> None:
    res, _ = run(parser_switch, bytes([0x90, 0x02, 0xEE]))
    assert res["path"] == 10 and res["err"] == 0
    strict = switch_for(PARSER_PROGRAM, "parser.p4", no_match_error=True)
    res, _ = run(strict, bytes([0x90, 0x02, 0xEE]))
    assert res["err"] == 2


SUBPARSER_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header t_t { bit<8> v; }
header b16_t { bit<16> v; }
header_union u_t { t_t x; b16_t y; }
struct headers_t { t_t first; u_t u; t_t[4] tags; }
struct meta_t { bit<8> count; }
parser Tags(packet_in pkt, inout headers_t hdr, inout bit<8> count) {
    state start {
        pkt.extract(hdr.tags.next);
        count = count + 1;
        transition select(hdr.tags.last.v) { 0xFF: accept; default: start; }
    }
}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Tags() tags;
    state start {
        pkt.extract(hdr.first);
        transition select(hdr.first.v) { 1: one; 2: two; default: more; }
    }
    state one { pkt.extract(hdr.u.x); transition more; }
    state two { pkt.extract(hdr.u.y); transition more; }
    state more {
        tags.apply(pkt, hdr, meta.count);
        meta.count = meta.count + 100;
        transition accept;
    }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.first.v = meta.count;
        if (hdr.u.isValid()) { hdr.first.v = hdr.first.v + 50; }
        sm.egress_spec = 1;
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def test_sub_parser_inlining_and_header_unions() -> None:
    switch = switch_for(SUBPARSER_PROGRAM, "sub.p4")
    switch.inject(0, bytes([1, 0xAA, 5, 0xFF, 0x99]))
    [(port, data)] = switch.collect()
    # count = 2 tags + 100, +50 for the valid union
    assert port == 1
    assert data == bytes([152, 0xAA, 5, 0xFF, 0x99])
    switch.inject(0, bytes([2, 0xBB, 0xCC, 0xFF]))
    [(_, data)] = switch.collect()
    assert data == bytes([151, 0xBB, 0xCC, 0xFF])


JOIN_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> kind; bit<8> seen; }
header b_t { bit<8> v; }
struct headers_t { a_t a; b_t b; }
struct meta_t { bit<8> seen; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        transition select(hdr.a.kind) { 1: one; 2: two; 9: reject; default: join; }
    }
    state one { meta.seen = 10; transition join; }
    state two { meta.seen = 20; transition select(hdr.a.seen) { 0: join; default: accept; } }
    state join { meta.seen = meta.seen + 1; pkt.extract(hdr.b); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { hdr.a.seen = meta.seen; sm.egress_spec = 1; }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.a); pkt.emit(hdr.b); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def test_a_join_state_follows_the_state_all_its_entries_come_from() -> None:
    # join is entered from start, one and two (both inlined into start): it is emitted
    # after start's code, without a dispatch loop; each way in reaches it exactly once
    switch = switch_for(JOIN_PROGRAM, "join.p4")
    parse = switch.program.source.split("def parse_block")[1].split("def verify_block")[0]
    assert "while True" in parse and "st = " not in parse
    cases = {
        (1, 0): [1, 11, 7],  # one -> join
        (2, 0): [2, 21, 7],  # two -> join
        (2, 5): [2, 20],  # two -> accept: join skipped, b left in the payload
        (3, 0): [3, 1, 7],  # default -> join
        (9, 0): [9, 0],  # reject: nothing more
    }
    for (kind, seen), expected in cases.items():
        switch.inject(0, bytes([kind, seen, 7]))
        [(_, data)] = switch.collect()
        assert list(data[: len(expected)]) == expected, (kind, seen, list(data))


def test_header_not_a_whole_number_of_bytes_is_rejected_with_its_location() -> None:
    source = SUBPARSER_PROGRAM.replace("header b16_t { bit<16> v; }", "header b16_t { bit<15> v; }")
    with pytest.raises(CompileError, match=r"sub\.p4:\d+:\d+: error: header b16_t is not a whole"):
        switch_for(source, "sub.p4")


LOOKAHEAD_PAST_END = """
#include <core.p4>
#include <v1model.p4>
header sel_t { bit<8> id; }
header o_t { bit<16> x; bit<8> err; bit<8> after; }
header two_t { bit<16> v; }
struct pair_t { bit<4> a; bit<12> b; }
struct H { sel_t sel; o_t o; }
struct M { bit<16> x; bit<8> after; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.sel);
        transition select(hdr.sel.id) { 1: l12; 2: lh; 3: ls; 4: lsel; default: accept; }
    }
    state l12 { m.x = (bit<16>)pk.lookahead<bit<12>>(); m.after = 1; transition accept; }
    state lh { two_t t = pk.lookahead<two_t>(); m.x = t.v; m.after = 1; transition accept; }
    state ls { pair_t p = pk.lookahead<pair_t>(); m.x = (bit<16>)p.b; m.after = 1; transition accept; }
    state lsel { transition select(pk.lookahead<bit<16>>()) { 0x1234: y; default: accept; } }
    state y { m.after = 2; transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1; hdr.o.setValid(); hdr.o.x = m.x; hdr.o.after = m.after;
        hdr.o.err = (sm.parser_error == error.PacketTooShort) ? 8w1 : 8w0;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.sel); pk.emit(hdr.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("selector", [1, 2, 3, 4])
def test_lookahead_past_the_end_is_packet_too_short(selector: int) -> None:
    switch = switch_for(LOOKAHEAD_PAST_END)
    switch.inject(0, bytes([selector, 0x12]))  # one byte left, two looked at
    [(_, frame)] = switch.collect()
    assert frame[1:5] == bytes([0, 0, 1, 0])  # nothing assigned, PacketTooShort
    switch.inject(0, bytes([selector, 0x12, 0x34]))
    [(_, frame)] = switch.collect()
    assert frame[3] == 0 and frame[4] in (1, 2)  # no error, the state after ran


UNION_STACK = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> t; bit<8> v; }
header b_t { bit<8> t; bit<16> w; }
header_union u_t { a_t a; b_t b; }
header e_t { bit<8> err; bit<8> valid; }
struct H { e_t e; u_t[2] us; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.e); transition next; }
    state next { transition select(pk.lookahead<bit<8>>()) { 1: pa; 2: pb; default: accept; } }
    state pa { pk.extract(hdr.us.next.a); transition next; }
    state pb { pk.extract(hdr.us.next.b); transition next; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.e.err = sm.parser_error == error.StackOutOfBounds ? 8w1 : 8w0;
        hdr.e.valid = (hdr.us[0].a.isValid() ? 8w1 : 0) | (hdr.us[0].b.isValid() ? 8w2 : 0)
            | (hdr.us[1].a.isValid() ? 8w4 : 0) | (hdr.us[1].b.isValid() ? 8w8 : 0);
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.e); pk.emit(hdr.us); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_extract_into_next_member_of_a_union_stack_advances_the_stack() -> None:
    switch = switch_for(UNION_STACK)
    switch.inject(0, bytes.fromhex("0000 0211 22 0133 00"))  # b into us[0], a into us[1]
    assert switch.collect() == [(1, bytes.fromhex("0006 0211 22 0133 00"))]
    switch.inject(0, bytes.fromhex("0000 0101 0102 0103 00"))  # a third element
    assert switch.collect() == [(1, bytes.fromhex("0105 0101 0102 0103 00"))]


def test_extract_into_dont_care_skips_the_header_bytes() -> None:
    switch = switch_for(
        """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
header skip_t { bit<4> x; bit<12> y; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract<skip_t>(_); pk.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = sm.parser_error == error.PacketTooShort ? 9w2 : 9w1; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
    )
    switch.inject(0, bytes([0xAA, 0xBB, 0x01, 0x02]))
    assert switch.collect() == [(1, bytes([0x01, 0x02]))]
    switch.inject(0, bytes([0xAA]))
    assert switch.collect() == [(2, bytes([0xAA]))]
