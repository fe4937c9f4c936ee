// error: cannot emit the struct-typed header field 'hdr.h.p'
// p4c: argument must be a header, stack or union, or a struct or tuple of such types
// A struct-typed header field emitted as a whole: a struct of bit strings is no header.
#include <core.p4>
#include <v1model.p4>
struct pair_t { bit<8> a; bit<8> b; }
header h_t { pair_t p; bit<16> e; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h.p); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
