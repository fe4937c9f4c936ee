/* Parser select: exact values, masks (&&&), ranges (..), tuples with don't-care (_)
 * and default. The ingress sends each packet to the port naming the path it took;
 * headers are re-emitted unchanged, so the output bytes equal the input bytes. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header pair_t {
    bit<8> a;
    bit<8> b;
}

struct headers_t {
    ethernet_t ethernet;
    pair_t     pair;
}

struct metadata_t {
    bit<9> path;
}

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_pair;
            0x8100 &&& 0xEFFF: vlan_like;       /* 0x8100 and 0x9100 */
            0x9000 .. 0x90FF: ranged;
            default: other;
        }
    }
    state parse_pair {
        packet.extract(hdr.pair);
        transition select(hdr.pair.a, hdr.pair.b) {
            (1, 2): both;
            (1, _): first_only;
            (_, 3): second_only;
            default: neither;
        }
    }
    state both        { meta.path = 1; transition accept; }
    state first_only  { meta.path = 2; transition accept; }
    state second_only { meta.path = 3; transition accept; }
    state neither     { meta.path = 4; transition accept; }
    state vlan_like   { meta.path = 5; transition accept; }
    state ranged      { meta.path = 6; transition accept; }
    state other       { meta.path = 7; transition accept; }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = meta.path;
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
        packet.emit(hdr.pair);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
