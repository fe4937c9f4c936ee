"""Errors raised by mrc_wire: a frame that is not a well-formed MRC packet, or a value
that cannot be encoded."""

from __future__ import annotations

from enum import StrEnum


class MrcWireError(Exception):
    """Base class of every error mrc_wire raises."""


class Malformation(StrEnum):
    """Why a frame was rejected; stable values that a caller may count by."""

    TOO_SHORT = "too short"
    WRONG_ETHERTYPE = "wrong ethertype"
    WRONG_IP_VERSION = "wrong IP version"
    WRONG_NEXT_HEADER = "wrong next header"
    BAD_SRH = "bad segment routing header"
    BAD_UDP_PORT = "bad UDP port"
    UNKNOWN_OPCODE = "unknown opcode"
    UNSUPPORTED_VERSION = "unsupported MRC version"
    LENGTH_MISMATCH = "lengths inconsistent"


class MalformedPacket(MrcWireError):
    """A frame that is not a well-formed MRC packet.

    ``reason`` says which check failed; the message gives the offending values.
    """

    def __init__(self, reason: Malformation, detail: str) -> None:
        super().__init__(f"malformed MRC frame ({reason.value}): {detail}")
        self.reason = reason
        self.detail = detail


class EncodeError(MrcWireError):
    """A field value that does not fit the wire format (out of range, wrong length)."""
