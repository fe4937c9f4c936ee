// Directionless parameters outside actions: a function's directionless parameter (an
// in-value) and a control's constructor parameter (P4_16 v1.2.4).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
bit<8> add(in bit<8> x, bit<8> y) { return x + y; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control Add(inout bit<8> v)(bit<8> k) {
    apply { v = add(v, k); }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Add(8w3) add3;
    Add(8w10) add10;
    apply {
        add3.apply(hdr.h.a);
        add10.apply(hdr.h.b);
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
