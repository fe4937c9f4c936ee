// Tuple elements by a constant index (P4_16 v1.2.4 §8.12): read and written, tuples in
// locals and in structs, elements that are structs, headers and tuples.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header o_t { bit<8> v; bit<8> w; bit<8> x; bit<8> y; bit<8> z; bit<8> q; }
struct pair_t { bit<8> x; bit<8> y; }
struct H { h_t h; o_t o; }
struct W { tuple<bit<8>, pair_t> tp; tuple<bool, tuple<bit<8>, bit<8>>> nest; }
struct M { pair_t s; W w; tuple<bit<8>, bool> mt; }
const bit<32> ONE = 1;
void bump(inout bit<8> v) { v = v + 1; }
void fill(out tuple<pair_t, bit<8>> o, in bit<8> v) { o[0].x = v; o[0].y = v; o[1] = v; }
void grow(inout tuple<pair_t, bit<8>> io, in tuple<pair_t, bit<8>> by) {
    io[0].x = io[0].x + by[0].x;
    io[1] = io[1] + by[1];
}
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action twice(inout tuple<pair_t, bit<8>> io) { io[0].y = io[0].y + io[0].y; io[1] = 2; }
    apply {
        hdr.o.setValid();
        tuple<bit<8>, bool> t = {hdr.h.a, hdr.h.b != 0};
        if (t[ONE]) { t[0] = t[0] + 1; }
        bump(t[0]);
        hdr.o.v = t[0];
        m.s = {hdr.h.b, 9};
        m.w.tp = {hdr.h.a, m.s};
        m.w.tp[1].y = hdr.h.a;
        m.s.x = 0;
        hdr.o.w = m.w.tp[1].x + m.w.tp[1].y + m.w.tp[2 - 2];
        m.w.nest = {true, {1, 2}};
        m.w.nest[1][0] = hdr.h.b;
        m.w.nest[0] = m.w.nest[1][0] == 3;
        hdr.o.x = m.w.nest[0] ? m.w.nest[1][1] : m.w.nest[1][0];
        tuple<h_t, pair_t> hp = {hdr.h, m.s};
        hp[0].a = 7;
        hp[1] = {5, 6};
        hdr.o.y = hdr.h.a + hp[0].a + hp[1].y + m.s.y;
        W copy = m.w;
        copy.tp[1].x = 100;
        m.mt = {hdr.h.a, false};
        m.mt[1] = t[1];
        hdr.o.z = m.w.tp[1].x + (m.mt[1] ? 8w16 : 8w32);
        tuple<pair_t, bit<8>> f;
        fill(f, hdr.h.a);
        tuple<pair_t, bit<8>> g = f;
        grow(f, g);
        twice(f);
        hdr.o.q = f[0].x + f[0].y + f[1] + g[0].x;
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
