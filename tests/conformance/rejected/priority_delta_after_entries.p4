// error: this entry's priority would be -4
// p4c: Overflow in priority computation
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
    table t { key = { hdr.h.a: ternary; } actions = { port; }
  entries = { priority = 6 : 0x10 &&& 0xF0 : port(1); 0x12 &&& 0xFF : port(2); 0x13 &&& 0xFF : port(3); } priority_delta = 5; }

    apply { t.apply(); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;

