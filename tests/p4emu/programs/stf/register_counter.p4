/* A register read-modify-write (the old value goes out in the packet), an indexed
 * counter and a direct counter. The STF checks them with register_write,
 * check_register and check_counter. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header h_t {
    bit<8>  idx;
    bit<32> val;
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
    register<bit<32>>(8) acc;
    counter(8, CounterType.packets_and_bytes) hits;
    direct_counter(CounterType.packets_and_bytes) by_src;

    action count_src() {
        by_src.count();
    }

    table t_src {
        key = { hdr.ethernet.src: exact; }
        actions = { count_src; NoAction; }
        default_action = NoAction();
        counters = by_src;
    }

    apply {
        bit<32> old;
        acc.read(old, (bit<32>) hdr.h.idx);
        acc.write((bit<32>) hdr.h.idx, old + hdr.h.val);
        hdr.h.val = old;
        hits.count((bit<32>) hdr.h.idx);
        t_src.apply();
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
