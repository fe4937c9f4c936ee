// Byte-aligned runs of fields whose length needs three or more big-endian machine words
// (7, 11, 13, 14, 15, 17 and more bytes): extracted and emitted unchanged, and a field
// changed in ingress goes out changed (P4_16 v1.2.4, packet_in.extract / packet_out.emit).
#include <core.p4>
#include <v1model.p4>
header sel_t { bit<8> id; }
header w56_t { bit<56> a; }
header w88_t { bit<88> a; }
header w104_t { bit<104> a; }
header w112_t { bit<112> a; }
header w120_t { bit<120> a; }
header w136_t { bit<136> a; }
header w1024_t { bit<1024> a; }
header split_t { bit<4> a; bit<52> b; }
header mix_t { bit<3> a; int<61> b; bool c; bit<7> d; bit<48> e; }
struct H {
    sel_t sel; w56_t w56; w88_t w88; w104_t w104; w112_t w112; w120_t w120; w136_t w136;
    w1024_t w1024; split_t split; mix_t mix;
}
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.sel);
        transition select(hdr.sel.id & 0x7F) {
            1: w56; 2: w88; 3: w104; 4: w112; 5: w120; 6: w136; 7: w1024; 8: split; 9: mix;
            default: accept;
        }
    }
    state w56 { pk.extract(hdr.w56); transition accept; }
    state w88 { pk.extract(hdr.w88); transition accept; }
    state w104 { pk.extract(hdr.w104); transition accept; }
    state w112 { pk.extract(hdr.w112); transition accept; }
    state w120 { pk.extract(hdr.w120); transition accept; }
    state w136 { pk.extract(hdr.w136); transition accept; }
    state w1024 { pk.extract(hdr.w1024); transition accept; }
    state split { pk.extract(hdr.split); transition accept; }
    state mix { pk.extract(hdr.mix); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.sel.id >= 0x80) {
            // the second packet of each kind: add 1 to the value read
            hdr.w56.a = hdr.w56.a + 1;
            hdr.w136.a = hdr.w136.a + 1;
            hdr.split.b = hdr.split.b + 1;
            hdr.mix.b = hdr.mix.b + 1;
        }
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) {
    apply {
        pk.emit(hdr.sel); pk.emit(hdr.w56); pk.emit(hdr.w88); pk.emit(hdr.w104);
        pk.emit(hdr.w112); pk.emit(hdr.w120); pk.emit(hdr.w136); pk.emit(hdr.w1024);
        pk.emit(hdr.split); pk.emit(hdr.mix);
    }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
