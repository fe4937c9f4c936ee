// error: unsupported construct: extern function my_checksum
// p4c: my_checksum: unknown extern function
// An extern function that neither core.p4 nor v1model.p4 declares (another module's): p4emu
// has no implementation and says so, naming the call (p4c's BMv2 back end refuses it too).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
extern void my_checksum(in bit<8> x, out bit<8> y);
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { my_checksum(hdr.h.a, hdr.h.a); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
