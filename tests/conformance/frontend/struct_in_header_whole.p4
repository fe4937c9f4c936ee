// A struct-typed header field used as a whole (P4_16 v1.2.4): assigned from and to a struct
// variable, another header's struct field and a structure expression (nested too), and
// variable, another header's struct field and structure / list expressions (nested too), and
#include <core.p4>
#include <v1model.p4>
struct inner_t { bit<4> c; bit<4> d; }
struct pair_t { bit<8> a; bit<8> b; inner_t q; }
header h_t { pair_t p; bit<16> e; }
header g_t { pair_t r; }
struct H { h_t h; g_t g; }
struct M { pair_t s; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); pk.extract(hdr.g); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        m.s = hdr.h.p;
        hdr.h.p = hdr.g.r;
        hdr.g.r = {a = 0xAA, b = m.s.a, q = {c = 1, d = m.s.q.d}};
        hdr.g.r = {hdr.g.r.a, hdr.g.r.b, {1, hdr.g.r.q.d}};
        if (hdr.h.p.a == 0) { hdr.h.p = m.s; }
        sm.egress_spec = 1;
        if (hdr.h.p == m.s) { sm.egress_spec = 2; }
        if (m.s != hdr.g.r) { hdr.h.e = 0xFFFF; }
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.g); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
