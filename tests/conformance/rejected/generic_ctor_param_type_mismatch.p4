// error: argument 'v' of 's.apply': expected a value of type bit<16>, got bit<8>
// p4c: type-error
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control Step<T>(inout T v);
control Inc(inout bit<8> v) { apply { v = v + 1; } }
control Dbl(inout bit<8> v) { apply { v = v << 1; } }
control Twice(inout bit<8> v)(Step<bit<16>> s) {
    apply { s.apply(v); s.apply(v); }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Twice(Inc()) inc2;
    Twice(Dbl()) dbl2;
    apply { inc2.apply(hdr.h.a); dbl2.apply(hdr.h.a); sm.egress_spec = 1; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
