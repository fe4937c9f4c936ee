/*
 * mrc_switch: ingress.
 *
 * 1. switch_config (plane id, control queue, punt switches).
 * 2. packet_out pinned to a port, or parser-error drop, or ingress-port-down drop.
 * 3. SRv6 endpoint plan, decided before any header is rewritten:
 *      my_usid hit, next uSID != 0          -> uN: shift, then usid_route
 *      my_usid hit, end of carrier, SRH SL>0 -> SRH End, then usid_route (same block)
 *                                              or ipv6_route
 *      my_sid hit, SRH SL>0                  -> SRH End, then ipv6_route
 *      my_usid / my_sid hit, nothing left    -> addressed to me: CPU or drop
 *      otherwise                             -> ipv6_route (LPM) on the outer DA
 *    A route miss is a counted no-route drop (or a punt). Headers are rewritten (shift,
 *    End, hop limit) only once the packet is known to leave on a front-panel port.
 * 4. Egress-port status and class (egress_port_config, port_class_params).
 * 5. Queue: read the data-queue occupancy estimate of the egress port (register
 *    port_qdepth_est, kept by egress); trim trimmable data over the trim threshold
 *    (truncate + TRIMMED DSCP + control queue), drop other data over the queue limit,
 *    pick the priority.
 *    docs/switch-queues.md explains why this happens here and not in egress.
 */
#ifndef MRC_INGRESS_P4
#define MRC_INGRESS_P4

#include "headers.p4"

control MrcIngress(inout headers_t hdr,
                   inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {

    /* Per-port counters, indexed by the port named in docs (p4src/README.md). */
    counter(MAX_PORTS, CounterType.packets_and_bytes) drop_parser_error;  /* ingress port */
    counter(MAX_PORTS, CounterType.packets_and_bytes) drop_no_route;      /* ingress port */
    counter(MAX_PORTS, CounterType.packets_and_bytes) drop_hop_limit;     /* ingress port */
    counter(MAX_PORTS, CounterType.packets_and_bytes) drop_local;         /* ingress port */
    counter(MAX_PORTS, CounterType.packets_and_bytes) drop_port_down;     /* the down port */
    counter(MAX_PORTS, CounterType.packets_and_bytes) drop_queue_full;    /* egress port */
    counter(MAX_PORTS, CounterType.packets_and_bytes) trimmed;            /* egress port */
    counter(MAX_PLANES, CounterType.packets_and_bytes) trimmed_per_plane; /* plane id */
    counter(MAX_PORTS, CounterType.packets_and_bytes) punted;             /* ingress port */

    /* ---- Verdict helpers (called directly from apply) ---------------------------- */
    action drop_packet(bit<3> reason, port_t counter_port) {
        meta.verdict = VERDICT_DROP;
        meta.drop_reason = reason;
        meta.drop_port = counter_port;
    }

    action punt_packet(bit<8> reason) {
        meta.verdict = VERDICT_PUNT;
        meta.punt_reason = reason;
    }

    /* ---- switch_config: one default action, no entries --------------------------- */
    action set_switch_config(bit<4> plane_id,
                             bit<3> control_priority,
                             bit<1> punt_end_of_carrier,
                             bit<1> punt_no_route,
                             bit<1> punt_hop_limit,
                             bit<1> punt_non_ipv6) {
        meta.plane_id = plane_id;
        meta.control_priority = control_priority;
        meta.punt_end_of_carrier = punt_end_of_carrier;
        meta.punt_no_route = punt_no_route;
        meta.punt_hop_limit = punt_hop_limit;
        meta.punt_non_ipv6 = punt_non_ipv6;
    }

    table switch_config {
        actions = { set_switch_config; }
        default_action = set_switch_config(0, DEFAULT_CONTROL_PRIORITY, 0, 0, 0, 0);
        size = 1;
    }

    /* ---- Port status and class ------------------------------------------------------ */
    action set_ingress_port_status(bit<1> up) {
        meta.ingress_port_up = up;
    }

    /* Ports without an entry are up. */
    table ingress_port_status {
        key = { standard_metadata.ingress_port : exact @name("port"); }
        actions = { set_ingress_port_status; @defaultonly NoAction; }
        default_action = NoAction();
        size = MAX_PORTS;
    }

    action set_egress_port_config(bit<2> port_class, bit<1> up) {
        meta.egress_port_class = port_class;
        meta.egress_port_up = up;
    }

    /* Ports without an entry are up and of class FABRIC (CPU_PORT: class CPU). */
    table egress_port_config {
        key = { standard_metadata.egress_spec : exact @name("port"); }
        actions = { set_egress_port_config; @defaultonly NoAction; }
        default_action = NoAction();
        size = MAX_PORTS;
    }

    action set_class_params(bit<1> ecn_enable,
                            bit<16> ecn_min_qdepth,
                            bit<16> ecn_max_qdepth,
                            bit<16> ecn_max_prob,
                            bit<1> trim_enable,
                            bit<16> trim_qdepth,
                            bit<16> queue_limit) {
        meta.ecn_enable = ecn_enable;
        meta.ecn_min_qdepth = ecn_min_qdepth;
        meta.ecn_max_qdepth = ecn_max_qdepth;
        meta.ecn_max_prob = ecn_max_prob;
        meta.trim_enable = trim_enable;
        meta.trim_qdepth = trim_qdepth;
        meta.queue_limit = queue_limit;
    }

    /* Classes without an entry keep the built-in defaults set in apply. */
    table port_class_params {
        key = { meta.egress_port_class : exact @name("port_class"); }
        actions = { set_class_params; @defaultonly NoAction; }
        default_action = NoAction();
        size = 4;
    }

    /* ---- SRv6 endpoint tables --------------------------------------------------------- */
    /* uN. The shift itself is done in apply, once the route is known. */
    action usid_un() { }

    table my_usid {
        key = { meta.dst_prefix : exact @name("dst_prefix"); }   /* DA[127:80] */
        actions = { usid_un; @defaultonly NoAction; }
        default_action = NoAction();
        size = 64;
    }

    /* Classic SRH End on a full 128-bit SID. */
    action srv6_end() { }

    table my_sid {
        key = { hdr.ipv6.dst_addr : exact @name("dst_addr"); }
        actions = { srv6_end; @defaultonly NoAction; }
        default_action = NoAction();
        size = 64;
    }

    /* ---- Routing ---------------------------------------------------------------------- */
    action forward(port_t port) {
        standard_metadata.egress_spec = port;
    }

    action to_cpu() {
        meta.route_to_cpu = 1;
    }

    /* Active uSID after the shift (= DA[79:64] before it) -> port. */
    table usid_route {
        key = { meta.route_usid : exact @name("usid"); }
        actions = { forward; to_cpu; @defaultonly NoAction; }
        default_action = NoAction();
        size = 4096;
    }

    /* Everything else that is IPv6: controller traffic, ND (ff02::/16 -> to_cpu), and
     * the new DA after SRH End on a full SID. */
    table ipv6_route {
        key = { meta.route_dst : lpm @name("dst_addr"); }
        actions = { forward; to_cpu; @defaultonly NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    /* ---- Trimming: cut to the headers, fix the lengths, re-mark --------------------- */
    action trim_to_headers(bit<6> trimmed_dscp) {
        hdr.udp.length = meta.l4_bytes;
        hdr.udp.checksum = 0;
        hdr.inner_ipv6.payload_len = meta.l4_bytes;
        hdr.ipv6.payload_len = meta.srh_bytes + IPV6_LEN + meta.l4_bytes;
        hdr.ipv6.dscp = trimmed_dscp;
        truncate((bit<32>)(ETH_LEN + IPV6_LEN + meta.srh_bytes + IPV6_LEN + meta.l4_bytes));
        meta.high_priority = 1;
    }

    apply {
        bool route_miss = false;

        meta.verdict = VERDICT_FORWARD;
        meta.drop_reason = DROP_NONE;
        meta.punt_reason = PUNT_NONE;
        meta.plan = PLAN_TRANSIT;
        meta.route_by_usid = 0;
        meta.route_to_cpu = 0;
        meta.ingress_port_up = 1;
        meta.egress_port_class = PORT_CLASS_FABRIC;
        meta.egress_port_up = 1;
        meta.high_priority = 0;
        meta.in_data_queue = 0;

        switch_config.apply();

        /* ---- 2. Where the packet comes from ------------------------------------------ */
        if (hdr.cpu_out.isValid() && hdr.cpu_out.use_pipeline == 0) {
            meta.verdict = VERDICT_PINNED;
            standard_metadata.egress_spec = hdr.cpu_out.egress_port;
        } else if (standard_metadata.parser_error != error.NoError) {
            drop_packet(DROP_PARSER_ERROR, standard_metadata.ingress_port);
        } else {
            ingress_port_status.apply();
            if (meta.ingress_port_up == 0) {
                drop_packet(DROP_PORT_DOWN, standard_metadata.ingress_port);
            } else if (!hdr.ipv6.isValid()) {
                if (meta.punt_non_ipv6 == 1) {
                    punt_packet(PUNT_NON_IPV6);
                } else {
                    drop_packet(DROP_NO_ROUTE, standard_metadata.ingress_port);
                }
            } else {
                /* ---- 3. SRv6 endpoint plan (no rewrite yet) ---------------------------- */
                bool srh_active = hdr.srh.isValid() && meta.srh_parsed == 1
                                  && hdr.srh.segments_left > 0;
                meta.route_dst = hdr.ipv6.dst_addr;
                meta.dst_prefix = hdr.ipv6.dst_addr[127:80];
                if (my_usid.apply().hit) {
                    if (hdr.ipv6.dst_addr[79:64] != 0) {
                        meta.plan = PLAN_USID_UN;
                        meta.route_by_usid = 1;
                        meta.route_usid = hdr.ipv6.dst_addr[79:64];
                    } else if (srh_active) {
                        meta.plan = PLAN_USID_END;
                        meta.route_dst = meta.srh_next_sid;
                        /* the next carrier of the compressed SRH is in my block */
                        if (meta.srh_next_sid[127:96] == hdr.ipv6.dst_addr[127:96]) {
                            meta.route_by_usid = 1;
                            meta.route_usid = meta.srh_next_sid[95:80];
                        }
                    } else {
                        meta.plan = PLAN_LOCAL;
                    }
                } else if (my_sid.apply().hit) {
                    if (srh_active) {
                        meta.plan = PLAN_SID_END;
                        meta.route_dst = meta.srh_next_sid;
                    } else {
                        meta.plan = PLAN_LOCAL;
                    }
                }

                if (meta.plan == PLAN_LOCAL) {
                    if (meta.punt_end_of_carrier == 1) {
                        punt_packet(PUNT_END_OF_CARRIER);
                    } else {
                        drop_packet(DROP_LOCAL, standard_metadata.ingress_port);
                    }
                } else {
                    if (meta.route_by_usid == 1) {
                        if (!usid_route.apply().hit) {
                            route_miss = true;
                        }
                    } else {
                        if (!ipv6_route.apply().hit) {
                            route_miss = true;
                        }
                    }

                    if (route_miss) {
                        if (meta.punt_no_route == 1) {
                            punt_packet(PUNT_NO_ROUTE);
                        } else {
                            drop_packet(DROP_NO_ROUTE, standard_metadata.ingress_port);
                        }
                    } else if (meta.route_to_cpu == 1
                               || standard_metadata.egress_spec == CPU_PORT) {
                        /* to_cpu, or forward(CPU_PORT): a punt, carried as received */
                        punt_packet(PUNT_ROUTE_TO_CPU);
                    } else if (hdr.ipv6.hop_limit <= 1) {
                        if (meta.punt_hop_limit == 1) {
                            punt_packet(PUNT_HOP_LIMIT);
                        } else {
                            drop_packet(DROP_HOP_LIMIT, standard_metadata.ingress_port);
                        }
                    } else {
                        /* Leaving on a port: now rewrite. */
                        hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
                        if (meta.plan == PLAN_USID_UN) {
                            hdr.ipv6.dst_addr = hdr.ipv6.dst_addr[127:96]
                                                ++ hdr.ipv6.dst_addr[79:0] ++ 16w0;
                        } else if (meta.plan == PLAN_USID_END || meta.plan == PLAN_SID_END) {
                            hdr.srh.segments_left = hdr.srh.segments_left - 1;
                            hdr.ipv6.dst_addr = meta.srh_next_sid;
                        }
                    }
                }
            }
        }
        hdr.cpu_out.setInvalid();

        /* ---- 4. Egress port: status and class ------------------------------------------ */
        /* Anything sent to the CPU port carries a packet_in header. */
        if ((meta.verdict == VERDICT_FORWARD || meta.verdict == VERDICT_PINNED)
            && standard_metadata.egress_spec == CPU_PORT) {
            punt_packet(PUNT_ROUTE_TO_CPU);
        }
        if (meta.verdict == VERDICT_PUNT) {
            standard_metadata.egress_spec = CPU_PORT;
            meta.egress_port_class = PORT_CLASS_CPU;
        } else if (meta.verdict == VERDICT_FORWARD || meta.verdict == VERDICT_PINNED) {
            egress_port_config.apply();
            if (meta.egress_port_up == 0) {
                drop_packet(DROP_PORT_DOWN, standard_metadata.egress_spec);
            }
        }

        if (meta.verdict != VERDICT_DROP) {
            /* Built-in class defaults; port_class_params overrides them per class. */
            meta.ecn_min_qdepth = DEFAULT_ECN_MIN_QDEPTH;
            meta.ecn_max_qdepth = DEFAULT_ECN_MAX_QDEPTH;
            meta.ecn_max_prob = DEFAULT_ECN_MAX_PROB;
            meta.trim_qdepth = DEFAULT_TRIM_QDEPTH;
            meta.queue_limit = DEFAULT_QUEUE_LIMIT;
            if (meta.egress_port_class == PORT_CLASS_FABRIC) {
                meta.ecn_enable = 1;
                meta.trim_enable = 1;
            } else if (meta.egress_port_class == PORT_CLASS_HOST) {
                meta.ecn_enable = 0;     /* no ECN on the last hop [C, sources §3.2] */
                meta.trim_enable = 1;
            } else {
                meta.ecn_enable = 0;
                meta.trim_enable = 0;
            }
            port_class_params.apply();

            /* ---- 5. Queue: trim / queue-full / priority ------------------------------- */
            port_qdepth_est.read(meta.queue_estimate, (bit<32>)standard_metadata.egress_spec);
            if (meta.verdict != VERDICT_FORWARD) {
                meta.high_priority = 1;   /* punts and packet_out */
            } else if (hdr.ipv6.isValid()
                       && (hdr.ipv6.dscp == DSCP_CONTROL
                           || hdr.ipv6.dscp == DSCP_TRIMMED
                           || hdr.ipv6.dscp == DSCP_TRIMMED_LASTHOP)) {
                meta.high_priority = 1;   /* never trimmed, never queue-limited */
            } else if (meta.trim_enable == 1
                       && hdr.reth.isValid()
                       && (hdr.ipv6.dscp == DSCP_TRIMMABLE
                           || hdr.ipv6.dscp == DSCP_TRIMMABLE_RETX)
                       && meta.queue_estimate >= (bit<32>)meta.trim_qdepth) {
                meta.srh_bytes = 0;
                if (hdr.srh.isValid()) {
                    meta.srh_bytes = ((bit<16>)hdr.srh.hdr_ext_len + 1) << 3;
                }
                meta.l4_bytes = UDP_LEN + BTH_LEN + RETH_LEN;
                if (hdr.tseth.isValid()) {
                    meta.l4_bytes = meta.l4_bytes + TSETH_LEN;
                }
                if (meta.egress_port_class == PORT_CLASS_HOST) {
                    trim_to_headers(DSCP_TRIMMED_LASTHOP);
                } else {
                    trim_to_headers(DSCP_TRIMMED);
                }
                trimmed.count((bit<32>)standard_metadata.egress_spec);
                trimmed_per_plane.count((bit<32>)meta.plane_id);
            } else if (meta.queue_estimate >= (bit<32>)meta.queue_limit) {
                drop_packet(DROP_QUEUE_FULL, standard_metadata.egress_spec);
            }
        }

        /* ---- Final: drop with its counter, or enqueue ------------------------------------ */
        if (meta.verdict == VERDICT_DROP) {
            mark_to_drop(standard_metadata);
            if (meta.drop_reason == DROP_PARSER_ERROR) {
                drop_parser_error.count((bit<32>)meta.drop_port);
            } else if (meta.drop_reason == DROP_NO_ROUTE) {
                drop_no_route.count((bit<32>)meta.drop_port);
            } else if (meta.drop_reason == DROP_HOP_LIMIT) {
                drop_hop_limit.count((bit<32>)meta.drop_port);
            } else if (meta.drop_reason == DROP_PORT_DOWN) {
                drop_port_down.count((bit<32>)meta.drop_port);
            } else if (meta.drop_reason == DROP_QUEUE_FULL) {
                drop_queue_full.count((bit<32>)meta.drop_port);
            } else {
                drop_local.count((bit<32>)meta.drop_port);
            }
        } else {
            if (meta.high_priority == 1) {
                standard_metadata.priority = meta.control_priority;
            } else {
                standard_metadata.priority = DATA_PRIORITY;
            }
            /* The estimate follows the data queue only (enq_qdepth / deq_qdepth count
             * the packet's own priority queue): one more packet there until egress
             * resynchronises. With control_priority = DATA_PRIORITY everything shares
             * that queue and counts. */
            if (standard_metadata.priority == DATA_PRIORITY) {
                meta.in_data_queue = 1;
                port_qdepth_est.write((bit<32>)standard_metadata.egress_spec,
                                      meta.queue_estimate + 1);
            }
            if (meta.verdict == VERDICT_PUNT) {
                hdr.cpu_in.setValid();
                hdr.cpu_in.ingress_port = standard_metadata.ingress_port;
                hdr.cpu_in._pad0 = 0;
                hdr.cpu_in.reason = meta.punt_reason;
                punted.count((bit<32>)standard_metadata.ingress_port);
            }
        }
    }
}

#endif  /* MRC_INGRESS_P4 */
