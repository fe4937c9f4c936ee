// A struct-typed field inside a header (P4_16 v1.2.4: a header field may be a struct of
// bit-strings, nested too). p4emu flattens it as p4c does: the bits of p.a, p.b, p.q.c
// follow each other; a table key on a member is named hdr.h.p.a.
#include <core.p4>
#include <v1model.p4>
struct inner_t { bit<4> c; bit<4> d; }
struct pair_t { bit<8> a; bit<8> b; inner_t q; }
header h_t { pair_t p; bit<16> e; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action to(bit<9> port) { sm.egress_spec = port; }
    table by_a {
        key = { hdr.h.p.a: exact; }
        actions = { to; NoAction; }
        const entries = { 0x01: to(5); }
        default_action = to(1);
    }
    apply {
        hdr.h.p.b = hdr.h.p.b + (bit<8>)hdr.h.p.q.c;
        hdr.h.p.q.d = 0xF;
        by_a.apply();
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
