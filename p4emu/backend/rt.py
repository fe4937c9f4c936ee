"""Run-time support for generated code: the per-packet context and small helpers.

:class:`PacketContext` plays the role of BMv2's per-packet registers
(``RegisterAccess``): what the externs of one pipeline pass request (clone, resubmit,
recirculate, digest, truncate) and the lengths BMv2 tracks. The switch reads it at the
end of ingress / egress, exactly where ``simple_switch.cpp`` reads its registers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: one-iteration sequence: ``for _ in ONCE:`` lets ``return`` become ``break``
ONCE = (0,)


class ExitSignal(Exception):
    """Raised by P4 ``exit``; caught at the end of the current top-level control."""


EXIT = ExitSignal()

#: a field-list copier: ``copier(src_meta, dst_meta)`` copies the preserved fields
FieldListCopier = Callable[[object, object], None]


class PacketContext:
    """Per-packet, per-pass state that is not in the P4 program's own variables, and
    (for the switch, between ingress and egress) the packet's header, metadata and
    standard-metadata objects: what BMv2 keeps in its ``Packet``."""

    __slots__ = (
        "checksum_error",
        "clone_copier",
        "clone_session",
        "digest",
        "hdr",
        "ingress_length",
        "length_reg",
        "meta",
        "packet",
        "payload_at",
        "recirculate",
        "resubmit",
        "sm",
        "truncate",
    )

    def __init__(
        self,
        ingress_length: int = 0,
        payload: bytes = b"",
        hdr: object = None,
        meta: object = None,
        sm: object = None,
    ) -> None:
        #: BMv2 ``get_ingress_length()``: counters and meters count these bytes
        self.ingress_length = ingress_length
        #: BMv2 packet register 0: length, updated by setValid()/setInvalid()
        self.length_reg = ingress_length
        #: the unparsed payload (``*_checksum_with_payload``, the deparser's tail):
        #: ``packet``'s bytes from ``payload_at`` (:attr:`payload`, :meth:`set_payload`)
        self.packet = bytes(payload)
        self.payload_at = 0
        #: the packet's headers, metadata and standard metadata (the switch's PHV)
        self.hdr = hdr
        self.meta = meta
        self.sm = sm
        self.checksum_error = 0
        #: clone session requested by clone()/clone_preserving_field_list() (None: none)
        self.clone_session: int | None = None
        self.clone_copier: FieldListCopier | None = None
        #: resubmit / recirculate requests: the field-list copier (a no-op copier if none)
        self.resubmit: FieldListCopier | None = None
        self.recirculate: FieldListCopier | None = None
        #: (digest id, sample) of the last digest() call: the data copied at the call
        #: (p4c's temporaries), learnt at the end of ingress
        self.digest: tuple[int, tuple[int, ...]] | None = None
        #: truncate(len) request, bytes
        self.truncate: int | None = None

    def renew(self, ingress_length: int) -> None:
        """This context for a new packet of ``ingress_length`` bytes: every field as
        :meth:`__init__` sets it, but the header, metadata and standard-metadata objects
        (the caller resets those)."""
        self.ingress_length = ingress_length
        self.length_reg = ingress_length
        self.packet = b""
        self.payload_at = 0
        self.checksum_error = 0
        self.clone_session = None
        self.clone_copier = None
        self.resubmit = None
        self.recirculate = None
        self.digest = None
        self.truncate = None

    @property
    def payload(self) -> bytes:
        """The unparsed payload: ``packet``'s bytes from ``payload_at`` (a copy unless
        that is all of them)."""
        return self.packet[self.payload_at :] if self.payload_at else self.packet

    @payload.setter
    def payload(self, value: bytes) -> None:
        self.packet = bytes(value)
        self.payload_at = 0

    def set_payload(self, packet: bytes, at: int) -> None:
        """The payload is ``packet``'s bytes from ``at`` (0 <= ``at`` <= its length): not
        copied when ``packet`` is ``bytes`` (immutable: the switch's frame as it came in),
        else its tail is copied now (a buffer the caller may change later)."""
        if type(packet) is bytes:
            self.packet = packet
            self.payload_at = at
        else:
            self.packet = bytes(packet[at:])
            self.payload_at = 0

    def reset_requests(self) -> None:
        self.clone_session = None
        self.clone_copier = None
        self.resubmit = None
        self.recirculate = None
        self.digest = None


def no_fields(src: object, dst: object) -> None:
    """Field-list copier of an empty field list."""


def stack_at(stack, index: int, scratch):
    """``stack[index]`` with a run-time index; out of range gives a scratch invalid header
    (BMv2 stops with an out-of-range exception; p4emu keeps going)."""
    items = stack.items
    if 0 <= index < len(items):
        return items[index]
    scratch.valid_ = False
    return scratch


def stack_last(stack, scratch):
    """``stack.last``: the element before ``nextIndex`` (scratch invalid header if none)."""
    n = stack.nxt
    if n > 0:
        return stack.items[n - 1]
    scratch.valid_ = False
    return scratch


def div_u(a: int, b: int) -> int:
    """Unsigned ``/`` with BMv2's division by zero giving 0 instead of crashing."""
    return a // b if b else 0


def mod_u(a: int, b: int) -> int:
    return a % b if b else 0


def div_s(a: int, b: int) -> int:
    """Signed ``/`` truncating toward zero (C / BMv2 Bignum semantics); b == 0 gives 0."""
    if not b:
        return 0
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def mod_s(a: int, b: int) -> int:
    """Signed ``%`` with the sign of the dividend (C semantics); b == 0 gives 0."""
    if not b:
        return 0
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


#: v1model's ``standard_metadata_t`` fields in order (p4emu/include/v1model.p4, as
#: p4lang's v1model.p4): all ``bit<W>`` (W at most 48) but ``parser_error`` (``error``)
STANDARD_METADATA_FIELDS: tuple[str, ...] = (
    "ingress_port",
    "egress_spec",
    "egress_port",
    "instance_type",
    "packet_length",
    "enq_timestamp",
    "enq_qdepth",
    "deq_timedelta",
    "deq_qdepth",
    "ingress_global_timestamp",
    "egress_global_timestamp",
    "mcast_grp",
    "egress_rid",
    "checksum_error",
    "parser_error",
    "priority",
)


class StandardMetadata:
    """v1model's standard metadata: the base of a program's generated
    ``standard_metadata_t`` class when that struct has v1model's fields
    (:func:`p4emu.backend.pytypes.standard_metadata_problem`), so the switch reads and
    sets them in C on the compiled path (its ``.pxd``: C integers, ``parser_error`` an
    object). A program's class adds only the fields its struct has beyond these."""

    __slots__ = STANDARD_METADATA_FIELDS

    def __init__(self) -> None:
        self.ingress_port = 0
        self.egress_spec = 0
        self.egress_port = 0
        self.instance_type = 0
        self.packet_length = 0
        self.enq_timestamp = 0
        self.enq_qdepth = 0
        self.deq_timedelta = 0
        self.deq_qdepth = 0
        self.ingress_global_timestamp = 0
        self.egress_global_timestamp = 0
        self.mcast_grp = 0
        self.egress_rid = 0
        self.checksum_error = 0
        self.parser_error: object = 0
        self.priority = 0


class Blocks:
    """A program's blocks as the methods of one object: the base of the class its
    generated module defines (``ProgramBlocks``), whose methods hold the blocks' code and
    whose attributes the run-time objects one switch's blocks use (its tables, counters,
    scratch headers). On the compiled path an extension type with ``cpdef`` methods
    (its ``.pxd``): the switch calls each block through the C vtable, the parser's
    payload offset a C integer (no Python call, no argument tuple, no boxed offset).

    The parameters (``ctx`` the :class:`PacketContext`): ``hdr``, ``meta``, ``sm`` the
    program's header, metadata and standard metadata objects, ``data`` the frame."""

    __slots__ = ()

    def parse_block(self, data: Any, hdr: Any, meta: Any, sm: Any, ctx: PacketContext) -> int:
        """The parser: the payload's offset; sets ``sm.parser_error`` (0: none)."""
        raise NotImplementedError

    def verify_block(self, hdr: Any, meta: Any, ctx: PacketContext) -> None:
        """The verify-checksum control (sets ``ctx.checksum_error``)."""
        raise NotImplementedError

    def ingress_block(self, hdr: Any, meta: Any, sm: Any, ctx: PacketContext) -> None:
        raise NotImplementedError

    def egress_block(self, hdr: Any, meta: Any, sm: Any, ctx: PacketContext) -> None:
        raise NotImplementedError

    def compute_block(self, hdr: Any, meta: Any, ctx: PacketContext) -> None:
        raise NotImplementedError

    def deparse_block(self, hdr: Any, ctx: PacketContext) -> bytes:
        """The deparser: the emitted headers, in order, then the payload."""
        raise NotImplementedError

    def init_packet(self, hdr: Any, meta: Any, sm: Any) -> None:
        """The three objects back to the state of new ones (in place)."""
        raise NotImplementedError
