"""Errors raised by p4emu's runtime primitives and run-time objects.

Tables, externs, queues, PRE, action profiles, value sets, controller packet headers.
Every error a user can cause (a bad table entry, a bad index from the control plane, a
bad action profile member...) is a subclass of :class:`RuntimeP4Error` and carries a specific,
human-readable message. Errors that a *packet* causes inside the data plane (a register
index out of range, a packet too short for a header) follow BMv2 instead: they are
logged or reported to the parser, never raised into the pipeline, except
:class:`PacketTooShort`, which the parser catches to set ``parser_error``.
"""

from __future__ import annotations

from p4emu.exceptions import P4EmuError


class RuntimeP4Error(P4EmuError):
    """Base class of every error raised by ``p4emu.runtime``."""


# --- packet buffers ---------------------------------------------------------------------


class PacketTooShort(RuntimeP4Error):
    """The packet ends before the bits a header (or varbit field) needs.

    BMv2 semantics: the parser stops, sets ``standard_metadata.parser_error`` to
    ``error.PacketTooShort`` and keeps the headers extracted so far valid.
    """

    def __init__(self, needed_bits: int, available_bits: int, what: str = "header") -> None:
        self.needed_bits = needed_bits
        self.available_bits = available_bits
        super().__init__(
            f"packet too short for {what}: needs {needed_bits} bits from the cursor, "
            f"only {available_bits} left"
        )


class HeaderTooShort(RuntimeP4Error):
    """A varbit field's run-time size exceeds its declared maximum (``error.HeaderTooShort``)."""

    def __init__(self, size_bits: int, max_bits: int) -> None:
        self.size_bits = size_bits
        self.max_bits = max_bits
        super().__init__(f"varbit size {size_bits} bits exceeds the declared maximum {max_bits}")


class FieldValueError(RuntimeP4Error):
    """A value does not fit the declared bit width of the field it is written to."""


class HeaderLayoutError(RuntimeP4Error):
    """A header layout (list of field widths) is unusable (empty, zero or negative width)."""


# --- tables -----------------------------------------------------------------------------


class TableError(RuntimeP4Error):
    """Base class of table errors; ``table`` names the table."""

    def __init__(self, table: str, message: str) -> None:
        self.table = table
        super().__init__(f"table {table}: {message}")


class TableDefinitionError(TableError):
    """A table's key declaration is not supported (e.g. two lpm fields outside a ternary table)."""


class InvalidEntryError(TableError):
    """An entry is malformed: wrong key arity, value out of range, bits outside the mask,
    missing/forbidden priority, action not allowed in this scope..."""


class DuplicateEntryError(TableError):
    """An entry with the same match key (and priority) already exists (P4Runtime ALREADY_EXISTS)."""


class EntryNotFoundError(TableError):
    """No entry has this match key (P4Runtime NOT_FOUND)."""


class TableFullError(TableError):
    """The table already holds ``size`` entries; BMv2 rejects further inserts."""


class ConstEntryError(TableError):
    """The entry (or the whole table, for ``const entries``) is immutable."""


class ConstDefaultActionError(TableError):
    """The table's default action is declared ``const`` and cannot be changed."""


# --- externs ----------------------------------------------------------------------------


class ExternError(RuntimeP4Error):
    """Base class of extern errors caused by the control plane (bad index, bad config)."""


class ExternIndexError(ExternError):
    """A control-plane read/write used an index outside ``[0, size)``."""

    def __init__(self, kind: str, name: str, index: int, size: int) -> None:
        self.index = index
        self.size = size
        super().__init__(f"{kind} {name}: index {index} out of range [0, {size})")


class MeterConfigError(ExternError):
    """A meter configuration is invalid (negative rate/burst, PIR below CIR...)."""


class LogMsgFormatError(ExternError):
    """A ``log_msg`` format string does not match its argument list."""


class HashError(RuntimeP4Error):
    """An unknown hash algorithm or an invalid custom CRC configuration."""


# --- traffic manager --------------------------------------------------------------------


class TrafficManagerError(RuntimeP4Error):
    """A traffic-manager configuration is invalid (negative depth, bad priority count...)."""


# --- packet replication engine ----------------------------------------------------------


class PreError(RuntimeP4Error):
    """Base class of packet replication engine errors."""


class PreEntryExistsError(PreError):
    """A multicast group or clone session with this id already exists (ALREADY_EXISTS)."""


class PreEntryNotFoundError(PreError):
    """No multicast group / clone session / node with this id (NOT_FOUND)."""


class PreInvalidEntryError(PreError):
    """An id out of range, a duplicate replica, a bad port... (INVALID_ARGUMENT)."""


# --- action profiles / selectors ----------------------------------------------------------


class ActionProfileError(RuntimeP4Error):
    """Base of action profile errors; ``profile`` names the profile."""

    def __init__(self, profile: str, message: str) -> None:
        self.profile = profile
        super().__init__(f"action profile {profile}: {message}")


class MemberExistsError(ActionProfileError):
    """A member or group with this id already exists (P4Runtime ALREADY_EXISTS)."""


class MemberNotFoundError(ActionProfileError):
    """No member / group with this id (P4Runtime NOT_FOUND)."""


class MemberInUseError(ActionProfileError):
    """A member or group is still referenced by a table entry or a group (FAILED_PRECONDITION)."""


class InvalidMemberError(ActionProfileError):
    """A bad member/group: unknown action, bad arguments, group too large (INVALID_ARGUMENT)."""


class ProfileFullError(ActionProfileError):
    """The profile already holds ``size`` members (RESOURCE_EXHAUSTED)."""


# --- value sets ---------------------------------------------------------------------------


class ValueSetError(RuntimeP4Error):
    """A bad value set write: wrong arity, value too wide, set full (``value_set`` named)."""

    def __init__(self, value_set: str, message: str) -> None:
        self.value_set = value_set
        super().__init__(f"value set {value_set}: {message}")


class ValueSetFullError(ValueSetError):
    """The value set already holds ``size`` entries (RESOURCE_EXHAUSTED)."""


# --- controller packet metadata -----------------------------------------------------------


class ControllerHeaderError(RuntimeP4Error):
    """A packet_out metadata dict or a packet_in frame does not fit the controller header."""
