// digest data naming fields of invalid headers, and written after the call. p4c 1.2.4.8
// copies the data into temporaries at the call; BMv2 learns them after ingress. Packets:
// a.y 1: a made invalid before the call (its values kept); 2: made invalid then valid
// (zeroed); n is never valid (0). After the call, m.port and a change: not seen.
// Used by tests/conformance/test_bmv2_digests.py (BMv2) and tests/p4emu/backend/
// test_field_lists.py; no .stf: digests are not in the packet corpus.
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> x; bit<8> y; }
struct H { a_t a; a_t n; }
struct learn_t { bit<8> ax; bit<8> nx; bit<8> port; bit<8> ay; }
struct M { bit<8> port; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.a); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        m.port = 3;
        if (hdr.a.y == 1) { hdr.a.setInvalid(); }
        if (hdr.a.y == 2) { hdr.a.setInvalid(); hdr.a.setValid(); }
        digest<learn_t>(1, {hdr.a.x, hdr.n.x, m.port, hdr.a.y});
        m.port = 4;
        hdr.a.setInvalid();
        hdr.a.setValid();
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.a); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
