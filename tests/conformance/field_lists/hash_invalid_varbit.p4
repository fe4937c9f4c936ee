// A varbit field of an invalid header in hash data: p4c 1.2.4.8 copies it into a temporary
// header first, so BMv2 hashes the bits it holds (after setInvalid(), the parsed ones; none
// in a header never valid). In checksum data it is left out with its header.
#include <core.p4>
#include <v1model.p4>
header c_t { bit<8> mode; }
header l_t { bit<8> len; }
header v_t { varbit<32> data; }
header o_t { bit<32> h; bit<16> u; }
struct H { c_t c; o_t o; l_t l; v_t v; }
struct M { bit<8> m; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.c);
        pk.extract(hdr.o);
        transition select(hdr.c.mode[0:0]) { 1: parse_v; default: accept; }
    }
    state parse_v {
        pk.extract(hdr.l);
        pk.extract(hdr.v, (bit<32>)hdr.l.len * 8);
        transition accept;
    }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        if (hdr.c.mode[1:1] == 1) { hdr.v.setInvalid(); }
        hash(hdr.o.h, HashAlgorithm.identity, 32w0, {8w0xAA, hdr.v.data, 8w0xBB},
             64w4294967296);
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) {
    apply {
        update_checksum(true, {8w0xCC, hdr.v.data, 8w0xDD}, hdr.o.u, HashAlgorithm.identity);
    }
}
control D(packet_out pk, in H hdr) {
    apply { pk.emit(hdr.c); pk.emit(hdr.o); pk.emit(hdr.l); pk.emit(hdr.v); }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
