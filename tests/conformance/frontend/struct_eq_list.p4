// A struct compared with a list or structure expression (P4_16 v1.2.4 §8.12, §8.13): the
// expression takes the struct's type, nested structs too; '==' and '!=' field by field. A
// header compared with one: the expression is a valid header.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> r; bit<8> r2; }
header g_t { bit<8> a; bit<8> b; }
struct pair_t { bit<8> x; bit<8> y; }
struct nest_t { pair_t p; bool f; }
struct H { h_t h; g_t g; }
struct M { pair_t s; nest_t n; tuple<bit<8>, bool> t; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        transition select(hdr.h.a) { 0: accept; default: second; }
    }
    state second { pk.extract(hdr.g); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        m.s = {hdr.h.a, hdr.h.b};
        m.n = {m.s, hdr.h.a == 5};
        m.t = {hdr.h.b, hdr.h.a != 0};
        bit<8> r = 0;
        if (m.s == {1, 2}) { r = r | 1; }
        if (m.s != {x = 3, y = 4}) { r = r | 2; }
        if ({y = 9, x = 9} == m.s) { r = r | 4; }
        if (m.n == {{5, 6}, true}) { r = r | 8; }
        if (m.n != {p = m.s, f = false}) { r = r | 16; }
        if (m.n == {(pair_t){y = 7, x = 5}, true}) { r = r | 32; }
        if ({hdr.h.b, true} == m.t) { r = r | 64; }
        pair_t q = {hdr.h.b, hdr.h.a};
        if (q == {m.s.y, m.s.x}) { r = r | 128; }
        hdr.h.r = r;
        bit<8> r2 = 0;
        if (hdr.g == {1, 2}) { r2 = r2 | 1; }
        if (hdr.g != {a = 1, b = 2}) { r2 = r2 | 2; }
        hdr.h.r2 = r2;
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.g); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
