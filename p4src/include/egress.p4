/*
 * mrc_switch: egress.
 *
 * 1. Resynchronise the ingress-side estimate of the data queue: on a data-queue
 *    departure, port_qdepth_est[port] = deq_qdepth (the packets still in that queue).
 * 2. RED-like ECN marking on the exact enq_qdepth, data queue only, per port class
 *    (parameters bridged from ingress in metadata).
 * 3. Optional MAC rewrite per egress port; counters.
 */
#ifndef MRC_EGRESS_P4
#define MRC_EGRESS_P4

#include "headers.p4"

control MrcEgress(inout headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {

    counter(MAX_PORTS, CounterType.packets_and_bytes) forwarded;              /* egress port */
    counter(MAX_PLANES, CounterType.packets_and_bytes) forwarded_per_plane;   /* plane id */
    counter(MAX_PORTS, CounterType.packets_and_bytes) ecn_marked;             /* egress port */
    counter(MAX_PLANES, CounterType.packets_and_bytes) ecn_marked_per_plane;  /* plane id */

    action set_port_macs(mac_t src_mac, mac_t dst_mac) {
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
    }

    /* Ports without an entry leave the Ethernet addresses as received. */
    table egress_port_mac {
        key = { standard_metadata.egress_port : exact @name("port"); }
        actions = { set_port_macs; @defaultonly NoAction; }
        default_action = NoAction();
        size = MAX_PORTS;
    }

    apply {
        /* deq_qdepth counts this packet's own priority queue: only a data-queue
         * departure resynchronises the data-queue estimate. */
        if (meta.in_data_queue == 1) {
            port_qdepth_est.write((bit<32>)standard_metadata.egress_port,
                                  (bit<32>)standard_metadata.deq_qdepth);
        }

        /* Mark probability: 0 up to ecn_min_qdepth, rising linearly to
         * ecn_max_prob / 65536 just below ecn_max_qdepth, 1 from ecn_max_qdepth on.
         * Division-free: draw in [0, (max - min) * 65536) and compare with
         * (qdepth - min) * ecn_max_prob. */
        if (meta.ecn_enable == 1 && meta.high_priority == 0 && hdr.ipv6.isValid()
            && (hdr.ipv6.ecn == ECN_ECT0 || hdr.ipv6.ecn == ECN_ECT1)) {
            bit<32> qdepth = (bit<32>)standard_metadata.enq_qdepth;
            bit<32> min_q = (bit<32>)meta.ecn_min_qdepth;
            bit<32> max_q = (bit<32>)meta.ecn_max_qdepth;
            bool mark = false;
            if (qdepth >= max_q) {
                mark = true;
            } else if (qdepth > min_q) {
                bit<32> draw;
                random(draw, 32w0, ((max_q - min_q) << 16) - 1);
                if (draw < (qdepth - min_q) * (bit<32>)meta.ecn_max_prob) {
                    mark = true;
                }
            }
            if (mark) {
                hdr.ipv6.ecn = ECN_CE;
                ecn_marked.count((bit<32>)standard_metadata.egress_port);
                ecn_marked_per_plane.count((bit<32>)meta.plane_id);
            }
        }

        if (standard_metadata.egress_port != CPU_PORT) {
            egress_port_mac.apply();
        }
        forwarded.count((bit<32>)standard_metadata.egress_port);
        forwarded_per_plane.count((bit<32>)meta.plane_id);
    }
}

#endif  /* MRC_EGRESS_P4 */
