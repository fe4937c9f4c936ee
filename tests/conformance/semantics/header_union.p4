// Header unions: setting one member valid invalidates the others; isValid() of the union;
// assigning a whole union (P4_16 v1.2.4, header unions).
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> v; }
header b_t { bit<16> w; }
header_union u_t { a_t a; b_t b; }
header tag_t { bit<8> kind; }
struct H { tag_t tag; u_t u; u_t copy; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.tag);
        transition select(hdr.tag.kind) { 1: pa; 2: pb; default: accept; }
    }
    state pa { pk.extract(hdr.u.a); transition accept; }
    state pb { pk.extract(hdr.u.b); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = hdr.u.isValid() ? 9w1 : 9w2;
        if (hdr.u.a.isValid()) {
            hdr.u.b.setValid();          // a becomes invalid
            hdr.u.b.w = 0xBEEF;
        }
        hdr.copy = hdr.u;                 // whole-union assignment
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.tag); pk.emit(hdr.u); pk.emit(hdr.copy); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
