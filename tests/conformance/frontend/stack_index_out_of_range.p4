// Header-stack indices computed at run time, out of range (unsigned 7, signed -1). p4emu
// reads nothing (a scratch invalid header) and writes nothing; BMv2 stops the whole
// switch process (std::out_of_range). Listed as a difference in docs/conformance.md.
#include <core.p4>
#include <v1model.p4>
header idx_t { bit<8> i; int<8> s; }
header e_t { bit<8> v; }
struct H { idx_t idx; e_t[4] e; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.idx); pk.extract(hdr.e.next); pk.extract(hdr.e.next);
                  pk.extract(hdr.e.next); pk.extract(hdr.e.next); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        hdr.e[hdr.idx.i].v = hdr.e[hdr.idx.i].v + 1;
        hdr.e[hdr.idx.s].v = 0xEE;
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.idx); pk.emit(hdr.e); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
