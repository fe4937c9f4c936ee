/* verify() with a program-defined error, a packet too short for a header
 * (PacketTooShort) and a select without a matching case: in BMv2 v1model none of them
 * drops the packet; ingress sees standard_metadata.parser_error (NoError for the select,
 * see parser_errors.stf) and the headers extracted so far. */
#include <core.p4>
#include <v1model.p4>

error { BadVersion }

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header proto_t {
    bit<8> version;
    bit<8> flags;
}

struct headers_t {
    ethernet_t ethernet;
    proto_t    proto;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.proto);
        verify(hdr.proto.version != 0, error.BadVersion);
        transition select(hdr.proto.version) {
            4: accept;
            6: accept;
        }
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.parser_error == error.NoError) {
            standard_metadata.egress_spec = 1;
        } else if (standard_metadata.parser_error == error.PacketTooShort) {
            standard_metadata.egress_spec = 2;
        } else if (standard_metadata.parser_error == error.BadVersion) {
            standard_metadata.egress_spec = 3;
        } else if (standard_metadata.parser_error == error.NoMatch) {
            standard_metadata.egress_spec = 4;
        } else {
            standard_metadata.egress_spec = 9;
        }
        if (hdr.proto.isValid()) {
            hdr.proto.flags = 0xAA;   /* shows the header stayed valid */
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
        packet.emit(hdr.proto);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
