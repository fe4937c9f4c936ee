// Extracting into `stack.next.member` of a stack of header unions: the member of the next
// element becomes valid and the stack's next index advances, so the next extraction goes
// to the following element; past the last one, error.StackOutOfBounds (BMv2).
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> t; bit<8> v; }
header b_t { bit<8> t; bit<16> w; }
header_union u_t { a_t a; b_t b; }
header sel_t { bit<8> err; }
struct H { sel_t sel; u_t[3] us; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.sel); transition next; }
    state next { transition select(pk.lookahead<bit<8>>()) { 1: pa; 2: pb; default: accept; } }
    state pa { pk.extract(hdr.us.next.a); transition next; }
    state pb { pk.extract(hdr.us.next.b); transition next; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.sel.err = sm.parser_error == error.StackOutOfBounds ? 8w1 : 8w0;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.sel); pk.emit(hdr.us); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
