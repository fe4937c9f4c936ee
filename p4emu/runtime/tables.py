"""Match-action tables with BMv2 / P4Runtime semantics.

A :class:`Table` is built once from its key fields (name, width, match kind). Its lookup
strategy follows the BMv2 table type (p4lang/behavioral-model/docs/simple_switch.md, "Table match kinds supported"):

- **exact** (only exact keys): one dict keyed by the tuple of key values.
- **lpm** (one lpm key, the rest exact): one dict per prefix length, scanned from the
  longest present prefix down; the longest matching prefix wins (no priorities).
- **priority** (any ternary / range / optional key; lpm keys then act as ternary): a list
  sorted by priority, rebuilt lazily after a change. The key is packed into one integer
  so ternary/lpm/exact fields are checked with a single ``(K & M) == V``; range fields
  are checked separately. **Larger priority wins** (P4Runtime); entries of equal priority
  are tried in insertion order, so the earliest inserted wins. (BMv2 picks the lowest
  entry handle, which is the same while no entry was deleted; P4Runtime leaves overlaps
  of equal priority unspecified.)
- **keyless**: every lookup misses.

Match values passed in by callers (the P4Runtime server, the STF runner, the backend for
program entries) are :class:`Exact`, :class:`Lpm`, :class:`Ternary`, :class:`Range`,
:class:`OptionalMatch`, or ``None`` for "don't care" (a P4Runtime field left out; not
allowed for exact keys). They are validated and canonicalized: a ternary with mask 0, an
lpm of prefix 0, a full range and a wildcard optional are all stored as "don't care", so
two spellings of the same key collide (ALREADY_EXISTS) and read back identically
(:meth:`Table.match_of` gives ``None`` for them).

P4Runtime rules enforced by ``insert(..., strict=True)``: ternary/lpm values may not have
bits outside the mask/prefix (``strict=False`` masks them, as BMv2's CLI does); tables
with ternary/range/optional keys need a priority >= 1, other tables priority 0; at most
``size`` entries (:class:`TableFullError`, as BMv2); actions must be allowed in the table
and in the right scope (``@tableonly`` / ``@defaultonly``).

Per packet, the backend calls :meth:`Table.apply` with the tuple of key values and the
packet length. It returns the hit :class:`TableEntry` or the table's
:class:`DefaultAction`; both expose ``hit``, ``action_id`` and ``args``. A hit updates the
entry's direct counter (BMv2 counts every hit, whether or not the action calls
``count()``) and its last-hit time for idle timeouts. Nothing is allocated per lookup.
"""

from __future__ import annotations

import enum
import functools
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cython

from p4emu.runtime.clock import Clock
from p4emu.runtime.exceptions import (
    ConstDefaultActionError,
    ConstEntryError,
    DuplicateEntryError,
    EntryNotFoundError,
    InvalidEntryError,
    TableDefinitionError,
    TableFullError,
)
from p4emu.runtime.externs import GREEN, DirectCounter, DirectMeter, MeterCell, MeterConfig

if cython.compiled:
    from cython.cimports.cpython.bytearray import PyByteArray_AS_STRING

#: p4c gives a table without a ``size`` property 1024 entries.
DEFAULT_TABLE_SIZE = 1024


class MatchKind(enum.Enum):
    exact = "exact"
    lpm = "lpm"
    ternary = "ternary"
    range = "range"
    optional = "optional"


class ActionScope(enum.Enum):
    """Where an action may be used (P4Info ``ActionRef.Scope``)."""

    table_and_default = "TABLE_AND_DEFAULT"
    table_only = "TABLE_ONLY"
    default_only = "DEFAULT_ONLY"


@dataclass(frozen=True)
class KeyField:
    """One field of a table's key: control-plane name, width in bits and match kind."""

    name: str
    width: int
    match_kind: MatchKind


# --- match values given by callers ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Exact:
    """An exact match value."""

    value: int


@dataclass(frozen=True, slots=True)
class Lpm:
    """A longest-prefix match: the value and its prefix length in bits."""

    value: int
    prefix_len: int


@dataclass(frozen=True, slots=True)
class Ternary:
    """A ternary match: the value and its mask (the bits that must match)."""

    value: int
    mask: int


@dataclass(frozen=True, slots=True)
class Range:
    """A range match: ``low`` to ``high``, both included."""

    low: int
    high: int


@dataclass(frozen=True, slots=True)
class OptionalMatch:
    """An ``optional`` match of one value (``None`` in its place is the wildcard)."""

    value: int


MatchValue = Exact | Lpm | Ternary | Range | OptionalMatch | None


# --- entries --------------------------------------------------------------------------


#: TableAction._c_id_src before its first copy: an object no action id is
_UNREAD: object = object()


class TableAction:
    """What a lookup gives generated code: an action and its arguments (a hit's
    :class:`TableEntry` or a miss's :class:`DefaultAction`; one base class, so that the
    native build reads both as one C struct). ``hit`` is True for an entry and False for
    a default action: a field of the instance (a C ``bint`` compiled, read per lookup by
    generated code), set once by the subclass."""

    __slots__ = (
        "_c_args",
        "_c_id",
        "_c_id_src",
        "_c_ok",
        "_c_src",
        "action_id",
        "args",
        "hit",
        "is_const",
    )

    def __init__(self, action_id: int, args: tuple[int, ...], is_const: bool) -> None:
        self.action_id = action_id
        self.args = args
        self.is_const = is_const
        self.hit = False
        # c_args' copy of args as C long longs (compiled generated code reads it): made at
        # the first read, and again whenever args is no longer the tuple it copied (the
        # native build also keeps a pointer to it, _c_argp, NULL without a copy)
        self._c_src: object = None
        self._c_args: bytearray | None = None
        self._c_ok = False
        # c_action_id's copy of action_id and the object it was read from: compiled
        # generated code reads _c_id while _c_id_src is action_id (the control plane may
        # replace action_id: the next read copies it again); none yet: no action id is
        # _UNREAD (None is not: it would read as 0 instead of raising)
        self._c_id_src: object = _UNREAD
        self._c_id = 0

    def c_action_id(self) -> int:
        """For compiled generated code: ``action_id`` as a C ``long long`` (raising as that
        conversion does: ``TypeError``, ``OverflowError``), kept in ``_c_id`` with the
        object it was read from. Generated code reads ``_c_id`` itself while
        ``_c_id_src is action_id`` (one comparison, no call), this method otherwise."""
        value: cython.longlong = self.action_id
        self._c_id = value
        self._c_id_src = self.action_id
        return value

    def c_args(self) -> Any:
        """For compiled generated code (compiled only): ``args`` as C ``long long`` values (a pointer to
        them), or NULL when ``args`` is not a tuple of ints within 64 signed bits (the
        code then unpacks ``args`` as before). The copy is made again whenever ``args``
        was replaced (an entry's action modified): it is kept with the tuple it copies,
        which cannot change. Pure, :meth:`c_arg_values` says what it holds. Generated
        code reads the pointer kept with the copy (``_c_argp``) itself while ``_c_src is
        args`` (one comparison, no call), this method otherwise."""
        if self._c_src is not self.args:
            self._c_copy()
        if not self._c_ok:
            return cython.NULL
        return cython.cast(
            cython.pointer(cython.longlong),
            PyByteArray_AS_STRING(self._c_args),  # type: ignore[arg-type]
        )

    def c_arg_values(self) -> tuple[int, ...] | None:
        """The values :meth:`c_args` gives (None: NULL), on both paths."""
        if self._c_src is not self.args:
            self._c_copy()
        if not self._c_ok:
            return None
        return struct.unpack(f"={len(self.args)}q", bytes(self._c_args))  # type: ignore[arg-type]

    def _c_copy(self) -> None:
        args = self.args
        self._c_src = args
        ok = type(args) is tuple
        if ok:
            for value in args:
                if type(value) is not int or not LL_MIN <= value <= LL_MAX:
                    ok = False
                    break
        self._c_ok = ok
        if not ok:
            self._c_args = None
            if cython.compiled:
                self._c_argp = cython.NULL
            return
        self._c_args = bytearray(struct.pack(f"={len(args)}q", *args))
        if cython.compiled:
            self._c_argp = cython.cast(
                cython.pointer(cython.longlong),
                PyByteArray_AS_STRING(self._c_args),  # type: ignore[arg-type]
            )


class TableEntry(TableAction):
    """An installed entry. ``key`` is the canonical match; read the rest as attributes.

    ``packets``/``bytes``: direct counter cells; ``meter``: direct meter cell or None;
    ``idle_timeout_ns``/``last_hit_ns``: P4Runtime idle timeout state.
    """

    __slots__ = (
        "bytes",
        "control_cache",
        "controller_metadata",
        "idle_notified",
        "idle_timeout_ns",
        "key",
        "last_hit_ns",
        "metadata",
        "meter",
        "packets",
        "priority",
        "seq",
    )

    def __init__(
        self,
        key: tuple[tuple[int, int], ...],
        priority: int,
        action_id: int,
        args: tuple[int, ...],
        seq: int,
    ) -> None:
        TableAction.__init__(self, action_id, args, False)
        self.hit = True
        self.key = key
        self.priority = priority
        self.seq = seq
        self.packets = 0
        self.bytes = 0
        self.meter: MeterCell | None = None
        self.idle_timeout_ns = 0
        self.last_hit_ns = 0
        self.idle_notified = False
        self.controller_metadata = 0
        self.metadata = b""
        # Opaque to the table: the control plane may keep data derived from the entry
        # here (P4Runtime keeps its encoding, checked against the fields it came from).
        self.control_cache: object = None

    def __repr__(self) -> str:
        return (
            f"TableEntry(key={self.key!r}, priority={self.priority}, "
            f"action_id={self.action_id}, args={self.args!r})"
        )


class DefaultAction(TableAction):
    """The action a miss runs (``hit`` is False)."""

    __slots__ = ()

    def __init__(self, action_id: int, args: tuple[int, ...], is_const: bool = False) -> None:
        TableAction.__init__(self, action_id, args, is_const)

    def __repr__(self) -> str:
        return f"DefaultAction(action_id={self.action_id}, args={self.args!r})"


@dataclass(frozen=True)
class ProgramEntry:
    """An entry of the program's ``entries``/``const entries`` table property."""

    match: Sequence[MatchValue]
    action_id: int
    args: tuple[int, ...] = ()
    priority: int | None = None
    is_const: bool = True


LookupResult = TableEntry | DefaultAction

#: the widest key field :meth:`Table.exact_at` takes (its values are C ``long long``s)
C_KEY_BITS = 63
#: the values :meth:`TableAction.c_args` holds (C ``long long``)
LL_MIN = -(2**63)
LL_MAX = 2**63 - 1
#: the C map of :meth:`Table.exact_at` holds at least this many slots, and at least twice
#: its entries (linear probing at a load of at most one half)
C_MAP_MIN_SLOTS = 8
#: 2**64 / the golden ratio, odd: the multiplier of the C map's Fibonacci hashing
_GOLDEN = 0x9E3779B97F4A7C15


class _Kind(enum.Enum):
    keyless = "keyless"
    exact = "exact"
    lpm = "lpm"
    priority = "priority"


class Table:
    """A match-action table; see the module docstring for semantics."""

    def __init__(
        self,
        name: str,
        key: Sequence[KeyField],
        size: int = DEFAULT_TABLE_SIZE,
        *,
        default_action: tuple[int, Sequence[int]] | None = None,
        const_default_action: bool = False,
        const_entries: bool = False,
        allowed_actions: Mapping[int, ActionScope] | None = None,
        action_param_widths: Mapping[int, Sequence[int]] | None = None,
        direct_counter: DirectCounter | None = None,
        direct_meter: DirectMeter | None = None,
        supports_idle_timeout: bool = False,
        clock: Clock | None = None,
    ) -> None:
        self.name = name
        self.key_fields = tuple(key)
        if size < 0:
            raise TableDefinitionError(name, f"size must not be negative, got {size}")
        self.size = size
        self.const_entries = const_entries
        self.allowed_actions = dict(allowed_actions) if allowed_actions is not None else None
        self.action_param_widths = (
            {a: tuple(w) for a, w in action_param_widths.items()}
            if action_param_widths is not None
            else None
        )
        self.direct_counter = direct_counter
        self.direct_meter = direct_meter
        self.supports_idle_timeout = supports_idle_timeout
        if (direct_meter is not None or supports_idle_timeout) and clock is None:
            raise TableDefinitionError(name, "direct meters and idle timeouts need a clock")
        self.clock = clock
        for f in self.key_fields:
            if f.width <= 0:
                raise TableDefinitionError(name, f"key field {f.name} has width {f.width}")

        kinds = [f.match_kind for f in self.key_fields]
        self.requires_priority = any(
            k in (MatchKind.ternary, MatchKind.range, MatchKind.optional) for k in kinds
        )
        lpm_count = kinds.count(MatchKind.lpm)
        if not self.key_fields:
            self._kind = _Kind.keyless
        elif self.requires_priority:
            self._kind = _Kind.priority
        elif lpm_count > 1:
            raise TableDefinitionError(
                name, "a table without ternary/range keys may have at most one lpm key"
            )
        elif lpm_count == 1:
            self._kind = _Kind.lpm
        else:
            self._kind = _Kind.exact

        self._entries: dict[tuple[tuple[tuple[int, int], ...], int], TableEntry] = {}
        self._seq = 0
        self._exact: dict[object, TableEntry] = {}
        self._lpm_index = kinds.index(MatchKind.lpm) if self._kind is _Kind.lpm else -1
        self._lpm: dict[int, dict[object, TableEntry]] = {}
        self._lpm_scan: list[tuple[int, dict[object, TableEntry]]] = []
        self._sorted: list[tuple[int, int, tuple[tuple[int, int, int], ...], TableEntry]] = []
        self._dirty = False
        self._pack = _compile_packer(tuple(f.width for f in self.key_fields))
        self._field_shifts = _shifts([f.width for f in self.key_fields])
        self._count = direct_counter is not None
        self._track_hits = supports_idle_timeout
        # exact_at's C map (compiled only): slot i holds the key _c_keys[i] (a C long long,
        # -1: empty) and its entry _c_values[i]; rebuilt from _exact at the first lookup
        # after any change (_c_stale)
        self._c_keys = bytearray()
        self._c_values: list[TableEntry | None] = []
        self._c_shift = 64
        self._c_mask = 0  # len(_c_values) - 1 once built: the probe's wrap
        self._c_stale = True

        if default_action is None:
            # P4: a table without default_action runs NoAction; the backend passes its id.
            self._initial_default = DefaultAction(0, (), const_default_action)
        else:
            action_id, args = default_action
            self._initial_default = DefaultAction(action_id, tuple(args), const_default_action)
        #: what a miss gives: the current default action (generated code reads it)
        self.miss: DefaultAction = self._initial_default
        self._lookup: Callable[[Sequence[int]], TableEntry | None] = {
            _Kind.keyless: self._lookup_keyless,
            _Kind.exact: self._lookup_exact,
            _Kind.lpm: self._lookup_lpm,
            _Kind.priority: self._lookup_priority,
        }[self._kind]

    # --- packet path ------------------------------------------------------------------

    def apply(self, key: Sequence[int], length: int = 0) -> LookupResult:
        """Look up ``key`` (one int per key field, in order) for a packet of ``length`` bytes."""
        entry = self._lookup(key)
        if entry is None:
            return self.miss
        if self._count:
            entry.packets += 1
            entry.bytes += length
        if self._track_hits:
            entry.last_hit_ns = self.clock.now_ns()  # type: ignore[union-attr]
            entry.idle_notified = False
        return entry

    def packet_dict(self) -> dict[object, TableEntry] | None:
        """For generated code: the dictionary of an exact table without a direct counter
        or idle timeout, entries by key tuple, or by the key's value for a table of one
        key field (no tuple made per lookup); ``dict.get(key) or table.miss`` is then
        what :meth:`apply` gives. None for other tables."""
        if self._kind is _Kind.exact and not self._count and not self._track_hits:
            return self._exact  # type: ignore[return-value]
        return None

    def exact_key_bits(self) -> int:
        """For generated code: the width of the key field of a table :meth:`packet_dict`
        serves that has one key field, else 0. :meth:`exact_at` takes such a key up to
        :data:`C_KEY_BITS` wide."""
        if self.packet_dict() is None or len(self.key_fields) != 1:
            return 0
        return self.key_fields[0].width

    @cython.boundscheck(False)  # a slot index is masked below len(_c_values)
    @cython.wraparound(False)
    @cython.boundscheck(False)  # compiled: every slot index is masked into the map
    @cython.wraparound(False)
    def exact_at(self, key: int) -> TableAction:
        """For generated code: ``packet_dict().get(key) or self.miss`` of a table whose
        :meth:`exact_key_bits` is at most :data:`C_KEY_BITS` (``key``: a value of that
        field, non-negative and below 2**63). Compiled, found in a C map kept from
        ``_exact`` (rebuilt after a change: the control plane writes, packets read), with
        no Python int made or hashed; pure, the dictionary."""
        if cython.compiled:
            if key < 0:  # no entry's (the empty slots' -1 included)
                return self.miss
            if self._c_stale:
                self._c_rebuild()
            keys = self._c_keyp  # _c_keys' bytes: no reference taken per lookup
            mask = self._c_mask
            at = cython.cast(
                cython.Py_ssize_t,
                (cython.cast(cython.ulonglong, key) * _GOLDEN) >> self._c_shift,
            )
            while True:
                found = keys[at]
                if found == key:
                    return cython.cast(TableAction, self._c_values[at])
                if found < 0:
                    return self.miss
                at = (at + 1) & mask
        entry = self._exact.get(key)
        return entry if entry is not None else self.miss

    def _c_rebuild(self) -> None:
        """exact_at's C map from ``_exact`` (compiled only): the fewest slots, a power of
        two, of at least :data:`C_MAP_MIN_SLOTS` and twice the entries; each entry at its
        hash's slot or the next free one."""
        slots = C_MAP_MIN_SLOTS
        shift = 64 - (C_MAP_MIN_SLOTS.bit_length() - 1)
        while slots < 2 * len(self._exact):
            slots *= 2
            shift -= 1
        keys_buffer = bytearray(b"\xff" * (8 * slots))  # every key -1: empty
        values: list[TableEntry | None] = [None] * slots
        if cython.compiled:
            keys = cython.cast(cython.pointer(cython.longlong), PyByteArray_AS_STRING(keys_buffer))
            for value, entry in self._exact.items():
                key = value
                at = cython.cast(
                    cython.Py_ssize_t, (cython.cast(cython.ulonglong, key) * _GOLDEN) >> shift
                )
                while keys[at] >= 0:
                    at = (at + 1) & (slots - 1)
                keys[at] = key
                values[at] = entry
        self._c_keys = keys_buffer
        if cython.compiled:  # kept with the buffer, which is never resized
            self._c_keyp = cython.cast(
                cython.pointer(cython.longlong),
                PyByteArray_AS_STRING(keys_buffer),  # type: ignore[arg-type]
            )
        self._c_values = values
        self._c_shift = shift
        self._c_mask = slots - 1
        self._c_stale = False

    def lookup(self, key: Sequence[int]) -> TableEntry | None:
        """Pure lookup: the matching entry or None; no counters or hit times updated."""
        return self._lookup(key)

    def direct_meter_color(self, result: LookupResult, length: int, unchanged: int = GREEN) -> int:
        """Execute the hit entry's direct meter; on a miss return ``unchanged``.

        BMv2 does not support direct meters on the default entry and leaves the
        destination untouched on a miss.
        """
        meter = result.meter if result.hit else None  # type: ignore[union-attr]
        if meter is None:
            return unchanged
        return meter.execute(self.clock.now_ns(), length)  # type: ignore[union-attr]

    def _lookup_keyless(self, key: Sequence[int]) -> TableEntry | None:
        return None

    def _lookup_exact(self, key: Sequence[int]) -> TableEntry | None:
        if len(key) == 1:  # one key field: entries by its value (_exact_key)
            return self._exact.get(key[0])
        return self._exact.get(tuple(key))

    def _lookup_lpm(self, key: Sequence[int]) -> TableEntry | None:
        if len(key) == 1:
            value = key[0]
            for mask, bucket in self._lpm_scan:
                entry = bucket.get(value & mask)
                if entry is not None:
                    return entry
            return None
        index = self._lpm_index
        value = key[index]
        probe = list(key)
        for mask, bucket in self._lpm_scan:
            probe[index] = value & mask
            entry = bucket.get(tuple(probe))
            if entry is not None:
                return entry
        return None

    def _lookup_priority(self, key: Sequence[int]) -> TableEntry | None:
        if self._dirty:
            self._rebuild()
        packed = self._pack(key)
        for value, mask, ranges, entry in self._sorted:
            if packed & mask == value:
                if ranges:
                    for index, low, high in ranges:
                        if not low <= key[index] <= high:
                            break
                    else:
                        return entry
                    continue
                return entry
        return None

    # --- control plane: entries -------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[TableEntry]:
        return iter(list(self._entries.values()))

    def entries(self) -> list[TableEntry]:
        """All entries in insertion order."""
        return list(self._entries.values())

    def insert(
        self,
        match: Sequence[MatchValue],
        action_id: int,
        args: Sequence[int] = (),
        *,
        priority: int = 0,
        idle_timeout_ns: int = 0,
        counter: tuple[int, int] | None = None,
        meter_config: MeterConfig | None = None,
        controller_metadata: int = 0,
        metadata: bytes = b"",
        strict: bool = True,
    ) -> TableEntry:
        """Add an entry (P4Runtime INSERT). Raises a :class:`TableError` subclass."""
        if self.const_entries:
            raise ConstEntryError(self.name, "entries are const (declared with 'const entries')")
        return self._insert(
            match,
            action_id,
            tuple(args),
            priority=priority,
            idle_timeout_ns=idle_timeout_ns,
            counter=counter,
            meter_config=meter_config,
            controller_metadata=controller_metadata,
            metadata=metadata,
            strict=strict,
            is_const=False,
        )

    def install_program_entries(self, entries: Sequence[ProgramEntry]) -> list[TableEntry]:
        """Install the program's ``entries`` / ``const entries`` (before any control plane).

        For priority tables, entries without an explicit priority get decreasing
        priorities in program order (the first entry wins), as p4c and BMv2 do.
        """
        count = len(entries)
        installed = []
        for position, program_entry in enumerate(entries):
            priority = program_entry.priority
            if priority is None:
                priority = count - position if self.requires_priority else 0
            installed.append(
                self._insert(
                    program_entry.match,
                    program_entry.action_id,
                    tuple(program_entry.args),
                    priority=priority,
                    idle_timeout_ns=0,
                    counter=None,
                    meter_config=None,
                    controller_metadata=0,
                    metadata=b"",
                    strict=True,
                    is_const=program_entry.is_const or self.const_entries,
                )
            )
        return installed

    def modify(
        self,
        match: Sequence[MatchValue],
        action_id: int,
        args: Sequence[int] = (),
        *,
        priority: int = 0,
        idle_timeout_ns: int | None = None,
        counter: tuple[int, int] | None = None,
        meter_config: MeterConfig | None = None,
        controller_metadata: int | None = None,
        metadata: bytes | None = None,
        strict: bool = True,
    ) -> TableEntry:
        """Change the action (and optional state) of an existing entry (P4Runtime MODIFY)."""
        entry = self.get(match, priority=priority, strict=strict)
        if entry.is_const or self.const_entries:
            raise ConstEntryError(self.name, "cannot modify a const entry")
        args = tuple(args)
        self._check_action(action_id, args, for_default=False)
        if idle_timeout_ns is not None:
            self._check_idle_timeout(idle_timeout_ns)
        if meter_config is not None:
            self._check_direct_meter()
        # everything validated: apply
        entry.action_id = action_id
        entry.args = args
        if idle_timeout_ns is not None:
            entry.idle_timeout_ns = idle_timeout_ns
        if counter is not None:
            entry.packets, entry.bytes = counter
        if meter_config is not None:
            entry.meter.configure(meter_config, f"direct meter of {self.name}")  # type: ignore[union-attr]
        if controller_metadata is not None:
            entry.controller_metadata = controller_metadata
        if metadata is not None:
            entry.metadata = metadata
        return entry

    def delete(
        self, match: Sequence[MatchValue], *, priority: int = 0, strict: bool = True
    ) -> TableEntry:
        """Remove an entry (P4Runtime DELETE) and return it."""
        entry = self.get(match, priority=priority, strict=strict)
        if entry.is_const or self.const_entries:
            raise ConstEntryError(self.name, "cannot delete a const entry")
        self._remove(entry)
        return entry

    def clear(self) -> int:
        """Remove every non-const entry (STF ``remove all``); returns how many."""
        victims = [e for e in self._entries.values() if not e.is_const]
        for entry in victims:
            self._remove(entry)
        return len(victims)

    def get(
        self, match: Sequence[MatchValue], *, priority: int = 0, strict: bool = True
    ) -> TableEntry:
        """The entry with exactly this (canonicalized) match and priority, or NOT_FOUND."""
        entry = self.find(match, priority=priority, strict=strict)
        if entry is None:
            raise EntryNotFoundError(self.name, f"no entry matches {self._describe(match)}")
        return entry

    def find(
        self, match: Sequence[MatchValue], *, priority: int = 0, strict: bool = True
    ) -> TableEntry | None:
        """Like :meth:`get` but returns None when absent."""
        canonical = self.canonicalize(match, strict=strict)
        return self._entries.get((canonical, priority if self.requires_priority else 0))

    def find_canonical(
        self, key: tuple[tuple[int, int], ...], priority: int = 0
    ) -> TableEntry | None:
        """Like :meth:`find` for a key already returned by :meth:`canonicalize`."""
        return self._entries.get((key, priority if self.requires_priority else 0))

    def insert_validated(
        self,
        key: tuple[tuple[int, int], ...],
        action_id: int,
        args: tuple[int, ...],
        *,
        priority: int,
        idle_timeout_ns: int = 0,
        controller_metadata: int = 0,
        metadata: bytes = b"",
    ) -> TableEntry:
        """INSERT of an entry its caller has validated (the P4Runtime layer): ``key``
        comes from :meth:`canonicalize`, and the priority, the action (allowed, in scope,
        arguments fitting their widths) and the idle timeout were checked against this
        table. Still refuses const tables, duplicates and a full table."""
        if self.const_entries:
            raise ConstEntryError(self.name, "entries are const (declared with 'const entries')")
        return self._store(
            key, priority, action_id, args, idle_timeout_ns, controller_metadata, metadata
        )

    def match_of(self, entry: TableEntry) -> list[MatchValue]:
        """The entry's match as caller-level values; ``None`` for don't-care fields."""
        return self.match_of_key(entry.key)

    def match_of_key(self, key: tuple[tuple[int, int], ...]) -> list[MatchValue]:
        """:meth:`match_of` of a canonical key."""
        out: list[MatchValue] = []
        for field, (a, b) in zip(self.key_fields, key):
            full = (1 << field.width) - 1
            kind = field.match_kind
            if kind is MatchKind.exact:
                out.append(Exact(a))
            elif kind is MatchKind.range:
                out.append(None if (a, b) == (0, full) else Range(a, b))
            elif b == 0:
                out.append(None)
            elif kind is MatchKind.lpm:
                out.append(Lpm(a, field.width - ((full ^ b).bit_length())))
            elif kind is MatchKind.ternary:
                out.append(Ternary(a, b))
            else:
                out.append(OptionalMatch(a))
        return out

    # --- control plane: default action ------------------------------------------------

    @property
    def default_action(self) -> DefaultAction:
        return self.miss

    def set_default_action(self, action_id: int, args: Sequence[int] = ()) -> None:
        """Change the miss action (P4Runtime MODIFY of the default entry)."""
        if self.miss.is_const:
            raise ConstDefaultActionError(self.name, "the default action is const")
        args = tuple(args)
        self._check_action(action_id, args, for_default=True)
        self.miss = DefaultAction(action_id, args, False)

    def reset_default_action(self) -> None:
        """Back to the program's default action."""
        self.miss = self._initial_default

    # --- control plane: direct resources and idle timeout ------------------------------

    def set_direct_meter_config(
        self, match: Sequence[MatchValue], config: MeterConfig | None, *, priority: int = 0
    ) -> None:
        self._check_direct_meter()
        entry = self.get(match, priority=priority)
        entry.meter.configure(config, f"direct meter of {self.name}")  # type: ignore[union-attr]

    def expired_entries(self, now_ns: int | None = None) -> list[TableEntry]:
        """Entries whose idle timeout elapsed since their last hit, each reported once
        (until hit again) — the IdleTimeoutNotification contents."""
        if not self.supports_idle_timeout:
            return []
        now = self.clock.now_ns() if now_ns is None else now_ns  # type: ignore[union-attr]
        out = []
        for entry in self._entries.values():
            if (
                entry.idle_timeout_ns > 0
                and not entry.idle_notified
                and now - entry.last_hit_ns >= entry.idle_timeout_ns
            ):
                entry.idle_notified = True
                out.append(entry)
        return out

    # --- canonicalization & validation ------------------------------------------------

    def canonicalize(
        self, match: Sequence[MatchValue], *, strict: bool = True
    ) -> tuple[tuple[int, int], ...]:
        """Validate ``match`` and return the canonical key (raises InvalidEntryError)."""
        if len(match) != len(self.key_fields):
            raise InvalidEntryError(
                self.name,
                f"expected {len(self.key_fields)} key field(s), got {len(match)}",
            )
        return tuple(
            self._canonical_field(field, value, strict)
            for field, value in zip(self.key_fields, match)
        )

    def _canonical_field(self, field: KeyField, value: MatchValue, strict: bool) -> tuple[int, int]:
        width = field.width
        full = (1 << width) - 1
        kind = field.match_kind
        where = f"key field {field.name} ({kind.value}, bit<{width}>)"

        def fits(v: int, label: str) -> int:
            if not 0 <= v <= full:
                raise InvalidEntryError(self.name, f"{where}: {label} {v} does not fit")
            return v

        if value is None:
            if kind is MatchKind.exact:
                raise InvalidEntryError(self.name, f"{where}: an exact key cannot be omitted")
            return (0, full) if kind is MatchKind.range else (0, 0)
        if kind is MatchKind.exact:
            if not isinstance(value, Exact):
                raise InvalidEntryError(self.name, f"{where}: expected an exact value, got {value}")
            return (fits(value.value, "value"), full)
        if kind is MatchKind.lpm:
            if isinstance(value, Exact):
                value = Lpm(value.value, width)
            if not isinstance(value, Lpm):
                raise InvalidEntryError(self.name, f"{where}: expected an lpm value, got {value}")
            if not 0 <= value.prefix_len <= width:
                raise InvalidEntryError(
                    self.name, f"{where}: prefix length {value.prefix_len} out of [0, {width}]"
                )
            mask = full ^ ((1 << (width - value.prefix_len)) - 1)
            return (self._masked(fits(value.value, "value"), mask, strict, where), mask)
        if kind is MatchKind.ternary:
            if isinstance(value, Exact):
                value = Ternary(value.value, full)
            if not isinstance(value, Ternary):
                raise InvalidEntryError(
                    self.name, f"{where}: expected a ternary value, got {value}"
                )
            mask = fits(value.mask, "mask")
            return (self._masked(fits(value.value, "value"), mask, strict, where), mask)
        if kind is MatchKind.range:
            if isinstance(value, Exact):
                value = Range(value.value, value.value)
            if not isinstance(value, Range):
                raise InvalidEntryError(self.name, f"{where}: expected a range, got {value}")
            low, high = fits(value.low, "low"), fits(value.high, "high")
            if low > high:
                raise InvalidEntryError(self.name, f"{where}: range low {low} > high {high}")
            return (low, high)
        # optional
        if isinstance(value, Exact):
            value = OptionalMatch(value.value)
        if not isinstance(value, OptionalMatch):
            raise InvalidEntryError(self.name, f"{where}: expected an optional value, got {value}")
        return (fits(value.value, "value"), full)

    def _masked(self, value: int, mask: int, strict: bool, where: str) -> int:
        if value & ~mask:
            if strict:
                raise InvalidEntryError(
                    self.name, f"{where}: value {value:#x} has bits outside mask {mask:#x}"
                )
            return value & mask
        return value

    def _check_action(self, action_id: int, args: tuple[int, ...], *, for_default: bool) -> None:
        if self.allowed_actions is not None:
            scope = self.allowed_actions.get(action_id)
            if scope is None:
                raise InvalidEntryError(self.name, f"action id {action_id} is not in the table")
            if for_default and scope is ActionScope.table_only:
                raise InvalidEntryError(
                    self.name, f"action id {action_id} is @tableonly, not a default action"
                )
            if not for_default and scope is ActionScope.default_only:
                raise InvalidEntryError(
                    self.name, f"action id {action_id} is @defaultonly, not an entry action"
                )
        if self.action_param_widths is not None:
            widths = self.action_param_widths.get(action_id)
            if widths is not None:
                if len(widths) != len(args):
                    raise InvalidEntryError(
                        self.name,
                        f"action id {action_id} takes {len(widths)} argument(s), got {len(args)}",
                    )
                for position, (arg, width) in enumerate(zip(args, widths)):
                    if not 0 <= arg < (1 << width):
                        raise InvalidEntryError(
                            self.name,
                            f"action id {action_id} argument {position}: {arg} does not fit "
                            f"in {width} bits",
                        )

    def _check_idle_timeout(self, idle_timeout_ns: int) -> None:
        if idle_timeout_ns < 0:
            raise InvalidEntryError(self.name, "idle timeout must not be negative")
        if idle_timeout_ns and not self.supports_idle_timeout:
            raise InvalidEntryError(self.name, "the table does not support idle timeouts")

    def _check_direct_meter(self) -> None:
        if self.direct_meter is None:
            raise InvalidEntryError(self.name, "the table has no direct meter")

    def _describe(self, match: Sequence[MatchValue]) -> str:
        return ", ".join(f"{f.name}={v!r}" for f, v in zip(self.key_fields, match)) or "(no key)"

    # --- storage ------------------------------------------------------------------------

    def _insert(
        self,
        match: Sequence[MatchValue],
        action_id: int,
        args: tuple[int, ...],
        *,
        priority: int,
        idle_timeout_ns: int,
        counter: tuple[int, int] | None,
        meter_config: MeterConfig | None,
        controller_metadata: int,
        metadata: bytes,
        strict: bool,
        is_const: bool,
    ) -> TableEntry:
        if self._kind is _Kind.keyless:
            raise InvalidEntryError(
                self.name, "the table has no key; only its default action can be set"
            )
        canonical = self.canonicalize(match, strict=strict)
        if self.requires_priority:
            if priority < 1:
                raise InvalidEntryError(
                    self.name,
                    f"a table with ternary/range/optional keys needs a priority >= 1, got {priority}",
                )
        elif priority != 0:
            raise InvalidEntryError(
                self.name,
                f"priority must be 0 for a table without ternary/range keys, got {priority}",
            )
        self._check_action(action_id, args, for_default=False)
        self._check_idle_timeout(idle_timeout_ns)
        if meter_config is not None:
            self._check_direct_meter()
        entry = self._store(
            canonical, priority, action_id, args, idle_timeout_ns, controller_metadata, metadata
        )
        entry.is_const = is_const
        if counter is not None:
            entry.packets, entry.bytes = counter
        if meter_config is not None:
            entry.meter.configure(meter_config, f"direct meter of {self.name}")  # type: ignore[union-attr]
        return entry

    def _store(
        self,
        key: tuple[tuple[int, int], ...],
        priority: int,
        action_id: int,
        args: tuple[int, ...],
        idle_timeout_ns: int,
        controller_metadata: int,
        metadata: bytes,
    ) -> TableEntry:
        """Add a validated entry: refuses only a duplicate key and a full table."""
        identity = (key, priority)
        entries = self._entries
        if identity in entries:
            raise DuplicateEntryError(
                self.name, f"an entry matching {self._describe(self.match_of_key(key))} exists"
            )
        if len(entries) >= self.size:
            raise TableFullError(self.name, f"table is full ({self.size} entries)")
        self._seq += 1
        entry = TableEntry(key, priority, action_id, args, self._seq)
        entry.idle_timeout_ns = idle_timeout_ns
        entry.controller_metadata = controller_metadata
        entry.metadata = metadata
        clock = self.clock
        if clock is not None:
            entry.last_hit_ns = clock.now_ns()
            if self.direct_meter is not None:
                entry.meter = MeterCell(self.direct_meter.type, clock.now_ns())
        entries[identity] = entry
        self._index(entry)
        return entry

    def _index(self, entry: TableEntry) -> None:
        if self._kind is _Kind.exact:
            self._exact[self._exact_key(entry)] = entry
            self._c_stale = True
        elif self._kind is _Kind.lpm:
            mask = entry.key[self._lpm_index][1]
            bucket = self._lpm.get(mask)
            if bucket is None:
                bucket = self._lpm[mask] = {}
                self._rebuild_lpm_scan()
            bucket[self._lpm_dict_key(entry)] = entry
        else:
            self._dirty = True

    def _remove(self, entry: TableEntry) -> None:
        del self._entries[(entry.key, entry.priority)]
        if self._kind is _Kind.exact:
            del self._exact[self._exact_key(entry)]
            self._c_stale = True
        elif self._kind is _Kind.lpm:
            mask = entry.key[self._lpm_index][1]
            bucket = self._lpm[mask]
            del bucket[self._lpm_dict_key(entry)]
            if not bucket:
                del self._lpm[mask]
                self._rebuild_lpm_scan()
        else:
            self._dirty = True

    def _exact_key(self, entry: TableEntry) -> object:
        """An exact entry's key in ``_exact``: its values' tuple, or its one value (a
        table of one key field: :meth:`packet_dict`)."""
        if len(entry.key) == 1:
            return entry.key[0][0]
        return tuple([v for v, _ in entry.key])

    def _lpm_dict_key(self, entry: TableEntry) -> object:
        if len(entry.key) == 1:
            return entry.key[0][0]
        return tuple(v for v, _ in entry.key)

    def _rebuild_lpm_scan(self) -> None:
        # longer prefix == numerically larger mask (all masks are prefixes of one width)
        self._lpm_scan = [(mask, self._lpm[mask]) for mask in sorted(self._lpm, reverse=True)]

    def _rebuild(self) -> None:
        compiled = []
        for entry in sorted(self._entries.values(), key=lambda e: (-e.priority, e.seq)):
            packed_value = 0
            packed_mask = 0
            ranges = []
            for index, (field, (a, b), shift) in enumerate(
                zip(self.key_fields, entry.key, self._field_shifts)
            ):
                if field.match_kind is MatchKind.range:
                    if (a, b) != (0, (1 << field.width) - 1):
                        ranges.append((index, a, b))
                else:
                    packed_value |= a << shift
                    packed_mask |= b << shift
            compiled.append((packed_value, packed_mask, tuple(ranges), entry))
        self._sorted = compiled
        self._dirty = False


def _shifts(widths: Sequence[int]) -> list[int]:
    total = sum(widths)
    out = []
    for width in widths:
        total -= width
        out.append(total)
    return out


@functools.cache
def _compile_packer(widths: tuple[int, ...]) -> Callable[[Sequence[int]], int]:
    """``pack(key) -> int`` concatenating the key values (first field most significant).
    Stateless, so one function per key shape serves every table and every switch."""
    if not widths:
        return lambda key: 0
    terms = []
    for index, shift in enumerate(_shifts(widths)):
        terms.append(f"(key[{index}] << {shift})" if shift else f"key[{index}]")
    namespace: dict[str, object] = {}
    exec(compile(f"def pack(key):\n    return {' | '.join(terms)}\n", "<pack>", "exec"), namespace)
    return namespace["pack"]  # type: ignore[return-value]
