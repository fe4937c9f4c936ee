/*
 * mrc_switch: parser.
 *
 * [packet_out] / Ethernet / outer IPv6 [/ SRH + SID list] / inner IPv6 / UDP 4791 /
 * BTH [/ TSETH] / RETH. SACK, NACK and probe bodies are not parsed: the switch classifies
 * them by DSCP, and a packet without a parsed RETH is never trimmed.
 *
 * BMv2 does not drop a packet on a parser error: ingress sees
 * standard_metadata.parser_error, counts it (drop_parser_error) and drops it.
 */
#ifndef MRC_PARSER_P4
#define MRC_PARSER_P4

#include "headers.p4"

error {
    Ipv6VersionNotSix,          /* ethertype 0x86DD but version != 6 */
    SrhSegmentsLeftTooLarge,    /* segments_left > last_entry + 1 (RFC 8754 4.3.1.1) */
    SrhListExceedsHeader        /* last_entry > hdr_ext_len / 2 - 1 (RFC 8754 4.3.1.1) */
}

parser MrcParser(packet_in packet,
                 out headers_t hdr,
                 inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {

    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }

    state parse_packet_out {
        packet.extract(hdr.cpu_out);
        transition parse_ethernet;
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_ipv6 {
        packet.extract(hdr.ipv6);
        verify(hdr.ipv6.version == 6, error.Ipv6VersionNotSix);
        transition select(hdr.ipv6.next_hdr) {
            IPPROTO_IPV6: parse_inner_ipv6;
            IPPROTO_ROUTING: parse_srh;
            default: accept;
        }
    }

    /* A routing header of another type keeps hdr.srh valid (its first 8 bytes) but is
     * not treated as an SRH: ingress requires meta.srh_parsed. */
    state parse_srh {
        packet.extract(hdr.srh);
        transition select(hdr.srh.routing_type) {
            SRH_ROUTING_TYPE: parse_srh_type4;
            default: accept;
        }
    }

    /* RFC 8754 4.3.1.1 checks: the segment list must fit in the header (hdr_ext_len,
     * in 8-byte units, holds 2 per SID) and segments_left must index it. Without the
     * first check the SID loop would read the inner header as SIDs. */
    state parse_srh_type4 {
        verify((bit<9>)hdr.srh.segments_left <= (bit<9>)hdr.srh.last_entry + 1,
               error.SrhSegmentsLeftTooLarge);
        verify((bit<9>)hdr.srh.last_entry + 1 <= (bit<9>)(hdr.srh.hdr_ext_len >> 1),
               error.SrhListExceedsHeader);
        meta.srh_sids_total = hdr.srh.last_entry + 1;
        /* wraps to 255 when segments_left == 0: then no SID is saved, none is needed */
        meta.srh_next_sid_idx = hdr.srh.segments_left - 1;
        meta.srh_sid_idx = 0;
        meta.srh_expected_ext_len = (hdr.srh.last_entry + 1) << 1;
        transition parse_srh_sid;
    }

    /* Bounded loop: more than MAX_SRH_SIDS segments overflow the header stack and end
     * in error.StackOutOfBounds (counted as a parser-error drop). */
    state parse_srh_sid {
        packet.extract(hdr.srh_sids.next);
        bool is_next_sid = meta.srh_sid_idx == meta.srh_next_sid_idx;
        transition select(is_next_sid) {
            true: save_next_sid;
            default: parse_srh_sid_advance;
        }
    }

    /* Segment List[segments_left - 1]: the address SRH End copies into the DA. */
    state save_next_sid {
        meta.srh_next_sid = hdr.srh_sids.last.sid;
        transition parse_srh_sid_advance;
    }

    state parse_srh_sid_advance {
        meta.srh_sid_idx = meta.srh_sid_idx + 1;
        bool list_done = meta.srh_sid_idx == meta.srh_sids_total;
        transition select(list_done) {
            true: parse_srh_end;
            default: parse_srh_sid;
        }
    }

    /* SRH TLVs (none in MRC) would sit between the SID list and the inner header: such
     * a packet is routed but its inner headers are not parsed (so it is never trimmed). */
    state parse_srh_end {
        meta.srh_parsed = 1;
        bool no_tlvs = hdr.srh.hdr_ext_len == meta.srh_expected_ext_len;
        transition select(no_tlvs) {
            true: parse_srh_next;
            default: accept;
        }
    }

    state parse_srh_next {
        transition select(hdr.srh.next_hdr) {
            IPPROTO_IPV6: parse_inner_ipv6;
            default: accept;
        }
    }

    state parse_inner_ipv6 {
        packet.extract(hdr.inner_ipv6);
        transition select(hdr.inner_ipv6.next_hdr) {
            IPPROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            MRC_UDP_PORT: parse_bth;
            default: accept;
        }
    }

    state parse_bth {
        packet.extract(hdr.bth);
        transition select(hdr.bth.opcode, hdr.bth.ts) {
            (OP_WRITE, 1): parse_tseth;
            (OP_WRITE, 0): parse_reth;
            (OP_WRITE_IMM, 1): parse_tseth;
            (OP_WRITE_IMM, 0): parse_reth;
            default: accept;
        }
    }

    state parse_tseth {
        packet.extract(hdr.tseth);
        transition parse_reth;
    }

    state parse_reth {
        packet.extract(hdr.reth);
        transition accept;
    }
}

#endif  /* MRC_PARSER_P4 */
