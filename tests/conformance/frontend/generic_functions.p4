// Generic functions (P4_16 v1.2.4 §10.3, §16: type arguments explicit or inferred from the
// arguments) of bit<W>, int<W>, bool, header and struct values, with in / out / inout
// parameters of the type variables, tuples; a generic control instantiated with type
// arguments.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header o_t { bit<8> v; bit<8> w; bit<8> x; bit<8> y; bit<8> z; bit<8> q; }
struct pair_t { bit<8> x; bit<8> y; }
struct H { h_t h; h_t g; o_t o; }
struct M { pair_t s; pair_t t; }

T id<T>(in T x) { return x; }
T pick<T>(in bool first, in T a, in T b) { return first ? a : b; }
void swap<T>(inout T a, inout T b) { T tmp = a; a = b; b = tmp; }
void put<T>(out T o, in T v) { o = v; }
bool both<A, B>(in A a, in A b, in B c, in B d) { return a == b && c == d; }
void twice<T>(inout T x, out T copy) { copy = id(x); swap(x, copy); x = copy; }

control Keep<T>(inout T x, in T y) {
    apply { T old = x; x = y; x = old; }
}

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        transition select(hdr.h.a) { 0: accept; default: second; }
    }
    state second { pk.extract(hdr.g); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Keep<bit<8>>() keep8;
    Keep<pair_t>() keep_pair;
    apply {
        hdr.o.setValid();
        m.s = {hdr.h.a, hdr.h.b};
        m.t = id<pair_t>(m.s);
        swap(m.s.x, m.s.y);
        swap<pair_t>(m.s, m.t);
        hdr.o.v = m.s.x;
        hdr.o.w = m.t.x;
        int<8> neg = id(-(int<8>)hdr.h.b);
        hdr.o.x = (bit<8>)neg;
        bool three = id<bool>(hdr.h.a == 3);
        bool eq = both(hdr.h.a, hdr.h.b, true, three);
        bit<8> chosen = pick(eq, 8w1, 8w2);
        put(hdr.o.y, chosen);
        h_t h = id(hdr.h);
        h.a = h.a + 1;
        swap(hdr.h, hdr.g);
        h_t kept = pick(hdr.h.isValid(), hdr.g, h);
        put<h_t>(hdr.g, kept);
        pair_t p;
        twice(m.t, p);
        keep8.apply(hdr.o.y, 8w9);
        keep_pair.apply(m.t, p);
        hdr.o.z = p.x + m.t.y;
        tuple<pair_t, bit<8>> tp = {m.t, hdr.o.z};
        tuple<pair_t, bit<8>> same = id(tp);
        same[0].x = 1;
        hdr.o.q = id(tp)[1] + same[0].x + tp[0].x;
        if (id(m.t) == {hdr.h.b, hdr.h.a}) { hdr.o.q = hdr.o.q + 128; }
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.g); pk.emit(hdr.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
