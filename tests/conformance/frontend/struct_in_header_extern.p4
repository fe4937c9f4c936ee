// A struct-typed header field used as a whole (P4_16 v1.2.4) in a parser (an argument of a
// function and of a sub-parser), as the data of hash and verify_checksum, and in tuples
// compared with '=='. As hash data p4c copies its fields into temporaries first, so they
// count even when the header is invalid; as checksum data they are the header's fields.
#include <core.p4>
#include <v1model.p4>
struct inner_t { bit<4> c; bit<4> d; }
struct pair_t { bit<8> a; bit<8> b; inner_t q; }
struct flat_t { bit<8> x; bit<8> y; }
header h_t { pair_t p; flat_t f; bit<8> mode; }
header k_t { bit<16> csum; bit<16> hash1; bit<16> hash2; bit<8> flags; }
struct H { h_t h; k_t k; }
struct M { pair_t s; }

void bump(inout pair_t v) { v.a = v.a + 1; }
parser Sub(inout pair_t v, in bit<8> x) {
    state start { v.b = v.b + x; transition accept; }
}
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    Sub() sub;
    state start {
        pk.extract(hdr.h);
        pk.extract(hdr.k);
        bump(hdr.h.p);
        sub.apply(hdr.h.p, hdr.h.mode);
        m.s = hdr.h.p;
        transition accept;
    }
}
control V(inout H hdr, inout M m) {
    apply { verify_checksum(true, hdr.h.f, hdr.k.csum, HashAlgorithm.csum16); }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        hdr.k.flags = (bit<8>)sm.checksum_error;
        if (hdr.h.mode == 1) { hdr.h.setInvalid(); }
        hash(hdr.k.hash1, HashAlgorithm.crc16, 16w0, hdr.h.f, 32w65536);
        sm.egress_spec = 1;
        if ({hdr.h.p, hdr.h.mode} == {m.s, 8w0}) { sm.egress_spec = 2; }
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.k); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
