/* -*- P4_16 -*- */
/*
 * mrc_switch: the T0/T1 switch of an MRC fabric (multipath RDMA over multi-plane SRv6
 * uSID fabrics, with ECN and packet trimming).
 *
 * Target: p4c --target bmv2 --arch v1model (simple_switch_grpc), and p4emu.
 *   simple_switch_grpc --priority-queues 8 --cpu-port 510 ...
 * Tables, counters and packet I/O: p4src/README.md. Wire format: docs/wire-format.md.
 * Queueing, ECN and trimming design: docs/switch-queues.md.
 *
 * Build option: -DMRC_CPU_PORT=<port> (default 510).
 */
#include <core.p4>
#include <v1model.p4>

#include "include/defines.p4"
#include "include/headers.p4"
#include "include/parser.p4"

/*
 * Packets in the data queue (priority DATA_PRIORITY) of each egress port, as ingress
 * sees it: egress writes deq_qdepth (the exact depth that queue keeps after a data
 * packet leaves), ingress adds one for every packet it puts in that queue. Shared by
 * both pipelines, hence declared at the top level. Internal state: the control plane
 * never writes it. docs/switch-queues.md section 3.
 */
register<bit<32>>(MAX_PORTS) port_qdepth_est;

#include "include/ingress.p4"
#include "include/egress.p4"

/* IPv6 has no header checksum; the UDP checksum is 0 (docs/wire-format.md). */
control MrcVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MrcComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MrcDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.cpu_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv6);
        packet.emit(hdr.srh);
        packet.emit(hdr.srh_sids);
        packet.emit(hdr.inner_ipv6);
        packet.emit(hdr.udp);
        packet.emit(hdr.bth);
        packet.emit(hdr.tseth);
        packet.emit(hdr.reth);
    }
}

V1Switch(MrcParser(),
         MrcVerifyChecksum(),
         MrcIngress(),
         MrcEgress(),
         MrcComputeChecksum(),
         MrcDeparser()) main;
