// A keyset of one mask, range, default or don't-care in parentheses: p4c's grammar reads
// "(" reducedSimpleKeysetExpression ")" as that keyset (found by the random-program
// differential: a table's entries "(0x0 &&& 0x1) : a();").
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        transition select(hdr.h.a) {
            (0xF0 &&& 0xF0): high;
            (0x00 .. 0x0F): accept;
            (default): accept;
        }
    }
    state high { hdr.h.b = 0xEE; transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action port(bit<9> p) { sm.egress_spec = p; }
    table masked {
        key = { hdr.h.a: ternary; }
        actions = { port; }
        const entries = {
            (0x10 &&& 0xF0) : port(1);
            (_) : port(2);
        }
        default_action = port(9);
    }
    table ranged {
        key = { hdr.h.b: range; }
        actions = { port; }
        const entries = {
            (0x01 .. 0x05) : port(3);
        }
        default_action = port(8);
    }
    apply { masked.apply(); if (hdr.h.a == 0x20) { ranged.apply(); } }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
