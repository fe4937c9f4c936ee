// Expressions are evaluated left to right, also when an operand calls a function with an
// inout argument: an operand read before the call keeps its value (binary operators,
// comparisons, structure initializers, function arguments); an out/inout argument whose
// stack index calls such a function is evaluated once, at the call, and a copy-out goes
// to the element named then (P4_16 v1.2.4, order of evaluation).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<8> e; bit<8> f; bit<8> g; }
header s_t { bit<8> v; }
struct H { h_t h; s_t[4] s; }
struct pair_t { bit<8> x; bit<8> y; }
struct M { bit<8> i; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); pk.extract(hdr.s[0]); pk.extract(hdr.s[1]); pk.extract(hdr.s[2]); pk.extract(hdr.s[3]); transition accept; }
}
bit<8> inc(inout bit<8> v) { v = v + 1; return v; }
bit<8> add(in bit<8> x, in bit<8> y) { return x + y; }
void bump(inout bit<8> i, inout bit<8> v) { i = i + 1; v = v + 0x10; }
void plus16(inout bit<8> v) { v = v + 0x10; }
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.h.k == 1) { hdr.h.e = hdr.h.f + inc(hdr.h.f); }
        if (hdr.h.k == 2) { pair_t p = {hdr.h.f, inc(hdr.h.f)}; hdr.h.e = p.x; hdr.h.g = p.y; }
        if (hdr.h.k == 3) { hdr.h.e = (hdr.h.f == inc(hdr.h.f)) ? 8w1 : 8w2; }
        if (hdr.h.k == 4) { hdr.h.e = add(hdr.h.f, inc(hdr.h.f)); }
        if (hdr.h.k == 5) { m.i = 0; bump(m.i, hdr.s[m.i].v); }
        if (hdr.h.k == 6) { m.i = 0; plus16(hdr.s[inc(m.i)].v); hdr.h.e = m.i; }
        if (hdr.h.k == 7) { m.i = 0; hdr.s[inc(m.i)].v = m.i; }
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.s); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
