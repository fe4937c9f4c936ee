/* Resubmit (at the end of ingress the original packet goes through ingress again,
 * instance_type 6, ingress changes discarded) and recirculate (at the end of egress the
 * deparsed packet goes back to ingress, instance_type 4, and the original is not sent).
 * Ingress records the instance_type it saw in h.seen. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header h_t {
    bit<8> op;
    bit<8> mark;
    bit<8> seen;
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
    apply {
        if (standard_metadata.instance_type == 0 && hdr.h.op == 1) {
            hdr.h.mark = 0xAA;     /* lost: resubmit restarts from the received packet */
            resubmit_preserving_field_list(0);
        } else {
            hdr.h.seen = (bit<8>) standard_metadata.instance_type;
        }
        standard_metadata.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        /* BMv2 sets instance_type back to NORMAL (0) when a unicast packet leaves
         * ingress, so egress cannot tell a recirculated packet by its instance_type:
         * the mark written before recirculating stops the loop. */
        if (hdr.h.op == 2 && hdr.h.mark != 0xBB) {
            hdr.h.mark = 0xBB;     /* kept: the deparsed packet is recirculated */
            recirculate_preserving_field_list(0);
        }
    }
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
