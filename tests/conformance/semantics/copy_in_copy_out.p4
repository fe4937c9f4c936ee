// Copy-in/copy-out when arguments alias (P4_16 v1.2.4, parameter passing): every inout
// argument is copied in before the body and copied out after it, left to right, so
// the last copy-out wins and direct writes to the argument are overwritten.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct H { h_t h; h_t g; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); pk.extract(hdr.g); transition accept; }
}
control Both(inout h_t p, inout h_t q) {
    apply { p.a = p.a + 1; q.a = q.a + 2; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Both() both;
    // the same field passed twice: x then y are copied out, y wins
    action twice(inout bit<8> x, inout bit<8> y) { x = x + 1; y = y + 2; }
    // written directly and through the parameter: the copy-out wins
    action direct(inout bit<8> x) { hdr.h.c = 0x77; x = x + 1; }
    // the same for a whole header: the parameter is a copy, copied back at the end
    action whole(inout h_t p) { hdr.h.d = 0x55; p.d = p.d + 1; }
    apply {
        twice(hdr.h.b, hdr.h.b);
        direct(hdr.h.c);
        whole(hdr.h);
        both.apply(hdr.g, hdr.g);
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.g); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
