/* Fuzz target (tests/p4emu/server/test_fuzz_properties.py): tests/p4emu/programs/stateful.p4 with names
 * on its in-place table properties, as P4Runtime needs. Externs: registers, counters, meters, direct counters/meters, hash, clone, digest,
 * an action selector, const entries on a ternary key, and a switch on action_run. */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 255
#define CLONE_SESSION 100
#define FLOW_SLOTS 1024

typedef bit<48> mac_t;
typedef bit<32> ipv4_t_addr;

const bit<16> ETH_IPV4 = 16w0x0800;

enum bit<8> IpProto {
    TCP = 6,
    UDP = 17
}

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
    mac_t   dst;
    mac_t   src;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4>      version;
    bit<4>      ihl;
    bit<8>      tos;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    IpProto     protocol;
    bit<16>     checksum;
    ipv4_t_addr src;
    ipv4_t_addr dst;
}

header l4_h {
    bit<16> sport;
    bit<16> dport;
}

struct learn_digest_t {
    mac_t  src;
    bit<9> port;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    ipv4_h       ipv4;
    l4_h         l4;
}

struct metadata_t {
    @field_list(1)
    bit<9>  ingress_port;
    bit<16> flow_index;
    bit<32> byte_count;
    bit<2>  color;
    bit<14> ecmp_hash;
    bool    is_learned;
}

parser IngressParser(packet_in packet,
                     out headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t std_meta) {
    state start {
        transition select(std_meta.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETH_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            IpProto.TCP: parse_l4;
            IpProto.UDP: parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        packet.extract(hdr.l4);
        transition accept;
    }
}

control NoVerify(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control FabricIngress(inout headers_t hdr,
                      inout metadata_t meta,
                      inout standard_metadata_t std_meta) {
    register<bit<32>>(FLOW_SLOTS) flow_bytes;
    counter(64, CounterType.packets_and_bytes) port_counter;
    meter(FLOW_SLOTS, MeterType.bytes) flow_meter;
    direct_counter(CounterType.packets) acl_counter;
    direct_meter<bit<2>>(MeterType.packets) ecmp_meter;

    action drop() {
        mark_to_drop(std_meta);
    }

    action send_to_cpu() {
        std_meta.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = std_meta.ingress_port;
    }

    action clone_to_cpu() {
        meta.ingress_port = std_meta.ingress_port;
        clone_preserving_field_list(CloneType.I2E, CLONE_SESSION, 1);
    }

    action set_egress(bit<9> port) {
        std_meta.egress_spec = port;
    }

    action learn() {
        digest<learn_digest_t>(1, {hdr.ethernet.src, std_meta.ingress_port});
    }

    table smac {
        key = { hdr.ethernet.src: exact; }
        actions = { learn; NoAction; }
        default_action = learn();
        size = 4096;
        support_timeout = true;
    }

    table dmac {
        key = { hdr.ethernet.dst: exact @name("dst_mac"); }
        actions = { set_egress; drop; @defaultonly NoAction; }
        default_action = NoAction();
    }

    table acl {
        key = {
            std_meta.ingress_port: ternary;
            hdr.ethernet.ether_type: ternary;
            hdr.ipv4.src: ternary;
            hdr.ipv4.dst: lpm;
            hdr.l4.dport: range;
        }
        actions = { send_to_cpu; clone_to_cpu; drop; NoAction; }
        default_action = NoAction();
        counters = acl_counter;
        const entries = {
            (_, 0x0806, _, _, _): send_to_cpu();
            (_, _, 0x0A000001 &&& 0xFFFFFFFF, 0x0A000000 &&& 0xFF000000, 0 .. 1023): drop();
        }
    }

    action set_nhop(bit<9> port) {
        std_meta.egress_spec = port;
        ecmp_meter.read(meta.color);
    }

    table ecmp {
        key = {
            hdr.ipv4.dst: lpm;
            meta.ecmp_hash: selector;
        }
        actions = { set_nhop; drop; }
        @name("ecmp_selector") implementation = action_selector(HashAlgorithm.crc16, 32w128, 32w14);
        meters = ecmp_meter;
    }

    action color_read() {
        meta.color = 0;
    }

    table port_acl {
        key = { std_meta.ingress_port: ternary; }
        actions = { color_read; NoAction; }
        const default_action = NoAction();
        const entries = {
            1: color_read();
            2: NoAction();
        }
    }

    apply {
        port_counter.count((bit<32>)std_meta.ingress_port);
        if (hdr.packet_out.isValid()) {
            std_meta.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        if (!smac.apply().hit) {
            meta.is_learned = false;
        }
        switch (dmac.apply().action_run) {
            set_egress: {
                meta.is_learned = true;
            }
            drop:
            NoAction: {
                acl.apply();
            }
        }
        if (hdr.ipv4.isValid()) {
            hash(meta.flow_index, HashAlgorithm.crc32, 16w0,
                 { hdr.ipv4.src, hdr.ipv4.dst, hdr.ipv4.protocol, hdr.l4.sport, hdr.l4.dport },
                 16w1023);
            hash(meta.ecmp_hash, HashAlgorithm.crc16, (bit<14>)0,
                 { hdr.ipv4.src, hdr.ipv4.dst }, (bit<32>)16384);
            flow_bytes.read(meta.byte_count, (bit<32>)meta.flow_index);
            meta.byte_count = meta.byte_count + std_meta.packet_length;
            flow_bytes.write((bit<32>)meta.flow_index, meta.byte_count);
            flow_meter.execute_meter((bit<32>)meta.flow_index, meta.color);
            if (meta.color == V1MODEL_METER_COLOR_RED) {
                drop();
                return;
            }
            ecmp.apply();
            port_acl.apply();
        }
    }
}

control FabricEgress(inout headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t std_meta) {
    apply {
        if (std_meta.instance_type == 1) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = meta.ingress_port;
            truncate(64);
        }
        log_msg("egress port {}", {std_meta.egress_port});
    }
}

control FabricComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.checksum, HashAlgorithm.csum16);
    }
}

control FabricDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.l4);
    }
}

V1Switch(IngressParser(), NoVerify(), FabricIngress(), FabricEgress(),
         FabricComputeChecksum(), FabricDeparser()) main;
