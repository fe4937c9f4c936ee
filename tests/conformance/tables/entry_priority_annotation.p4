// `@priority(N)` written after an entry's action in `const entries`: p4c 1.2.4.8 writes N as
// the entry's BMv2 priority (an entry without it gets its position plus one) and BMv2 matches
// the smallest first: 0x13 takes the @priority(1) entry although 0x10 &&& 0xF0 comes first.
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
    table t {
        key = { hdr.h.a: ternary; }
        actions = { port; }
        const entries = {
            0x10 &&& 0xF0 : port(1) @priority(3);
            0x12 &&& 0xFF : port(2) @priority(5);
            0x13 &&& 0xFF : port(3) @priority(1);
            0x14 &&& 0xFF : port(4);
        }
        default_action = port(9);
    }
    apply { t.apply(); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
