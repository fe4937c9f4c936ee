// One control instance passed to two controls' constructors (`Inc() shared; Twice(shared)
// t; Once(shared) o;`): both apply the same instance, whose register exists once (p4c names
// it I.shared.r): three applies per packet count 1, 2, 3.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control Step(inout bit<8> v);
control Inc(inout bit<8> v) {
    register<bit<8>>(1) r;
    apply { bit<8> n; r.read(n, 0); n = n + 1; r.write(0, n); v = v + n; }
}
control Twice(inout bit<8> v, inout bit<8> w)(Step c) { apply { c.apply(v); c.apply(w); } }
control Once(inout bit<8> v)(Step c) { apply { c.apply(v); } }
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Inc() shared;
    Twice(shared) t;
    Once(shared) o;
    apply { sm.egress_spec = 1; t.apply(hdr.h.a, hdr.h.b); o.apply(hdr.h.c); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
