// A struct-typed header field used as a whole (P4_16 v1.2.4) as an argument: in, out and
// inout, of a function, an action (called directly and by a table) and a control; as the
// value of a call and a function's result; in '?:', list and structure expressions and as
// an initializer; nested structs too. Copy-in and copy-out also when the header is invalid:
// its fields are read and written as stored (BMv2).
#include <core.p4>
#include <v1model.p4>
struct inner_t { bit<4> c; bit<4> d; }
struct pair_t { bit<8> a; bit<8> b; inner_t q; }
header h_t { pair_t p; bit<8> mode; bit<8> e; }
header g_t { pair_t r; }
struct H { h_t h; g_t g; }
struct two_t { pair_t x; bit<8> y; }
struct M { pair_t s; two_t w; }

bit<8> total(in pair_t v) { return v.a + v.b + (bit<8>)v.q.c; }
void bump(inout pair_t v) { v.a = v.a + 1; v.q.d = v.q.d + 1; }
void fill(out pair_t v) { v = {a = 0x51, b = 0x52, q = {c = 3, d = 4}}; }
void swap_q(inout inner_t q) { bit<4> c = q.c; q.c = q.d; q.d = c; }
pair_t make(in bit<8> x) { return {x, x + 1, {1, 2}}; }
pair_t p_of(in h_t h) { return h.p; }
pair_t mirror(in pair_t v) { return {v.b, v.a, {v.q.d, v.q.c}}; }

control Sub(inout pair_t v, in pair_t w, out inner_t o) {
    apply { v.b = w.a; o = {w.q.d, w.q.c}; }
}

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); pk.extract(hdr.g); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Sub() sub;
    action add_e(inout pair_t v) { v.b = v.b + hdr.h.e; }
    action note(in pair_t v) { hdr.h.e = v.a ^ v.b; }
    action nines(out pair_t v) { v = {9, 9, {9, 9}}; }
    action by_table(inout inner_t q, bit<4> x) { q.c = q.c + x; }
    table t {
        key = { hdr.h.mode : exact; }
        actions = { by_table(hdr.g.r.q); NoAction; }
        default_action = by_table(hdr.g.r.q, 1);
    }
    apply {
        if (hdr.h.mode == 0) {
            hdr.h.e = total(hdr.h.p);
            bump(hdr.h.p);
            swap_q(hdr.h.p.q);
            fill(hdr.g.r);
            add_e(hdr.g.r);
        } else if (hdr.h.mode == 1) {
            hdr.h.p = make(hdr.h.p.a);
            m.s = p_of(hdr.h);
            sub.apply(hdr.g.r, hdr.h.p, hdr.h.p.q);
            note(m.s);
        } else if (hdr.h.mode == 2) {
            hdr.g.setInvalid();
            bump(hdr.g.r);
            note(hdr.g.r);
            hdr.h.p = hdr.g.r;
        } else if (hdr.h.mode == 3) {
            hdr.g.setInvalid();
            fill(hdr.g.r);
            m.s = hdr.h.e == 0 ? hdr.g.r : hdr.h.p;
            hdr.h.p = m.s;
        } else {
            nines(hdr.h.p);
            t.apply();
        }
        m.w = {hdr.h.p, hdr.h.e};
        two_t both = {x = mirror(hdr.h.p), y = 1};
        pair_t v = hdr.h.p;
        sm.egress_spec = 1;
        if (hdr.h.p == mirror(v)) { sm.egress_spec = 2; }
        hdr.g.r = m.w.y > 0x80 ? both.x : hdr.g.r;
        hdr.h.p.q = v.a == 9 ? hdr.g.r.q : v.q;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.g); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
