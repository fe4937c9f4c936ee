// A header held in a local variable is a copy (P4_16 v1.2.4, assignment copies values):
// writing the local does not change the packet's header until it is assigned back, and
// validity travels with the value.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; h_t x; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        h_t copy = hdr.h;
        copy.a = 0xAA;          // hdr.h unchanged
        h_t tmp;
        tmp = hdr.h;
        tmp.b = tmp.b + 1;
        hdr.h = tmp;            // now hdr.h.b is incremented
        hdr.x = copy;           // x becomes valid with a = AA
        hdr.x.b = copy.a;
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.x); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
