// hash data naming an invalid header. p4c 1.2.4.8 copies every listed field into a
// temporary first, so BMv2 hashes the stored value of a field of an invalid header: the
// value kept by setInvalid() after parsing, 0 in a header never valid so far or made valid
// by setValid() and not written (a header valid in an earlier packet but not in this one
// holds what BMv2's recycled header vector holds: the STF avoids it). A whole
// header (in the list, in a struct, or as the data) is copied with its validity and
// skipped when invalid. The identity algorithm shows the data itself.
#include <core.p4>
#include <v1model.p4>
header c_t { bit<8> mode; }
header a_t { bit<8> x; bit<8> y; }
header_union u_t { a_t p; a_t q; }
header o_t {
    bit<16> h_a; bit<16> h_b; bit<16> h_n; bit<16> h_s; bit<32> h_st; bit<32> h_u;
    bit<32> h_whole; bit<16> h_list; bit<32> h_struct; bit<16> h_crc;
}
struct S { bit<8> k; a_t a; }
struct H { c_t c; a_t a; a_t s; o_t o; a_t[2] st; u_t u; a_t b; a_t n; }
struct M { bit<8> m; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.c);
        pk.extract(hdr.a);
        pk.extract(hdr.s);
        pk.extract(hdr.o);
        pk.extract(hdr.st.next);
        pk.extract(hdr.u.p);
        transition select(hdr.c.mode[0:0]) { 1: parse_b; default: accept; }
    }
    state parse_b { pk.extract(hdr.b); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        if (hdr.c.mode[1:1] == 1) {
            hdr.a.setInvalid();
            hdr.st[0].setInvalid();
            hdr.u.p.setInvalid();
        }
        if (hdr.c.mode[2:2] == 1) { hdr.s.setInvalid(); hdr.s.setValid(); }
        if (hdr.c.mode[3:3] == 1) { hdr.n.setValid(); }
        if (hdr.c.mode[4:4] == 1) { hdr.u.q.setValid(); }
        S s = { 8w0x5A, hdr.a };
        hash(hdr.o.h_a, HashAlgorithm.identity, 16w0, {8w0xAA, hdr.a.x}, 32w65536);
        hash(hdr.o.h_b, HashAlgorithm.identity, 16w0, {8w0xBB, hdr.b.x}, 32w65536);
        hash(hdr.o.h_n, HashAlgorithm.identity, 16w0, {8w0xCC, hdr.n.x}, 32w65536);
        hash(hdr.o.h_s, HashAlgorithm.identity, 16w0, {8w0xDD, hdr.s.x}, 32w65536);
        hash(hdr.o.h_st, HashAlgorithm.identity, 32w0,
             {8w0xE0, hdr.st[0].x, hdr.st[1].x, hdr.st[1]}, 64w4294967296);
        hash(hdr.o.h_u, HashAlgorithm.identity, 32w0,
             {8w0xE1, hdr.u.p.x, hdr.u.q.x, hdr.u.p}, 64w4294967296);
        hash(hdr.o.h_whole, HashAlgorithm.identity, 32w0, hdr.a, 64w4294967296);
        hash(hdr.o.h_list, HashAlgorithm.identity, 16w0, {8w0xE2, hdr.a}, 32w65536);
        hash(hdr.o.h_struct, HashAlgorithm.identity, 32w0, s, 64w4294967296);
        hash(hdr.o.h_crc, HashAlgorithm.crc16, 16w0, {hdr.a.x, hdr.a.y}, 32w65536);
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) {
    apply {
        pk.emit(hdr.c); pk.emit(hdr.a); pk.emit(hdr.s); pk.emit(hdr.o);
        pk.emit(hdr.st); pk.emit(hdr.u); pk.emit(hdr.b); pk.emit(hdr.n);
    }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
