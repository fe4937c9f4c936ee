/* Multicast through the packet replication engine. Ingress sets mcast_grp from the
 * packet; egress writes each copy's egress_rid, egress_port and instance_type (5 =
 * REPLICATION in BMv2) into the packet. A group with no configuration sends nothing. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header h_t {
    bit<16> group;
    bit<16> rid;
    bit<16> port;
    bit<8>  instance_type;
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
        if (hdr.h.group == 0) {
            standard_metadata.egress_spec = 1;
        } else {
            standard_metadata.mcast_grp = hdr.h.group;
        }
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        hdr.h.rid = standard_metadata.egress_rid;
        hdr.h.port = (bit<16>) standard_metadata.egress_port;
        hdr.h.instance_type = (bit<8>) standard_metadata.instance_type;
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
