// packet_in.advance by a run-time number of bits: not a whole number of bytes is
// ParserInvalidArgument, past the end of the packet PacketTooShort (also for a value that
// is negative as int<32>, unlike extract); the parser stops and ingress runs, as BMv2 does.
#include <core.p4>
#include <v1model.p4>
header len_t { bit<32> bits; }
header tail_t { bit<8> v; }
struct H { len_t len; tail_t tail; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.len);
        pk.advance(hdr.len.bits);
        pk.extract(hdr.tail);
        transition accept;
    }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.PacketTooShort) { sm.egress_spec = 4; }
        if (sm.parser_error == error.ParserInvalidArgument) { sm.egress_spec = 3; }
        if (hdr.tail.isValid()) { hdr.tail.v = hdr.tail.v + 1; }
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.len); pk.emit(hdr.tail); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
