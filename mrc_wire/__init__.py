"""mrc_wire: the MRC wire format (docs/wire-format.md).

- ``mrc_wire.constants``: every port, opcode, DSCP code point, NACK reason and size.
- ``mrc_wire.codec``: fast struct codec (``decode``, ``encode_*``). Re-exported here.
- ``mrc_wire.frames``: readers of single fields of an encoded frame, in place (a fabric's
  per-hop counters); import it explicitly.
- ``mrc_wire.reference``: reference models of the switch rewrites (``trim_frame``,
  ``mark_ce``). Re-exported here.
- ``mrc_wire.scapy_layers``: scapy dissectors; import it explicitly (it pulls in scapy).
"""

from __future__ import annotations

from mrc_wire.codec import (
    DataPacket,
    Envelope,
    Message,
    Nack,
    Probe,
    Sack,
    decode,
    encode,
    encode_data,
    encode_nack,
    encode_probe,
    encode_sack,
    header_length,
    ipv6_bytes,
)
from mrc_wire.constants import (
    EV_PROBE_QPN,
    MRC_UDP_PORT,
    Dscp,
    Ecn,
    NackReason,
    Opcode,
)
from mrc_wire.exceptions import EncodeError, Malformation, MalformedPacket, MrcWireError
from mrc_wire.reference import mark_ce, trim_frame

__all__ = [
    "EV_PROBE_QPN",
    "MRC_UDP_PORT",
    "DataPacket",
    "Dscp",
    "Ecn",
    "EncodeError",
    "Envelope",
    "Malformation",
    "MalformedPacket",
    "Message",
    "MrcWireError",
    "Nack",
    "NackReason",
    "Opcode",
    "Probe",
    "Sack",
    "decode",
    "encode",
    "encode_data",
    "encode_nack",
    "encode_probe",
    "encode_sack",
    "header_length",
    "ipv6_bytes",
    "mark_ce",
    "trim_frame",
]
