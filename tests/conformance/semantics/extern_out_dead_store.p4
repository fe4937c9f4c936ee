// p4c removes a store made just before an extern call's `out` argument (its def-use
// analysis counts the argument as written). Where BMv2 then does not write it (a register
// read or execute_meter at an index out of range, a direct meter's read in the action a
// table runs on a miss), the location keeps the value from before the removed store: the
// packet's for a header field, 0 for a local declared with that initializer.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> idx; bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct H { h_t h; }
struct M { bit<8> x; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    meter(4, MeterType.packets) mt;
    direct_meter<bit<8>>(MeterType.packets) dm;
    action hitme() { dm.read(hdr.h.c); }
    table t { key = { hdr.h.idx: exact; } actions = { hitme; } default_action = hitme(); meters = dm; }
    apply {
        sm.egress_spec = 1;
        r.write(0, 0x42);
        hdr.h.a = 0x55;
        r.read(hdr.h.a, (bit<32>)hdr.h.idx);
        hdr.h.b = 0x66;
        mt.execute_meter((bit<32>)hdr.h.idx, hdr.h.b);
        hdr.h.c = 0x77;
        t.apply();
        bit<8> loc = 0x99;
        r.read(loc, (bit<32>)hdr.h.idx);
        hdr.h.d = loc;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
