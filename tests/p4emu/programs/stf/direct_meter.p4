/* A direct packets meter (trTCM) on the entries of table t. The colour (0 GREEN,
 * 1 YELLOW, 2 RED) goes out in the packet. The STF configures entry 0 (by its handle
 * name) with a committed burst of 1 packet and a peak burst of 3 packets, and entry 1 (by
 * BMv2's entry handle, 1) with 2 and 2, both at 1 packet/s: back-to-back packets are
 * GREEN, YELLOW, YELLOW, RED on entry 0 and GREEN, GREEN, RED on entry 1. An entry whose
 * meter is never configured (2) is always GREEN. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header h_t {
    bit<8> idx;
    bit<8> color;
}

struct headers_t {
    ethernet_t ethernet;
    h_t        h;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.h);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    direct_meter<bit<2>>(MeterType.packets) dm;

    action colour() {
        bit<2> color;
        dm.read(color);
        hdr.h.color = (bit<8>) color;
    }

    table t {
        key = { hdr.h.idx : exact; }
        actions = { colour; NoAction; }
        meters = dm;
        default_action = NoAction();
    }

    apply {
        t.apply();
        standard_metadata.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
