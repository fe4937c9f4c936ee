// Generic controls and parsers instantiated with type arguments (P4_16 v1.2.4 §16.1):
// struct, header and bit<W> values of a type variable, written through inout / out
// parameters and held in locals, set by a table's action (each instance with its type
// arguments; the objects are named per instance: I.tab_pair.t, I.tab_byte.set...); a
// generic control instantiating another with its own type variable (Copy<T> in Through<T>).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header o_t { bit<8> v; bit<8> w; bit<8> x; }
struct pair_t { bit<8> x; bit<8> y; }
struct H { h_t h; h_t g; o_t o; }
struct M { pair_t s; pair_t t; }

control Copy<T>(inout T x, in T y) {
    T tmp;
    apply { tmp = y; x = tmp; }
}
control Through<T>(inout T x, in T y) {
    Copy<T>() inner;
    apply { inner.apply(x, y); }
}
control Tab<T>(inout T x, in T y) {
    action set() { x = y; }
    table t { key = { } actions = { set; NoAction; } default_action = set(); }
    apply { t.apply(); }
}
control Swap<T>(inout T a, inout T b) {
    apply { T tmp = a; a = b; b = tmp; }
}
parser Put<T>(packet_in pk, out T o, in T v) {
    state start { T tmp = v; o = tmp; transition accept; }
}

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    Put<pair_t>() put_pair;
    state start {
        pk.extract(hdr.h);
        put_pair.apply(pk, m.t, {hdr.h.b, hdr.h.a});
        transition select(hdr.h.a) { 0: accept; default: second; }
    }
    state second { pk.extract(hdr.g); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Copy<pair_t>() copy_pair;
    Through<h_t>() copy_header;
    Swap<pair_t>() swap_pair;
    Swap<bit<8>>() swap_byte;
    Tab<pair_t>() tab_pair;
    Tab<bit<8>>() tab_byte;
    apply {
        hdr.o.setValid();
        hdr.o.x = m.t.x;
        m.s = {hdr.h.a, hdr.h.b};
        copy_pair.apply(m.t, m.s);
        m.s.x = 0;
        swap_pair.apply(m.s, m.t);
        swap_byte.apply(m.s.x, m.s.y);
        hdr.o.v = m.s.x;
        hdr.o.w = m.s.y;
        hdr.o.x = hdr.o.x + m.t.x;
        copy_header.apply(hdr.g, hdr.h);
        tab_pair.apply(m.s, {hdr.h.b, 1});
        tab_byte.apply(hdr.h.b, m.s.y);
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.g); pk.emit(hdr.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
