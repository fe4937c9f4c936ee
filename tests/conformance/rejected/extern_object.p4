// error: unsupported construct: value of Thing.get()
// p4c: thing.get: not supported
// An extern object type the program declares itself: p4emu has no implementation and says
// so, naming the method call.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
extern void my_checksum(in bit<8> x, out bit<8> y);
extern Thing { Thing(); bit<8> get(); }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Thing() thing;
    apply { hdr.h.a = thing.get(); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
