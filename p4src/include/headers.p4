/*
 * mrc_switch: headers and metadata. Byte layouts: docs/wire-format.md.
 */
#ifndef MRC_HEADERS_P4
#define MRC_HEADERS_P4

#include "defines.p4"

/* Switch -> controller. P4Runtime PacketIn metadata ids: 1 ingress_port, 2 _pad0, 3 reason. */
@controller_header("packet_in")
header packet_in_t {
    port_t  ingress_port;
    bit<7>  _pad0;
    bit<8>  reason;        /* PUNT_* in defines.p4 */
}

/* Controller -> switch. PacketOut metadata ids: 1 egress_port, 2 use_pipeline, 3 _pad0.
 * use_pipeline = 0: send the frame unchanged out of egress_port.
 * use_pipeline = 1: route the frame like one received on the CPU port. */
@controller_header("packet_out")
header packet_out_t {
    port_t  egress_port;
    bit<1>  use_pipeline;
    bit<6>  _pad0;
}

header ethernet_t {
    mac_t    dst_addr;
    mac_t    src_addr;
    bit<16>  ether_type;
}

/* Used for both the outer (uSID carrier) and the inner (NIC to NIC) header. */
header ipv6_t {
    bit<4>       version;
    bit<6>       dscp;
    bit<2>       ecn;
    bit<20>      flow_label;      /* EV bits 15..0 in the low 16 bits */
    bit<16>      payload_len;
    bit<8>       next_hdr;
    bit<8>       hop_limit;
    ipv6_addr_t  src_addr;
    ipv6_addr_t  dst_addr;
}

/* RFC 8754 segment routing header, fixed part (routing type 4). */
header srh_t {
    bit<8>   next_hdr;
    bit<8>   hdr_ext_len;    /* 8-byte units after the first 8 bytes = 2 x (last_entry + 1) */
    bit<8>   routing_type;
    bit<8>   segments_left;
    bit<8>   last_entry;
    bit<8>   flags;
    bit<16>  tag;
}

header srh_sid_t {
    ipv6_addr_t  sid;
}

header udp_t {
    bit<16>  src_port;       /* EV bits 31..16 */
    bit<16>  dst_port;       /* 4791 */
    bit<16>  length;
    bit<16>  checksum;       /* 0 (not computed) */
}

/* MRC base transport header, 12 bytes. */
header bth_t {
    bit<8>   opcode;
    bit<1>   rtx;
    bit<1>   ts;             /* a TSETH follows */
    bit<1>   last_pkt;       /* last packet of a message */
    bit<1>   reserved0;
    bit<4>   tver;
    bit<16>  pkey;
    bit<8>   reserved1;
    bit<24>  dqpn;
    bit<1>   ack_req;
    bit<7>   reserved2;
    bit<24>  psn;
}

/* Timestamp extension (when bth.ts == 1). */
header tseth_t {
    bit<32>  tx_timestamp;
}

/* RDMA extended transport header, in every data packet. */
header reth_t {
    bit<64>  va;
    bit<32>  rkey;
    bit<32>  dma_length;
}

struct headers_t {
    packet_in_t                cpu_in;        /* @controller_header("packet_in") */
    packet_out_t               cpu_out;       /* @controller_header("packet_out") */
    ethernet_t                 ethernet;
    ipv6_t                     ipv6;          /* outer */
    srh_t                      srh;
    srh_sid_t[MAX_SRH_SIDS]    srh_sids;
    ipv6_t                     inner_ipv6;
    udp_t                      udp;
    bth_t                      bth;
    tseth_t                    tseth;
    reth_t                     reth;
}

struct metadata_t {
    /* Parser scratch for the SRH segment list. */
    bit<8>       srh_sids_total;      /* last_entry + 1 */
    bit<8>       srh_sid_idx;         /* index of the next SID to extract */
    bit<8>       srh_next_sid_idx;    /* segments_left - 1: the SID End copies into the DA */
    bit<8>       srh_expected_ext_len;
    bit<1>       srh_parsed;          /* the whole SID list was extracted, no TLVs */
    ipv6_addr_t  srh_next_sid;

    /* switch_config */
    bit<4>       plane_id;
    bit<3>       control_priority;
    bit<1>       punt_end_of_carrier;
    bit<1>       punt_no_route;
    bit<1>       punt_hop_limit;
    bit<1>       punt_non_ipv6;

    /* Ingress decisions. */
    bit<2>       verdict;
    bit<3>       drop_reason;
    port_t       drop_port;           /* index of the drop counter */
    bit<8>       punt_reason;
    bit<3>       plan;
    bit<48>      dst_prefix;          /* my_usid key: outer DA[127:80] = block + active uSID */
    bit<1>       route_by_usid;
    bit<16>      route_usid;          /* usid_route key: the active uSID after the rewrite */
    ipv6_addr_t  route_dst;           /* ipv6_route key: the destination after the rewrite */
    bit<1>       route_to_cpu;
    bit<1>       ingress_port_up;

    /* Egress port configuration (ingress looks it up; egress reads it: bridged). */
    bit<2>       egress_port_class;
    bit<1>       egress_port_up;
    bit<1>       ecn_enable;
    bit<16>      ecn_min_qdepth;
    bit<16>      ecn_max_qdepth;
    bit<16>      ecn_max_prob;
    bit<1>       trim_enable;
    bit<16>      trim_qdepth;
    bit<16>      queue_limit;

    /* Queueing and trimming. */
    bit<32>      queue_estimate;      /* data-queue packets at egress_spec (port_qdepth_est) */
    bit<1>       high_priority;       /* goes to the control queue */
    bit<1>       in_data_queue;       /* enqueued at DATA_PRIORITY: tracked by port_qdepth_est */
    bit<16>      srh_bytes;
    bit<16>      l4_bytes;            /* UDP + BTH [+ TSETH] + RETH */
}

#endif  /* MRC_HEADERS_P4 */
