// A struct-typed field inside a header (P4_16 v1.2.4: a header field may be a
// struct of bit-strings). p4emu: unsupported.
#include <core.p4>
#include <v1model.p4>
struct pair_t { bit<8> a; bit<8> b; }
header h_t { pair_t p; bit<16> c; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        hdr.h.p.a = hdr.h.p.a + hdr.h.p.b;
        sm.egress_spec = (bit<9>)hdr.h.p.b;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
