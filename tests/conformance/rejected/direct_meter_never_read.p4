// error: so one of its actions must read it
// p4c: must have at least one action with a read method call
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
    direct_meter<bit<2>>(MeterType.packets) rate;
    table t { key = { hdr.h.a: exact; } actions = { port; } meters = rate; }
    apply { t.apply(); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
