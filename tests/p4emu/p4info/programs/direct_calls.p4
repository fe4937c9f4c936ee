// Actions called directly, from an action, and both directly and from a table: p4c lists
// the directly called ones with no parameters and inlines the one only called by an action.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { bit<8> m; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action direct_only(bit<8> x) { hdr.h.a = x; }
    action both(bit<8> x) { hdr.h.b = x; }
    action from_action(bit<8> x) { hdr.h.b = hdr.h.b + x; }
    action caller(bit<8> y) { from_action(y); }
    action dirinout(inout bit<8> z, bit<8> x) { z = x; }
    table t { key = { hdr.h.a: exact; } actions = { both; caller; } }
    apply {
        direct_only(1);
        t.apply();
        both(2);
        dirinout(hdr.h.a, 3);
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
