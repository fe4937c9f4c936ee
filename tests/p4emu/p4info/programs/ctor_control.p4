// A control instance passed as a constructor argument, with a table and an action inside:
// p4c names them after the receiving instance and the parameter (I.wrapped.s.t).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control Step(inout bit<8> v);
control Lookup(inout bit<8> v) {
    action add(bit<8> d) { v = v + d; }
    table t { key = { v: exact; } actions = { add; NoAction; } default_action = add(1); }
    apply { t.apply(); }
}
control Wrap(inout bit<8> v)(Step s) {
    apply { s.apply(v); }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Wrap(Lookup()) wrapped;
    apply { wrapped.apply(hdr.h.a); sm.egress_spec = 1; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
