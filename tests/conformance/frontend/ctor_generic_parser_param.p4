// A generic parser type as a constructor parameter of the top-level parser (P4_16 v1.2.4):
// `Sub<H> s` binds T = H; the sub-parser passed in (TakeX) is applied from a state.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
header x_t { bit<8> b; }
struct H { h_t h; x_t x; }
struct M { }
parser Sub<T>(packet_in pk, inout T hdr);
parser TakeX(packet_in pk, inout H hdr) {
    state start { pk.extract(hdr.x); transition accept; }
}
parser Outer(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm)(Sub<H> s) {
    state start {
        pk.extract(hdr.h);
        transition select(hdr.h.a) { 1: more; default: accept; }
    }
    state more { s.apply(pk, hdr); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = hdr.x.isValid() ? 9w2 : 9w1; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.x); } }
V1Switch(Outer(TakeX()), V(), I(), E(), C(), D()) main;
