// A struct-typed header field as an out argument the callee writes only in part (the
// other fields come back as a new struct's: 0, as BMv2), inside a header stack element
// (constant and run-time index; p4c 1.2.4.8 stops with a compiler bug when one at a
// run-time index is written), and a function's in argument and result.
#include <core.p4>
#include <v1model.p4>
struct inner_t { bit<4> c; bit<4> d; }
struct pair_t { bit<8> a; bit<8> b; inner_t q; }
header h_t { pair_t p; bit<8> i; }
struct H { h_t h; h_t[2] hs; }
struct M { pair_t s; }
pair_t same(in pair_t x) { return x; }
void half(out pair_t v) { v.a = 7; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); pk.extract(hdr.hs[0]); pk.extract(hdr.hs[1]); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action part(out pair_t v) { v.b = 9; }
    apply {
        half(hdr.h.p);
        part(hdr.hs[0].p);
        hdr.hs[1].p = same(hdr.hs[hdr.h.i].p);
        m.s = same(hdr.hs[0].p);
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.hs); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
