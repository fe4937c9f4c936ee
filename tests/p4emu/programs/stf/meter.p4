/* An indexed packets meter (trTCM). The colour (0 GREEN, 1 YELLOW, 2 RED) goes out in
 * the packet. The STF configures index 0 with a committed burst of 1 packet and a peak
 * burst of 3 packets at 1 packet/s: back-to-back packets are GREEN, YELLOW, YELLOW, RED.
 * Index 1 is never configured and always GREEN. */
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
    meter(4, MeterType.packets) policer;

    apply {
        bit<2> color;
        policer.execute_meter((bit<32>) hdr.h.idx, color);
        hdr.h.color = (bit<8>) color;
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
