/* Default actions (program default, then changed with setdefault), apply().hit and a
 * switch on apply().action_run -- which names the default action on a miss. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> v;
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
    action set_v(bit<8> v) {
        hdr.h.v = v;
    }
    action to_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    table t_hit {
        key = { hdr.h.a: exact; }
        actions = { set_v; NoAction; }
        default_action = NoAction();
    }
    table t_switch {
        key = { hdr.h.b: exact; }
        actions = { to_port; set_v; NoAction; }
        default_action = set_v(0xEE);
    }

    apply {
        standard_metadata.egress_spec = 1;
        if (t_hit.apply().hit) {
            hdr.h.b = hdr.h.b + 0x10;
        } else {
            hdr.h.a = 0xFF;
        }
        switch (t_switch.apply().action_run) {
            to_port: {
                hdr.h.v = hdr.h.v + 1;
            }
            set_v: {
                standard_metadata.egress_spec = 2;
            }
            default: {
                standard_metadata.egress_spec = 3;
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
        packet.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
