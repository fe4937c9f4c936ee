// error: the struct-typed header field 'hdr.h.p' cannot be the out argument 'result' of 'random'
// p4c: writing to a structure nested in a header is not supported
// A struct-typed header field as an extern's out argument (of a generic type T).
#include <core.p4>
#include <v1model.p4>
struct pair_t { bit<8> a; bit<8> b; }
header h_t { pair_t p; bit<16> e; }
struct H { h_t h; }
struct M { pair_t s; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { random(hdr.h.p, m.s, m.s); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply {  } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
