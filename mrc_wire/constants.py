"""Every number of the MRC wire format, defined once.

docs/wire-format.md explains each value and tags it [C] (confirmed in a primary source),
[S] (a third party's reading of the MRC spec) or [P] (this project's choice). The P4
program keeps its own copies in p4src/include/defines.p4; tests/mrc_wire/test_p4_defines.py
checks that the two agree.
"""

from __future__ import annotations

from enum import IntEnum, IntFlag

# --- Layer 2/3/4 -----------------------------------------------------------------------
ETHERTYPE_IPV6 = 0x86DD
IPPROTO_IPV6 = 41  # IPv6-in-IPv6 (outer next header without SRH, SRH next header)
IPPROTO_ROUTING = 43  # IPv6 routing extension header (SRH)
IPPROTO_UDP = 17
SRH_ROUTING_TYPE = 4  # RFC 8754 segment routing header
IPV6_VERSION = 6
MRC_UDP_PORT = 4791  # [I] RoCEv2's port; the EV's high half is the source port
UDP_CHECKSUM = 0  # [P] not computed (RFC 6936 zero checksum in a tunnel; trimming breaks it)
DEFAULT_HOP_LIMIT = 64
INNER_HOP_LIMIT = 64  # the fabric never decrements the inner header
BTH_PKEY = 0xFFFF  # [P] IB default partition key, carried but not interpreted
BTH_VERSION = 0  # [P] BTH TVer nibble; anything else is rejected

# --- Header sizes (bytes) ------------------------------------------------------------
ETH_LEN = 14
IPV6_LEN = 40
SRH_FIXED_LEN = 8
SID_LEN = 16
UDP_LEN = 8
BTH_LEN = 12
TSETH_LEN = 4
RETH_LEN = 16
IMMDT_LEN = 4
SACK_LEN = 32
NACK_LEN = 16
PROBE_LEN = 16
MAC_LEN = 6
MAX_SRH_SEGMENTS = 4  # [P] the switch parses at most this many SIDs (bounded header stack)

# Bytes a frame has before the BTH when it carries no SRH.
BASE_HEADERS_LEN = ETH_LEN + IPV6_LEN + IPV6_LEN + UDP_LEN

# --- Field widths ------------------------------------------------------------------------
PSN_BITS = 24
PSN_MASK = (1 << PSN_BITS) - 1
QPN_MASK = (1 << 24) - 1
EV_MASK = 0xFFFF_FFFF
EV_PROBE_QPN = 0x000002  # [S] reserved QPN of connectionless EV probes


class Opcode(IntEnum):
    """BTH opcodes. WRITE/WRITE_IMM reuse the IB RC 'RDMA WRITE Only' values [P]."""

    WRITE = 0x0A  # data: BTH [TSETH] RETH payload
    WRITE_IMM = 0x0B  # data, last of a message: BTH [TSETH] RETH ImmDt payload
    SACK = 0xDC  # [S]
    NACK = 0xDD  # [S]
    PROBE = 0xDE  # [S] reliability probe (peer QPN) and EV probe (QPN 0x2)


DATA_OPCODES = frozenset({Opcode.WRITE, Opcode.WRITE_IMM})


class Dscp(IntEnum):
    """Outer-IPv6 DSCP classes [S]; the code points are this project's choice [P]."""

    TRIMMABLE = 26  # AF31, the usual RoCE data code point
    TRIMMABLE_RETX = 28  # AF32: retransmitted data, still trimmable
    NO_TRIM = 30  # AF33: data the fabric must not trim
    TRIMMED = 40  # CS5: cut to its header by a fabric switch
    TRIMMED_LASTHOP = 41  # cut on the last hop (switch -> receiving NIC)
    CONTROL = 48  # CS6: SACK, NACK, probe replies


TRIMMED_DSCPS = frozenset({Dscp.TRIMMED, Dscp.TRIMMED_LASTHOP})
TRIMMABLE_DSCPS = frozenset({Dscp.TRIMMABLE, Dscp.TRIMMABLE_RETX})


class Ecn(IntEnum):
    """The two ECN bits of the traffic class (RFC 3168)."""

    NOT_ECT = 0b00
    ECT1 = 0b01
    ECT0 = 0b10
    CE = 0b11


class NackReason(IntEnum):
    """NACK reason codes, numbered as UET 1.0's PDS NACK codes [S: 'as UET']."""

    TRIMMED = 0x01
    TRIMMED_LASTHOP = 0x02
    TRIMMED_ACK = 0x03
    NO_PDC_AVAIL = 0x04
    NO_CCC_AVAIL = 0x05
    NO_BITMAP = 0x06
    NO_PKT_BUFFER = 0x07
    NO_GTD_DEL_AVAIL = 0x08
    NO_SES_MSG_AVAIL = 0x09
    NO_RESOURCE = 0x0A
    PSN_OOR_WINDOW = 0x0B
    FIRST_ROD_OOO = 0x0C
    ROD_OOO = 0x0D
    INV_DPDCID = 0x0E
    PDC_HDR_MISMATCH = 0x0F
    CLOSING = 0x10
    CLOSING_IN_ERR = 0x11
    PKT_NOT_RCVD = 0x12
    GTD_RESP_UNAVAIL = 0x13
    ACK_WITH_DATA = 0x14
    INVALID_SYN = 0x15
    PDC_MODE_MISMATCH = 0x16
    NEW_START_PSN = 0x17
    RCVD_SES_PROCG = 0x18
    UNEXP_EVENT = 0x19
    RCVR_INFER_LOSS = 0x1A


class BthFlag(IntFlag):
    """Byte 1 of the BTH (high nibble; the low nibble is the version)."""

    RTX = 0x80  # [S] retransmission
    TS = 0x40  # [S] a TSETH (transmit timestamp) follows the BTH
    LAST = 0x20  # [P] last packet of a message


BTH_ACK_REQ = 0x80  # byte 8 of the BTH, IB's AckReq bit: answer with a SACK now [P]


class SackFlag(IntFlag):
    """Byte 0 of the SACK header. Bits 0-1 are the 'M' EV-feedback field [S]."""

    ECN_ECHO = 0x01  # M = SKIP_ONCE: the triggering packet arrived CE-marked
    ALWAYS_SKIP = 0x02  # M = ALWAYS_SKIP: the receiver judges the EV's path bad
    TS_VALID = 0x04  # echoed_ts holds the triggering packet's TSETH timestamp
    PROBE_REPLY = 0x08  # this SACK answers a reliability probe


class NackFlag(IntFlag):
    """Byte 1 of the NACK header."""

    ECN_ECHO = 0x01
    TS_VALID = 0x04


class ProbeFlag(IntFlag):
    """Byte 0 of the probe header."""

    REPLY = 0x01
