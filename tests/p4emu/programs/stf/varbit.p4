/* varbit extraction with a run-time length, and the two parser errors it can raise:
 * HeaderTooShort (length above the varbit maximum) and PacketTooShort (not enough
 * bytes). On an error BMv2 keeps the headers extracted so far and runs ingress with
 * standard_metadata.parser_error set; the unparsed bytes follow the emitted headers. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header opt_len_t {
    bit<8> len;        /* option data length in bytes */
}

header opt_data_t {
    varbit<64> data;   /* at most 8 bytes */
}

header after_t {
    bit<8> port;
}

struct headers_t {
    ethernet_t ethernet;
    opt_len_t  opt_len;
    opt_data_t opt_data;
    after_t    after;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.opt_len);
        packet.extract(hdr.opt_data, (bit<32>) hdr.opt_len.len * 8);
        packet.extract(hdr.after);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.parser_error == error.HeaderTooShort) {
            standard_metadata.egress_spec = 8;
        } else if (standard_metadata.parser_error == error.PacketTooShort) {
            standard_metadata.egress_spec = 7;
        } else if (standard_metadata.parser_error == error.NoError) {
            standard_metadata.egress_spec = (bit<9>) hdr.after.port;
        } else {
            standard_metadata.egress_spec = 9;
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
        packet.emit(hdr.opt_len);
        packet.emit(hdr.opt_data);
        packet.emit(hdr.after);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
