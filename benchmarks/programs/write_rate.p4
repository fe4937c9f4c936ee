/* A program with one large exact-match table, for measuring P4Runtime write rates. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t { ethernet_t ethernet; }
struct metadata_t { }

parser BenchParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control BenchVerify(inout headers_t hdr, inout metadata_t meta) { apply { } }

control BenchIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action forward(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table mac_table {
        key = { hdr.ethernet.dst: exact; }
        actions = { forward; drop; }
        default_action = drop();
        size = 1048576;
    }
    apply { mac_table.apply(); }
}

control BenchEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control BenchCompute(inout headers_t hdr, inout metadata_t meta) { apply { } }
control BenchDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); } }

V1Switch(BenchParser(), BenchVerify(), BenchIngress(), BenchEgress(), BenchCompute(),
         BenchDeparser()) main;
