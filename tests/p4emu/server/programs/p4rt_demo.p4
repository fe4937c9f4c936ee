/* A small L2 switch used to test p4emu-switch end to end over P4Runtime:
 * exact-match forwarding, multicast, a per-port counter, a register, packet-in/out. */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 510

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
}

struct metadata_t { }

parser DemoParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control DemoVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control DemoIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    counter(512, CounterType.packets_and_bytes) port_rx;
    register<bit<16>>(512) last_ether_type;

    action drop() { mark_to_drop(sm); }
    action forward(bit<9> port) { sm.egress_spec = port; }
    action flood(bit<16> group) { sm.mcast_grp = group; }
    action to_cpu() { sm.egress_spec = CPU_PORT; }

    table l2_fwd {
        key = { hdr.ethernet.dst: exact; }
        actions = { forward; flood; to_cpu; drop; }
        default_action = drop();
        size = 64;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            return;
        }
        port_rx.count((bit<32>) sm.ingress_port);
        last_ether_type.write((bit<32>) sm.ingress_port, hdr.ethernet.ether_type);
        l2_fwd.apply();
    }
}

control DemoEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
        }
    }
}

control DemoComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control DemoDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
    }
}

V1Switch(DemoParser(), DemoVerifyChecksum(), DemoIngress(), DemoEgress(),
         DemoComputeChecksum(), DemoDeparser()) main;
