// _ (don't care) as an out argument of a function: the value is discarded (P4_16 v1.2.4).
// (p4c 1.2.4.8 stops with a compiler bug when the callee is an action.)
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
void split(in bit<8> x, out bit<8> hi, out bit<8> lo) { hi = x >> 4; lo = x & 0xF; }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        split(hdr.h.a, _, hdr.h.b);
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
