// A cut-down version of ONF fabric.p4 (p4c testdata fabric_20190420): the filtering and
// hashed-next tables, the port counters and the packet I/O headers keep their names, so
// their P4Info entries must equal those in p4c's fabric.p4.p4info.txtpb.
#include <core.p4>
#include <v1model.p4>

typedef bit<3> fwd_type_t;
typedef bit<32> next_id_t;

@controller_header("packet_in")
header packet_in_header_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_header_t {
    bit<9> egress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
}

header vlan_tag_t {
    bit<16> eth_type;
    bit<3> pri;
    bit<1> cfi;
    bit<12> vlan_id;
}

header ipv4_t {
    bit<32> src_addr;
    bit<32> dst_addr;
}

struct parsed_headers_t {
    packet_out_header_t packet_out;
    packet_in_header_t packet_in;
    ethernet_t ethernet;
    vlan_tag_t vlan_tag;
    ipv4_t ipv4;
}

struct fabric_metadata_t {
    bit<16> eth_type;
    bit<12> vlan_id;
    fwd_type_t fwd_type;
    next_id_t next_id;
    bool skip_next;
}

action nop() { }

parser FabricParser(packet_in packet, out parsed_headers_t hdr, inout fabric_metadata_t fabric_metadata,
                    inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control Filtering(inout parsed_headers_t hdr, inout fabric_metadata_t fabric_metadata,
                  inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets_and_bytes) ingress_port_vlan_counter;

    action deny() {
        fabric_metadata.skip_next = true;
        ingress_port_vlan_counter.count();
    }
    action permit() {
        ingress_port_vlan_counter.count();
    }
    action permit_with_internal_vlan(bit<12> vlan_id) {
        fabric_metadata.vlan_id = vlan_id;
        ingress_port_vlan_counter.count();
    }
    table ingress_port_vlan {
        key = {
            standard_metadata.ingress_port: exact @name("ig_port");
            hdr.vlan_tag.isValid(): exact @name("vlan_is_valid");
            hdr.vlan_tag.vlan_id: ternary @name("vlan_id");
        }
        actions = { deny(); permit(); permit_with_internal_vlan(); }
        const default_action = deny();
        counters = ingress_port_vlan_counter;
        size = 1024;
    }

    direct_counter(CounterType.packets_and_bytes) fwd_classifier_counter;

    action set_forwarding_type(fwd_type_t fwd_type) {
        fabric_metadata.fwd_type = fwd_type;
        fwd_classifier_counter.count();
    }
    table fwd_classifier {
        key = {
            standard_metadata.ingress_port: exact @name("ig_port");
            hdr.ethernet.dst_addr: ternary @name("eth_dst");
            fabric_metadata.eth_type: exact @name("eth_type");
        }
        actions = { set_forwarding_type; }
        const default_action = set_forwarding_type(0);
        counters = fwd_classifier_counter;
        size = 1024;
    }

    apply {
        ingress_port_vlan.apply();
        fwd_classifier.apply();
    }
}

control Next(inout parsed_headers_t hdr, inout fabric_metadata_t fabric_metadata,
             inout standard_metadata_t standard_metadata) {
    @max_group_size(16)
    action_selector(HashAlgorithm.crc16, 32w1024, 32w16) hashed_selector;
    direct_counter(CounterType.packets_and_bytes) hashed_counter;

    action output_hashed(bit<9> port_num) {
        standard_metadata.egress_spec = port_num;
        hashed_counter.count();
    }
    table hashed {
        key = {
            fabric_metadata.next_id: exact @name("next_id");
            hdr.ipv4.dst_addr: selector;
            hdr.ipv4.src_addr: selector;
        }
        actions = { output_hashed; @defaultonly nop; }
        implementation = hashed_selector;
        counters = hashed_counter;
        const default_action = nop();
    }
    apply { hashed.apply(); }
}

control PortCountersControl(inout parsed_headers_t hdr, inout fabric_metadata_t fabric_metadata,
                            inout standard_metadata_t standard_metadata) {
    counter(511, CounterType.packets_and_bytes) egress_port_counter;
    counter(511, CounterType.packets_and_bytes) ingress_port_counter;
    apply {
        egress_port_counter.count((bit<32>)standard_metadata.egress_spec);
        ingress_port_counter.count((bit<32>)standard_metadata.ingress_port);
    }
}

control FabricIngress(inout parsed_headers_t hdr, inout fabric_metadata_t fabric_metadata,
                      inout standard_metadata_t standard_metadata) {
    Filtering() filtering;
    Next() next;
    PortCountersControl() port_counters_control;
    apply {
        filtering.apply(hdr, fabric_metadata, standard_metadata);
        if (!fabric_metadata.skip_next) {
            next.apply(hdr, fabric_metadata, standard_metadata);
            port_counters_control.apply(hdr, fabric_metadata, standard_metadata);
        }
    }
}

control FabricEgress(inout parsed_headers_t hdr, inout fabric_metadata_t fabric_metadata,
                     inout standard_metadata_t standard_metadata) {
    apply { }
}

control FabricVerifyChecksum(inout parsed_headers_t hdr, inout fabric_metadata_t meta) {
    apply { }
}

control FabricComputeChecksum(inout parsed_headers_t hdr, inout fabric_metadata_t meta) {
    apply { }
}

control FabricDeparser(packet_out packet, in parsed_headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(FabricParser(), FabricVerifyChecksum(), FabricIngress(), FabricEgress(),
         FabricComputeChecksum(), FabricDeparser()) main;
