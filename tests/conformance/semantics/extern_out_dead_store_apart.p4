// p4c's SimplifyDefUse removes a store no read can see: also when other statements stand
// between it and the extern call whose `out` argument overwrites it, as long as none of
// them reads the location or can leave the block (`exit`). Where BMv2 then leaves the
// argument unwritten (a register read at an index out of range) the location keeps the
// value from before the removed store.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> idx; bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; }
struct H { h_t h; }
struct M { bit<8> x; bit<8> y; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    counter(4, CounterType.packets) hits;
    apply {
        sm.egress_spec = 1;
        r.write(0, 0x42);
        // other statements between: removed
        hdr.h.a = 0x55;
        m.x = 1;
        hits.count(0);
        r.read(hdr.h.a, (bit<32>)hdr.h.idx);
        // an if that does not touch the location: removed
        hdr.h.b = 0x66;
        if (hdr.h.idx == 9) { m.y = 2; } else { m.y = 3; }
        r.read(hdr.h.b, (bit<32>)hdr.h.idx);
        // an exit in between: the store can reach the end of the control, kept
        hdr.h.c = 0x77;
        if (hdr.h.idx == 0x20) { exit; }
        r.read(hdr.h.c, (bit<32>)hdr.h.idx);
        // a read in between: kept
        hdr.h.d = 0x88;
        m.x = hdr.h.d;
        r.read(hdr.h.d, (bit<32>)hdr.h.idx);
        // a local's initializer: removed (the local starts at 0)
        bit<8> loc = 0x99;
        m.y = m.x + 1;
        r.read(loc, (bit<32>)hdr.h.idx);
        hdr.h.e = loc;
        hdr.h.f = m.y;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
