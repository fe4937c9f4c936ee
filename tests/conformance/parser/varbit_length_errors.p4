// Variable-length extract with a length that is too large (HeaderTooShort), not a whole
// number of bytes or negative as int<32> (ParserInvalidArgument, checked first): the parser
// stops with that error and ingress runs, as BMv2 does (P4_16 v1.2.4, packet_in.extract).
#include <core.p4>
#include <v1model.p4>
header len_t { bit<32> bits; }
header opt_t { varbit<32> data; }
header tail_t { bit<8> v; }
struct H { len_t len; opt_t opt; tail_t tail; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.len);
        pk.extract(hdr.opt, hdr.len.bits);
        pk.extract(hdr.tail);
        transition accept;
    }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.HeaderTooShort) { sm.egress_spec = 2; }
        if (sm.parser_error == error.ParserInvalidArgument) { sm.egress_spec = 3; }
        if (sm.parser_error == error.PacketTooShort) { sm.egress_spec = 4; }
        if (hdr.tail.isValid()) { hdr.tail.v = hdr.tail.v + 1; }
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.len); pk.emit(hdr.opt); pk.emit(hdr.tail); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
