// An action's (and a function's) `in` header or struct parameter is a copy taken at the
// call: writes the body makes to the argument directly, or through an inout parameter
// bound to the same header, do not show in it (P4_16 v1.2.4, copy-in/copy-out).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<8> a; bit<8> b; bit<8> c; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action direct(in h_t x) { hdr.h.a = 0x33; hdr.h.b = x.a; }
    action through(inout h_t y, in h_t x) { y.a = 0x44; y.c = x.a; }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.k == 1) { direct(hdr.h); }
        if (hdr.h.k == 2) { through(hdr.h, hdr.h); }
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
