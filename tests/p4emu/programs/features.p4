/* A grab bag of language features: header unions, varbit, lookahead, value sets,
 * sub-parsers, sub-controls with constructor parameters, functions, new types,
 * serializable enums, slices, concatenation, saturating arithmetic, struct initializers. */
#include <core.p4>
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

typedef bit<48> mac_t;
type bit<32> tenant_id_t;

enum bit<16> EtherType {
    IPV4 = 0x0800,
    VLAN = 0x8100,
    OPT  = 0x88b5
}

enum Direction { IN, OUT }

error { BadOptions }

const int HEADER_BYTES = 14;
const bit<8> DEFAULT_TTL = 64;

header ethernet_t {
    mac_t     dst;
    mac_t     src;
    EtherType ether_type;
}

header vlan_t {
    bit<3>  pcp;
    bit<1>  dei;
    bit<12> vid;
    bit<16> ether_type;
}

header ipv4_base_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  tos;
    bit<16> total_len;
    bit<16> id;
    bit<16> frag;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> checksum;
    bit<32> src;
    bit<32> dst;
}

header ipv4_options_t {
    varbit<320> options;
}

header opt_a_t { bit<8> kind; bit<8> value; }
header opt_b_t { bit<8> kind; bit<16> value; }

header_union opt_u {
    opt_a_t a;
    opt_b_t b;
}

struct pair_t {
    bit<8>  first;
    bit<16> second;
}

struct headers_t {
    ethernet_t     ethernet;
    vlan_t[2]      vlans;
    ipv4_base_t    ipv4;
    ipv4_options_t ipv4_options;
    opt_u          opt;
}

struct metadata_t {
    bit<16>     l4_len;
    tenant_id_t tenant;
    Direction   direction;
    pair_t      pair;
    bit<32>     rnd;
    bit<8>      sat;
}

bit<16> ones_complement_add(in bit<16> a, in bit<16> b) {
    bit<17> sum = (bit<17>)a + (bit<17>)b;
    return sum[15:0] + (bit<16>)sum[16:16];
}

bool is_multicast(in mac_t addr) {
    if (addr[40:40] == 1) {
        return true;
    }
    return false;
}

parser VlanParser(packet_in packet, inout headers_t hdr) {
    state start {
        packet.extract(hdr.vlans.next);
        transition select(hdr.vlans.last.ether_type) {
            0x8100: start;
            default: accept;
        }
    }
}

parser MainParser(packet_in packet,
                  out headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t std_meta) {
    value_set<bit<16>>(4) custom_ethertypes;
    VlanParser() vlan_parser;

    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            EtherType.VLAN: parse_vlan;
            EtherType.IPV4: parse_ipv4;
            EtherType.OPT: parse_opt;
            default: maybe_custom;
        }
    }

    state maybe_custom {
        transition select((bit<16>)hdr.ethernet.ether_type) {
            custom_ethertypes: accept;
            default: reject;
        }
    }

    state parse_vlan {
        vlan_parser.apply(packet, hdr);
        transition select(hdr.vlans[1].isValid(), hdr.vlans[0].ether_type) {
            (true, _): accept;
            (false, 0x0800 &&& 0xffff): parse_ipv4;
            (false, 0x0000 .. 0x05ff): accept;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        verify(hdr.ipv4.ihl >= 5, error.BadOptions);
        packet.extract(hdr.ipv4_options, (bit<32>)(((bit<16>)hdr.ipv4.ihl - 5) * 32));
        meta.l4_len = hdr.ipv4.total_len - ((bit<16>)hdr.ipv4.ihl << 2);
        transition accept;
    }

    state parse_opt {
        bit<8> kind = packet.lookahead<bit<8>>();
        transition select(kind) {
            1: parse_opt_a;
            2: parse_opt_b;
            default: skip;
        }
    }

    state parse_opt_a {
        packet.extract(hdr.opt.a);
        transition accept;
    }

    state parse_opt_b {
        packet.extract(hdr.opt.b);
        transition accept;
    }

    state skip {
        packet.advance(32);
        transition reject;
    }
}

control Verify(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.total_len,
              hdr.ipv4.id, hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src, hdr.ipv4.dst, hdr.ipv4_options.options },
            hdr.ipv4.checksum, HashAlgorithm.csum16);
    }
}

control TtlControl(inout headers_t hdr)(bit<8> decrement) {
    @hidden action dec() {
        hdr.ipv4.ttl = hdr.ipv4.ttl |-| decrement;
    }
    apply {
        if (hdr.ipv4.isValid()) {
            dec();
        }
    }
}

control MyIngress(inout headers_t hdr,
                inout metadata_t meta,
                inout standard_metadata_t std_meta) {
    TtlControl(1) ttl;
    counter<bit<8>>(256, CounterType.packets) tos_counter;
    register<bit<32>, bit<4>>(16) scratch;

    @name("set_tenant") action assign_tenant(tenant_id_t tenant, @name("dir") Direction d) {
        meta.tenant = tenant;
        meta.direction = d;
    }

    action fwd(PortId_t port) {
        std_meta.egress_spec = port;
    }

    @name(".global_drop") action drop() {
        mark_to_drop(std_meta);
    }

    @name("tenants") table tenant_table {
        key = {
            hdr.ethernet.src: exact;
            hdr.ipv4.isValid(): exact @name("ipv4_valid");
            hdr.ipv4.dst[31:24]: ternary @name("dst_hi");
        }
        actions = { assign_tenant; @tableonly fwd; @defaultonly drop; }
        default_action = drop();
        my_custom_property = 5;
    }

    apply {
        const bit<8> step = 2;
        bit<32> tmp;
        ttl.apply(hdr);
        tos_counter.count(hdr.ipv4.tos);
        scratch.read(tmp, 4w3);
        scratch.write(4w3, tmp |+| 1);
        tenant_table.apply();
        meta.pair = { first = DEFAULT_TTL, second = 16w7 };
        meta.pair = { 1, 2 };
        meta.sat = 8w250 |+| 8w10;
        bit<56> joined = hdr.ethernet.src ++ hdr.ipv4.ttl;
        bit<8> low = joined[7:0];
        meta.pair.first = (low > step) ? low - step : 8w0;
        meta.l4_len = ones_complement_add(meta.l4_len, 16w1);
        if (is_multicast(hdr.ethernet.dst) || meta.direction == Direction.OUT) {
            std_meta.mcast_grp = 1;
        }
        if (hdr.ethernet.ether_type == EtherType.IPV4 && hdr.opt.isValid()) {
            hdr.opt.a.setInvalid();
        }
        if ((bit<16>)hdr.ethernet.ether_type == 0x0800) {
            hdr.vlans.push_front(1);
            hdr.vlans[0].setValid();
            hdr.vlans[0].vid = meta.tenant == (tenant_id_t)5 ? 12w1 : 12w2;
        }
        random(meta.rnd, 32w0, 32w100);
        int<8> signed_value = -8s3;
        signed_value = signed_value >> 1;
        assert(HEADER_BYTES * 8 == ethernet_t.minSizeInBits());
        log_msg("tenant");
        if (std_meta.parser_error == error.BadOptions) {
            resubmit_preserving_field_list(0);
        }
    }
}

control MyEgress(inout headers_t hdr,
               inout metadata_t meta,
               inout standard_metadata_t std_meta) {
    apply {
        if (std_meta.egress_port == 3) {
            recirculate_preserving_field_list(0);
        }
    }
}

control Compute(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr);
    }
}

V1Switch(MainParser(), Verify(), MyIngress(), MyEgress(), Compute(), MyDeparser()) main;
