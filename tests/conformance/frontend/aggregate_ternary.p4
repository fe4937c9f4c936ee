// '?:' whose branches are headers or structs (P4_16 v1.2.4): the chosen branch is assigned
// (a header from an invalid one becomes invalid, as BMv2's assign_header).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct pair_t { bit<8> x; bit<8> y; }
struct H { h_t h1; h_t h2; }
struct M { pair_t s; pair_t t; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h1);
        transition select(hdr.h1.a) { 0: accept; default: second; }
    }
    state second { pk.extract(hdr.h2); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        m.t = {hdr.h1.b, 7};
        m.s = hdr.h1.b == 1 ? m.t : {8w3, 8w4};
        hdr.h1 = hdr.h1.b < 2 ? hdr.h2 : hdr.h1;
        hdr.h1.setValid();
        hdr.h1.b = hdr.h1.b + m.s.x + m.s.y;
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h1); pk.emit(hdr.h2); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
