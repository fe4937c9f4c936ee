// error: Copy is generic: instantiate it with its type arguments
// p4c: Cannot cast implicitly type 'struct pair_t' to type 'T'
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct pair_t { bit<8> x; bit<8> y; }
struct H { h_t h; h_t g; }
struct M { pair_t s; pair_t t; }
control Copy<T>(inout T x, in T y) {
    apply { T tmp = y; x = tmp; }
}
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Copy() cp;
    Copy<h_t>() ch;
    apply {
        m.s = {hdr.h.a, hdr.h.b};
        cp.apply(m.t, m.s);
        ch.apply(hdr.g, hdr.h);
        hdr.g.a = m.t.y;
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.g); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
