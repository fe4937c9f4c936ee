// Table entries in the program with explicit priorities (priority = N:) and the order of
// ternary / range entries. BMv2 as p4c 1.2.4.8 programs it: entries match in the order
// written (first wins); explicit priorities do not reorder them (p4c warns when they are
// out of order). The P4_16 spec would let priority 5 win for 0x12: see docs/conformance.md.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action port(bit<9> p) { sm.egress_spec = p; }
    table explicit_prio {
        key = { hdr.h.a: ternary; }
        actions = { port; }
        entries = {
            priority = 3 : 0x10 &&& 0xF0 : port(1);
            priority = 5 : 0x12 &&& 0xFF : port(2);
            priority = 1 : 0x13 &&& 0xFF : port(3);
        }
        default_action = port(9);
    }
    table implicit_prio {
        key = { hdr.h.b: range; }
        actions = { port; }
        const entries = {
            0x00 .. 0x7F : port(4);
            0x10 .. 0x20 : port(5);
        }
        default_action = port(8);
    }
    apply { explicit_prio.apply(); if (hdr.h.a == 0) { implicit_prio.apply(); } }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
