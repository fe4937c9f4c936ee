/* Cloning. Ingress-to-egress (I2E): the clone is the packet as received, parsed again
 * with fresh metadata (instance_type 1); the ingress change to h.mark is not in it.
 * Egress-to-egress (E2E): the clone carries the headers as egress left them and runs
 * egress again (instance_type 2). Egress counts its passes in h.count. */
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
    bit<8> instance_type;
    bit<8> count;
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
        hdr.h.mark = 0xAA;
        standard_metadata.egress_spec = 1;
        if (hdr.h.op == 1) {
            clone(CloneType.I2E, 5);
        }
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        hdr.h.instance_type = (bit<8>) standard_metadata.instance_type;
        hdr.h.count = hdr.h.count + 1;
        if (hdr.h.op == 2 && standard_metadata.instance_type == 0) {
            clone(CloneType.E2E, 6);
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
