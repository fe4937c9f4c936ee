// packet_in.lookahead<H>() where H is a header type: the result is a valid header, the
// packet is not consumed (P4_16 v1.2.4).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> kind; bit<8> v; }
header x_t { bit<16> w; }
struct H { h_t h; x_t x; }
struct M { bit<8> peek; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        h_t la = pk.lookahead<h_t>();
        m.peek = la.v;
        transition select(la.kind) { 1: one; default: two; }
    }
    state one { pk.extract(hdr.h); transition accept; }
    state two { pk.extract(hdr.x); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = (bit<9>)m.peek; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.x); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
