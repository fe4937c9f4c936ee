// lookahead<S>() of a struct of bit strings (P4_16 v1.2.4), assigned to a struct-typed
// header field as a whole (nested struct too) and to a struct variable (bool and int<W>
// fields): the next bits, field by field in order.
#include <core.p4>
#include <v1model.p4>
struct inner_t { bit<4> c; bit<4> d; }
struct pair_t { bit<8> a; bit<8> b; inner_t q; }
struct odd_t { bit<3> a; bool b; int<4> c; }
header h_t { pair_t p; bit<8> e; }
header raw_t { bit<24> r; }
header o_t { bit<8> v; }
struct H { h_t h; raw_t raw; o_t o; }
struct M { odd_t o; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        hdr.h.p = pk.lookahead<pair_t>();
        pk.extract(hdr.raw);
        m.o = pk.lookahead<odd_t>();
        pk.extract(hdr.o);
        transition accept;
    }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        hdr.h.e = (bit<8>)(int<8>)m.o.c;
        hdr.o.v = (bit<8>)m.o.a;
        sm.egress_spec = m.o.b ? 9w2 : 9w1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.raw); pk.emit(hdr.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
