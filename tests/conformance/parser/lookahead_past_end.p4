// lookahead<T>() of more bits than the packet has left (rounded up to whole bytes) stops
// the parser with error.PacketTooShort: assigned (bit<W>, a header, a struct) or as a select
// key; what it would have assigned is not written (BMv2 parser, lookahead operands).
#include <core.p4>
#include <v1model.p4>
header sel_t { bit<8> id; }
header o_t { bit<16> x; bit<8> err; bit<8> after; }
header two_t { bit<16> v; }
struct pair_t { bit<4> a; bit<12> b; }
struct H { sel_t sel; o_t o; }
struct M { bit<16> x; bit<8> after; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.sel);
        transition select(hdr.sel.id) { 1: l8; 2: l16; 3: l12; 4: lh; 5: ls; 6: lsel; default: accept; }
    }
    state l8 { m.x = (bit<16>)pk.lookahead<bit<8>>(); m.after = 1; transition accept; }
    state l16 { m.x = pk.lookahead<bit<16>>(); m.after = 1; transition accept; }
    state l12 { m.x = (bit<16>)pk.lookahead<bit<12>>(); m.after = 1; transition accept; }
    state lh { two_t t = pk.lookahead<two_t>(); m.x = t.v; m.after = 1; transition accept; }
    state ls { pair_t p = pk.lookahead<pair_t>(); m.x = (bit<16>)p.b; m.after = 1; transition accept; }
    state lsel { transition select(pk.lookahead<bit<16>>()) { 0x1234: y; default: n; } }
    state y { m.after = 2; transition accept; }
    state n { m.after = 3; transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; hdr.o.setValid(); hdr.o.x = m.x; hdr.o.after = m.after;
            hdr.o.err = (sm.parser_error == error.PacketTooShort) ? 8w1 : 8w0; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.sel); pk.emit(hdr.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
