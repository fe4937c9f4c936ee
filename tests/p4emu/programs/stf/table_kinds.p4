/* Match kinds: exact, lpm (longest prefix wins), ternary with priorities (STF: the
 * larger priority wins), and range / optional keys in const entries (the first entry
 * wins). h.kind picks the table; a miss drops the packet. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header h_t {
    bit<8>  kind;
    bit<32> addr;
    bit<16> val;
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
    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }

    table t_exact {
        key = { hdr.h.addr: exact; }
        actions = { set_port; drop; }
        default_action = drop();
    }
    table t_lpm {
        key = { hdr.h.addr: lpm; }
        actions = { set_port; drop; }
        default_action = drop();
    }
    table t_ternary {
        key = {
            hdr.h.addr: ternary;
            hdr.h.val: ternary;
        }
        actions = { set_port; drop; }
        default_action = drop();
    }
    table t_range {
        key = { hdr.h.val: range; }
        actions = { set_port; drop; }
        default_action = drop();
        const entries = {
            1 .. 10: set_port(5);
            5 .. 20: set_port(6);
        }
    }
    table t_optional {
        key = {
            hdr.h.addr: optional;
            hdr.h.val: exact;
        }
        actions = { set_port; drop; }
        default_action = drop();
        const entries = {
            (0x0a000001, 1): set_port(7);
            (_, 1): set_port(8);
        }
    }

    apply {
        if (hdr.h.kind == 1) {
            t_exact.apply();
        } else if (hdr.h.kind == 2) {
            t_lpm.apply();
        } else if (hdr.h.kind == 3) {
            t_ternary.apply();
        } else if (hdr.h.kind == 4) {
            t_range.apply();
        } else if (hdr.h.kind == 5) {
            t_optional.apply();
        } else {
            drop();
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
