/* Header stacks (extract .next, .last, pop_front, StackOutOfBounds) and lookahead.
 * A label is 7 bits of value and a bottom-of-stack bit. Ingress pops the first label
 * and sends the packet to the port named by the new first label. A packet whose byte
 * after ethernet is 0xFF (seen with lookahead, not extracted) goes to port 5. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header label_t {
    bit<7> value;
    bit<1> bos;
}

struct headers_t {
    ethernet_t ethernet;
    label_t[4] labels;
}

struct metadata_t {
    bit<1> skipped;
}

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(packet.lookahead<bit<8>>()) {
            0xFF: skip;
            default: parse_label;
        }
    }
    state skip {
        meta.skipped = 1;
        transition accept;
    }
    state parse_label {
        packet.extract(hdr.labels.next);
        transition select(hdr.labels.last.bos) {
            1: accept;
            default: parse_label;
        }
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.parser_error == error.StackOutOfBounds) {
            standard_metadata.egress_spec = 9;
        } else if (meta.skipped == 1) {
            standard_metadata.egress_spec = 5;
        } else {
            hdr.labels.pop_front(1);
            if (hdr.labels[0].isValid()) {
                standard_metadata.egress_spec = (bit<9>) hdr.labels[0].value;
            } else {
                standard_metadata.egress_spec = 6;
            }
        }
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
        packet.emit(hdr.labels);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
