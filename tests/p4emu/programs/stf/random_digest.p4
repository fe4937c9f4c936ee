/* random() and digest(). random(r, lo, hi) with lo == hi always yields lo; a full range
 * byte is unpredictable (the STF matches it with "**"). digest() sends the source MAC
 * and ingress port to the controller and does not change the packet (the STF test
 * module checks the digest sample). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header h_t {
    bit<8> fixed;
    bit<8> any;
}

struct headers_t {
    ethernet_t ethernet;
    h_t        h;
}

struct learn_t {
    bit<48> src;
    bit<9>  port;
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
        random(hdr.h.fixed, (bit<8>) 5, (bit<8>) 5);
        random(hdr.h.any, (bit<8>) 0, (bit<8>) 255);
        digest<learn_t>(1, { hdr.ethernet.src, standard_metadata.ingress_port });
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
