// error: recirculate(...) with data: p4c 1.2.4.8 refuses this deprecated form for BMv2
// p4c: recirculate: unknown extern function
// The deprecated recirculate with a data argument: v1model.p4 still declares it, but p4c's BMv2
// back end does not implement it (recirculate_preserving_field_list replaces it).
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> x; }
struct H { a_t a; }
struct M { bit<8> k; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.a); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { m.k = 5; recirculate({m.k}); }
}
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.a); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
