// Enum-typed values: a plain enum held in metadata and compared, a serializable enum
// assigned from a header field by a cast and written back (P4_16 v1.2.4, enumerations).
#include <core.p4>
#include <v1model.p4>
enum Color { RED, GREEN, BLUE }
enum bit<8> Op { NOP = 0, INC = 1, DBL = 2 }
header h_t { bit<8> op; bit<8> v; bit<8> out_op; }
struct H { h_t h; }
struct M { Color color; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        Op op = (Op)hdr.h.op;
        m.color = Color.RED;
        if (op == Op.INC) { hdr.h.v = hdr.h.v + 1; m.color = Color.GREEN; }
        else if (op == Op.DBL) { hdr.h.v = hdr.h.v << 1; m.color = Color.BLUE; }
        Op next = op == Op.DBL ? Op.NOP : Op.DBL;
        hdr.h.out_op = (bit<8>)next;
        sm.egress_spec = m.color == Color.RED ? 9w1 : (m.color == Color.GREEN ? 9w2 : 9w3);
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
