// verify_checksum / update_checksum (and their _with_payload forms) over fields of invalid
// headers. p4c 1.2.4.8 passes the listed header fields to BMv2 as they are (no
// temporaries) and BMv2 leaves out every field of a header invalid at that point: never
// valid, or made invalid after parsing (the kept values do not count); a header made
// valid by setValid() and not written counts with its zeros. The condition is evaluated
// first: false leaves the checksum field alone and reports no error. The identity
// algorithm shows the data itself.
#include <core.p4>
#include <v1model.p4>
header c_t { bit<8> mode; }
header a_t { bit<8> x; bit<8> y; }
header_union u_t { a_t p; a_t q; }
header o_t {
    bit<16> v_b; bit<16> v_a; bit<16> v_p;
    bit<16> u_a; bit<16> u_b; bit<16> u_n; bit<16> u_s; bit<16> u_w; bit<32> u_x;
    bit<8> err;
}
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
control V(inout H hdr, inout M m) {
    apply {
        verify_checksum(true, {8w0xED, hdr.b.x}, hdr.o.v_b, HashAlgorithm.identity);
        verify_checksum(hdr.c.mode[6:6] == 0, {8w0xEE, hdr.a.x}, hdr.o.v_a,
                        HashAlgorithm.identity);
        verify_checksum_with_payload(true, {16w0x1000, hdr.b.x, hdr.b.y}, hdr.o.v_p,
                                     HashAlgorithm.csum16);
    }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        hdr.o.err = (bit<8>)sm.checksum_error;
        if (hdr.c.mode[1:1] == 1) { hdr.a.setInvalid(); }
        if (hdr.c.mode[2:2] == 1) { hdr.s.setInvalid(); }
        if (hdr.c.mode[3:3] == 1) { hdr.n.setValid(); }
        if (hdr.c.mode[5:5] == 1) { hdr.st[0].setInvalid(); hdr.u.q.setValid(); }
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) {
    apply {
        update_checksum(true, {8w0xEA, hdr.a.x}, hdr.o.u_a, HashAlgorithm.identity);
        update_checksum(true, {8w0xEB, hdr.b.x}, hdr.o.u_b, HashAlgorithm.identity);
        update_checksum(hdr.c.mode[4:4] == 0, {8w0xEC, hdr.n.x}, hdr.o.u_n,
                        HashAlgorithm.identity);
        update_checksum_with_payload(true, {16w0x1000, hdr.s.x, hdr.s.y}, hdr.o.u_s,
                                     HashAlgorithm.csum16);
        update_checksum(true, hdr.a, hdr.o.u_w, HashAlgorithm.identity);
        update_checksum(true, {8w0xEF, hdr.st[0], hdr.u.p.x}, hdr.o.u_x,
                        HashAlgorithm.identity);
    }
}
control D(packet_out pk, in H hdr) {
    apply {
        pk.emit(hdr.c); pk.emit(hdr.a); pk.emit(hdr.s); pk.emit(hdr.o);
        pk.emit(hdr.st); pk.emit(hdr.u); pk.emit(hdr.b); pk.emit(hdr.n);
    }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
