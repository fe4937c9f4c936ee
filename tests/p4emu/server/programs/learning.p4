/* MAC learning: unknown source MACs are sent to the controller as digests; forwarding
 * entries age out through P4Runtime idle timeouts. Used to test digests and idle timeouts
 * through p4emu-switch's P4Runtime stream. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct learn_t {
    bit<48> src;
    bit<9>  port;
}

struct headers_t { ethernet_t ethernet; }
struct metadata_t { }

parser LearnParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control LearnVerify(inout headers_t hdr, inout metadata_t meta) { apply { } }

control LearnIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action learn() { digest<learn_t>(1, { hdr.ethernet.src, sm.ingress_port }); }
    action known() { }
    table source {
        key = { hdr.ethernet.src: exact; }
        actions = { learn; known; }
        default_action = learn();
        support_timeout = true;
    }
    action forward(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table destination {
        key = { hdr.ethernet.dst: exact; }
        actions = { forward; drop; }
        default_action = drop();
    }
    apply {
        source.apply();
        destination.apply();
    }
}

control LearnEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control LearnCompute(inout headers_t hdr, inout metadata_t meta) { apply { } }
control LearnDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); } }

V1Switch(LearnParser(), LearnVerify(), LearnIngress(), LearnEgress(), LearnCompute(),
         LearnDeparser()) main;
