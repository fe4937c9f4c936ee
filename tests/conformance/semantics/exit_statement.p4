// exit inside an action and inside a nested control: the rest of the ingress apply block
// is skipped; what was written before exit (also through a nested control's inout
// parameter, which is copied out) stays; egress still runs (P4_16 v1.2.4, exit statement).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> kind; bit<8> a; bit<8> b; bit<8> c; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control Sub(inout h_t p) {
    apply { p.a = 0xA1; if (p.kind == 2) { exit; } p.a = 0xA2; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Sub() sub;
    action bye() { hdr.h.b = 0xB1; exit; }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.kind == 1) { bye(); }
        sub.apply(hdr.h);
        hdr.h.c = 0xC1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { hdr.h.kind = hdr.h.kind + 0x10; }
}
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
