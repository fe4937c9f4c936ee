// verify_checksum whose checksum field is in an invalid header: BMv2 checks nothing (no
// checksum_error), before it even evaluates the condition; the data's fields of invalid
// headers are left out as usual (field_lists/checksum_invalid_header).
#include <core.p4>
#include <v1model.p4>
header c_t { bit<8> mode; }
header k_t { bit<16> sum; }
struct H { c_t c; k_t k; k_t n; }
struct M { bit<8> m; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.c);
        transition select(hdr.c.mode[0:0]) { 1: parse_k; default: accept; }
    }
    state parse_k { pk.extract(hdr.k); transition accept; }
}
control V(inout H hdr, inout M m) {
    apply {
        verify_checksum(true, {8w0xED, hdr.c.mode}, hdr.k.sum, HashAlgorithm.identity);
        verify_checksum(hdr.c.mode[1:1] == 1, {8w0xEE, hdr.c.mode}, hdr.n.sum,
                        HashAlgorithm.identity);
    }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { hdr.c.mode = (bit<8>)sm.checksum_error; sm.egress_spec = 1; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.c); pk.emit(hdr.k); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
