/*
 * mrc_switch: constants.
 *
 * The wire-format values below mirror mrc_wire/constants.py (the project's single
 * source of truth, docs/wire-format.md); tests/mrc_wire/test_p4_defines.py fails if
 * the two disagree. Switch defaults are explained in docs/switch-queues.md.
 */
#ifndef MRC_DEFINES_P4
#define MRC_DEFINES_P4

/* CPU port: simple_switch_grpc must be started with the same --cpu-port. */
#ifndef MRC_CPU_PORT
#define MRC_CPU_PORT 510
#endif

#define MAX_PORTS 512
#define MAX_PLANES 16
#define MAX_SRH_SIDS 4

typedef bit<9>   port_t;
typedef bit<48>  mac_t;
typedef bit<128> ipv6_addr_t;

const port_t CPU_PORT = MRC_CPU_PORT;

/* ---- Wire format (mirrors mrc_wire.constants) ---------------------------------- */
const bit<16> ETHERTYPE_IPV6   = 0x86DD;
const bit<8>  IPPROTO_IPV6     = 41;
const bit<8>  IPPROTO_ROUTING  = 43;
const bit<8>  IPPROTO_UDP      = 17;
const bit<8>  SRH_ROUTING_TYPE = 4;
const bit<16> MRC_UDP_PORT     = 4791;

const bit<8>  OP_WRITE     = 0x0A;
const bit<8>  OP_WRITE_IMM = 0x0B;
const bit<8>  OP_SACK      = 0xDC;
const bit<8>  OP_NACK      = 0xDD;
const bit<8>  OP_PROBE     = 0xDE;

const bit<6>  DSCP_TRIMMABLE       = 26;
const bit<6>  DSCP_TRIMMABLE_RETX  = 28;
const bit<6>  DSCP_NO_TRIM         = 30;
const bit<6>  DSCP_TRIMMED         = 40;
const bit<6>  DSCP_TRIMMED_LASTHOP = 41;
const bit<6>  DSCP_CONTROL         = 48;

const bit<2>  ECN_NOT_ECT = 0;
const bit<2>  ECN_ECT1    = 1;
const bit<2>  ECN_ECT0    = 2;
const bit<2>  ECN_CE      = 3;

const bit<16> ETH_LEN       = 14;
const bit<16> IPV6_LEN      = 40;
const bit<16> SRH_FIXED_LEN = 8;
const bit<16> UDP_LEN       = 8;
const bit<16> BTH_LEN       = 12;
const bit<16> TSETH_LEN     = 4;
const bit<16> RETH_LEN      = 16;

/* ---- Port classes (egress_port_config.port_class) -------------------------------- */
const bit<2>  PORT_CLASS_FABRIC = 0;   /* switch-to-switch link: ECN on, trim TRIMMED   */
const bit<2>  PORT_CLASS_HOST   = 1;   /* last hop to a NIC: ECN off, trim TRIMMED_LASTHOP */
const bit<2>  PORT_CLASS_CPU    = 2;   /* controller / management: no ECN, no trimming  */

/* ---- Built-in per-class defaults (overridden by table port_class_params) ---------- */
/* Queue depths are in packets (BMv2 enq_qdepth); see docs/switch-queues.md. */
const bit<16> DEFAULT_ECN_MIN_QDEPTH = 10;
const bit<16> DEFAULT_ECN_MAX_QDEPTH = 38;
const bit<16> DEFAULT_ECN_MAX_PROB   = 0xFFFF;  /* marking probability x 65536 at max */
const bit<16> DEFAULT_TRIM_QDEPTH    = 48;
const bit<16> DEFAULT_QUEUE_LIMIT    = 60;

/* ---- Queues (standard_metadata.priority; simple_switch --priority-queues 8) ------ */
const bit<3>  DATA_PRIORITY            = 0;
const bit<3>  DEFAULT_CONTROL_PRIORITY = 7;

/* ---- Ingress verdicts, drop reasons and packet_in reasons ------------------------ */
const bit<2>  VERDICT_FORWARD = 0;     /* egress_spec chosen by the routing tables      */
const bit<2>  VERDICT_DROP    = 1;
const bit<2>  VERDICT_PUNT    = 2;     /* to CPU_PORT with a packet_in header           */
const bit<2>  VERDICT_PINNED  = 3;     /* packet_out sent as-is to packet_out.egress_port */

const bit<3>  DROP_NONE         = 0;
const bit<3>  DROP_PARSER_ERROR = 1;
const bit<3>  DROP_NO_ROUTE     = 2;
const bit<3>  DROP_HOP_LIMIT    = 3;
const bit<3>  DROP_PORT_DOWN    = 4;
const bit<3>  DROP_QUEUE_FULL   = 5;
const bit<3>  DROP_LOCAL        = 6;

const bit<8>  PUNT_NONE           = 0;
const bit<8>  PUNT_END_OF_CARRIER = 1;  /* addressed to this switch (uSID / SID)       */
const bit<8>  PUNT_NO_ROUTE       = 2;
const bit<8>  PUNT_HOP_LIMIT      = 3;
const bit<8>  PUNT_NON_IPV6       = 4;
const bit<8>  PUNT_ROUTE_TO_CPU   = 5;  /* an ipv6_route / usid_route entry says to_cpu */

/* ---- Endpoint plan chosen in ingress before any header is rewritten -------------- */
const bit<3>  PLAN_TRANSIT  = 0;  /* not for me: LPM on the outer destination          */
const bit<3>  PLAN_USID_UN  = 1;  /* my uSID, more follow: shift, usid_route            */
const bit<3>  PLAN_USID_END = 2;  /* my uSID ends the carrier, SRH SL > 0: SRH End      */
const bit<3>  PLAN_SID_END  = 3;  /* my full SID, SRH SL > 0: SRH End, LPM on new DA    */
const bit<3>  PLAN_LOCAL    = 4;  /* addressed to me, nothing left to do: CPU or drop   */

#endif  /* MRC_DEFINES_P4 */
