// A serializable enum value with a mask (&&&) in a select keyset: the mask is a value of
// the enum's underlying type (P4_16 v1.2.4).
#include <core.p4>
#include <v1model.p4>
enum bit<16> EthT { IPV4 = 0x0800, ARP = 0x0806, IPV6 = 0x86DD }
header h_t { EthT t; bit<8> o; }
struct H { h_t h; }
struct M { bit<9> port; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        transition select(hdr.h.t) {
            EthT.IPV6: six;
            EthT.IPV4 &&& 0xFF00: eight;
            default: accept;
        }
    }
    state six { m.port = 6; transition accept; }
    state eight { m.port = 8; transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = m.port; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
