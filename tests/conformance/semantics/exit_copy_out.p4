// exit inside a directly called action and inside a sub-control with a scalar inout
// parameter: the unit's out/inout arguments are still copied out (p4c inlines the unit
// with its copy-out before the exit; BMv2 keeps the write), then the rest is skipped.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<8> a; bit<8> b; bit<8> c; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control Sub(inout bit<8> x, in bit<8> k) { apply { x = 0x5A; if (k == 2) { exit; } x = 0x5B; } }
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Sub() sub;
    action setx(inout bit<8> v, out bit<8> w) { v = 0xAA; w = 0xBB; exit; }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.k == 1) { setx(hdr.h.a, hdr.h.b); }
        if (hdr.h.k >= 2) { sub.apply(hdr.h.b, hdr.h.k); }
        hdr.h.c = 0xCC;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
