// error as an exact-match table key; BMv2 holds error values in 32 bits (STF gives the
// numeric code: NoMatch = 2 in core.p4's declaration order).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition select(hdr.h.a) { 0: bad; default: accept; } }
    state bad { verify(false, error.NoMatch); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action set_port(bit<9> p) { sm.egress_spec = p; }
    table by_error {
        key = { sm.parser_error: exact; }
        actions = { set_port; NoAction; }
        default_action = set_port(3);
    }
    apply { by_error.apply(); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
