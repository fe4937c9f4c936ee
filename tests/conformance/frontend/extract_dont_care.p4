// `pk.extract<H>(_)`: a header's bytes are read and dropped; too few bytes: PacketTooShort,
// the parser stops and ingress runs (p4c extracts into a temporary header).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header skip_t { bit<16> x; bit<8> y; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract<skip_t>(_); pk.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.PacketTooShort) { sm.egress_spec = 2; }
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
