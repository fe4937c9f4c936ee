"""v1model externs with BMv2 semantics: registers, counters, meters, random, digests, log_msg.

Packet-path methods never raise on a bad index: like BMv2's primitives they log an error
(logger ``p4emu.runtime``), count it in ``out_of_range`` and leave the state (and the
destination) unchanged. Control-plane methods (``get``/``set``/``configure``...) raise
:class:`~p4emu.runtime.exceptions.ExternIndexError` instead, so P4Runtime can answer with
an error.

Register (BMv2 ``register_read``/``register_write`` primitives)
    ``read(index, unchanged)`` returns ``unchanged`` when the index is out of range — BMv2
    leaves the destination field untouched, so pass the destination's current value.
Counter
    BMv2 always counts both packets and bytes; the byte count uses the length the caller
    passes (BMv2 uses the packet's ingress length). The counter type only says what the
    control plane reports.
Meter (BMv2 ``Meter``, RFC 2698 two-rate three-color marker, color blind)
    Colors: :data:`GREEN` 0, :data:`YELLOW` 1, :data:`RED` 2. An unconfigured meter
    returns GREEN. P4Runtime ``MeterConfig`` rates (units per second) become BMv2 rates in
    units per microsecond (``rate / 1e6``, as the PI BMv2 target converts them); buckets
    start full at configuration. Tokens are computed from the time since the meter was
    created, in whole microseconds, exactly as BMv2 does. The peak bucket is tested first:
    short of tokens -> RED (nothing consumed); then the committed bucket: short -> YELLOW.
"""

from __future__ import annotations

import enum
import logging
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import cython

from p4emu.runtime.clock import NS_PER_US, Clock
from p4emu.runtime.exceptions import (
    ExternError,
    ExternIndexError,
    LogMsgFormatError,
    MeterConfigError,
)

if cython.compiled:
    from cython.cimports.cpython.bytearray import PyByteArray_AS_STRING

log = logging.getLogger("p4emu.runtime")

GREEN = 0
YELLOW = 1
RED = 2


class CounterType(enum.Enum):
    """v1model ``CounterType``."""

    packets = "packets"
    bytes = "bytes"
    packets_and_bytes = "packets_and_bytes"


class MeterType(enum.Enum):
    """v1model ``MeterType``."""

    packets = "packets"
    bytes = "bytes"


# --- registers --------------------------------------------------------------------------


class Register:
    """``register<bit<W>>(size)``. Values are stored as unsigned ``W``-bit ints."""

    __slots__ = ("_mask", "_values", "name", "out_of_range", "size", "width")

    def __init__(self, name: str, width: int, size: int) -> None:
        if width <= 0:
            raise ExternError(f"register {name}: width must be positive, got {width}")
        if size < 0:
            raise ExternError(f"register {name}: size must not be negative, got {size}")
        self.name = name
        self.width = width
        self.size = size
        self._mask = (1 << width) - 1
        self._values = [0] * size
        self.out_of_range = 0

    # packet path

    def read(self, index: int, unchanged: int = 0) -> int:
        """Value at ``index``; out of range: log, and return ``unchanged`` (BMv2 keeps dst)."""
        if 0 <= index < self.size:
            return self._values[index]
        self.out_of_range += 1
        log.error(
            "Attempted to read register '%s' with size %d at out-of-bounds index %d. "
            "Dest field was not updated.",
            self.name,
            self.size,
            index,
        )
        return unchanged

    def write(self, index: int, value: int) -> None:
        """Store ``value`` truncated to the width; out of range: log and ignore."""
        if 0 <= index < self.size:
            self._values[index] = value & self._mask
            return
        self.out_of_range += 1
        log.error(
            "Attempted to write register '%s' with size %d at out-of-bounds index %d. "
            "No register array elements were updated.",
            self.name,
            self.size,
            index,
        )

    # control plane

    def get(self, index: int) -> int:
        self._check(index)
        return self._values[index]

    def set(self, index: int, value: int) -> None:
        self._check(index)
        if not 0 <= value <= self._mask:
            raise ExternError(
                f"register {self.name}: value {value} does not fit in {self.width} bits"
            )
        self._values[index] = value

    def values(self) -> list[int]:
        """A copy of all cells."""
        return list(self._values)

    def cells(self) -> list[int]:
        """The cells themselves, for generated code that reads and writes them in range
        (the same list for the life of the register)."""
        return self._values

    def reset(self) -> None:
        """All cells back to 0 (BMv2 ``register_reset``)."""
        self._values[:] = [0] * self.size

    def _check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise ExternIndexError("register", self.name, index, self.size)


# --- counters ---------------------------------------------------------------------------


#: the largest value a counter cell of the native build holds in C (an unsigned 64-bit
#: integer, BMv2's width); a count or a write past it moves that counter's cells to Python
#: ints, so its values stay exact (unbounded, as the pure path's always are)
CELL_MAX = 2**64 - 1
_CELL_MAX = CELL_MAX  # the native build's C copy (``externs.pxd``)
_LENGTH_MAX = 2**63 - 1  # the largest length :meth:`Counter.count_at` takes (a C long long)


def _cell_array(cells: bytearray) -> Any:
    """A native :class:`Counter`'s cells: its ``bytearray`` as C unsigned 64-bit integers
    (packets then bytes per index). Called on the native build only."""
    return cython.cast(cython.pointer(cython.ulonglong), PyByteArray_AS_STRING(cells))


class Counter:
    """``counter(size, CounterType)`` (indirect counter array).

    Cells: the pure path keeps each count in two lists of Python ints. The native build
    keeps them in C (two unsigned 64-bit integers per index, packets then bytes, in a
    ``bytearray`` it owns, never resized) until a value would pass :data:`CELL_MAX` or
    :meth:`cells` is asked for: then it moves them, once and for good, into the lists
    (``_wide``) and counts as the pure path does. Every read gives the same Python ints
    either way. Generated code of a native runtime counts with :meth:`count_at`, a C call.
    """

    __slots__ = (
        "_bytes",
        "_cells",
        "_packets",
        "_size",
        "_wide",
        "name",
        "out_of_range",
        "size",
        "type",
    )

    def __init__(self, name: str, size: int, type: CounterType) -> None:
        if size < 0:
            raise ExternError(f"counter {name}: size must not be negative, got {size}")
        self.name = name
        self.size = size
        self._size = size  # a C copy natively: count_at's range check
        self.type = type
        self.out_of_range = 0
        if cython.compiled:
            self._cells = bytearray(16 * size)  # zeroed: every count 0
            self._c_cellp = _cell_array(self._cells)  # count_at's cells, with no reference
            self._wide = False
            self._packets = None
            self._bytes = None
        else:
            self._cells = None
            self._wide = True
            self._packets = [0] * size
            self._bytes = [0] * size

    def count(self, index: int, length: int) -> None:
        """Packet path: one packet of ``length`` bytes; out of range: log and ignore."""
        if 0 <= index < self.size:
            if cython.compiled:
                if not self._wide and 0 <= length <= _LENGTH_MAX:
                    self.count_at(index, length)
                    return
                self._widen()  # a length C cells cannot add: Python ints from now on
            self._packets[index] += 1
            self._bytes[index] += length
            return
        self.out_of_range += 1
        log.error(
            "Attempted to update counter '%s' with size %d at out-of-bounds index %d. "
            "No counters were updated.",
            self.name,
            self.size,
            index,
        )

    def count_at(self, index: int, length: int) -> None:
        """Generated code's count: one packet of ``length`` bytes at ``index``, which the
        caller knows is in range (``0 <= index < size``). Not logged like :meth:`count`:
        an index out of range is the caller's error (:class:`ExternIndexError`)."""
        if not 0 <= index < self._size:
            raise ExternIndexError("counter", self.name, index, self.size)
        if cython.compiled:
            if not self._wide and length >= 0:
                cells: cython.pointer(cython.ulonglong) = self._c_cellp
                packets = cells[2 * index]
                byte_count = cells[2 * index + 1]
                if packets < _CELL_MAX and byte_count <= _CELL_MAX - length:
                    cells[2 * index] = packets + 1
                    cells[2 * index + 1] = byte_count + length
                    return
            self._widen()
        self._packets[index] += 1
        self._bytes[index] += length

    def read(self, index: int) -> tuple[int, int]:
        """Control plane: ``(packets, bytes)``."""
        self._check(index)
        if cython.compiled and not self._wide:
            at: cython.Py_ssize_t = 2 * index
            cells: cython.pointer(cython.ulonglong) = _cell_array(self._cells)
            return cells[at], cells[at + 1]
        return self._packets[index], self._bytes[index]

    def write(self, index: int, packets: int, byte_count: int) -> None:
        self._check(index)
        if packets < 0 or byte_count < 0:
            raise ExternError(f"counter {self.name}: counts must not be negative")
        if cython.compiled and not self._wide:
            if packets <= CELL_MAX and byte_count <= CELL_MAX:
                cells: cython.pointer(cython.ulonglong) = _cell_array(self._cells)
                at: cython.Py_ssize_t = 2 * index
                cells[at] = packets
                cells[at + 1] = byte_count
                return
            self._widen()  # a value past a C cell: Python ints from now on
        self._packets[index] = packets
        self._bytes[index] = byte_count

    def cells(self) -> tuple[list[int], list[int]]:
        """The packet and byte cells themselves, for generated code that counts in range
        (the same lists for the life of the counter; the native build moves its C cells
        into them first, for good)."""
        if cython.compiled and not self._wide:
            self._widen()
        return self._packets, self._bytes

    def reset(self) -> None:
        if self._wide:
            self._packets[:] = [0] * self.size
            self._bytes[:] = [0] * self.size
        else:
            self._cells[:] = bytes(16 * self.size)
            if cython.compiled:  # the same length: the same buffer, but taken again
                self._c_cellp = _cell_array(self._cells)

    def _widen(self) -> None:
        """The native build: the C cells into the lists of Python ints, for good."""
        if cython.compiled and not self._wide:
            cells: cython.pointer(cython.ulonglong) = _cell_array(self._cells)
            count: cython.Py_ssize_t = self.size
            self._packets = [cells[2 * i] for i in range(count)]
            self._bytes = [cells[2 * i + 1] for i in range(count)]
            self._cells = bytearray()
            self._wide = True

    def _check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise ExternIndexError("counter", self.name, index, self.size)


@dataclass(frozen=True)
class DirectCounter:
    """``direct_counter(CounterType)`` attached to one table; the cells live in its entries."""

    name: str
    type: CounterType


# --- meters -----------------------------------------------------------------------------


@dataclass(frozen=True)
class MeterConfig:
    """P4Runtime ``MeterConfig``: rates in units (packets or bytes) per second, bursts in units."""

    cir: int
    cburst: int
    pir: int
    pburst: int

    def validate(self, where: str) -> None:
        for label, value in (
            ("cir", self.cir),
            ("cburst", self.cburst),
            ("pir", self.pir),
            ("pburst", self.pburst),
        ):
            if value < 0:
                raise MeterConfigError(f"{where}: {label} must not be negative, got {value}")
        if self.pir < self.cir:
            raise MeterConfigError(
                f"{where}: peak rate {self.pir} is below committed rate {self.cir} "
                "(BMv2 INVALID_INFO_RATE_VALUE)"
            )


class MeterCell:
    """One trTCM meter (one index of a ``meter`` or one entry of a ``direct_meter``)."""

    __slots__ = (
        "_init_ns",
        "bytes_mode",
        "c_burst",
        "c_last",
        "c_rate",
        "c_tokens",
        "config",
        "p_burst",
        "p_last",
        "p_rate",
        "p_tokens",
    )

    def __init__(self, type: MeterType, created_ns: int) -> None:
        self.bytes_mode = type is MeterType.bytes
        self._init_ns = created_ns
        self.config: MeterConfig | None = None
        self.p_rate = self.c_rate = 0.0  # units per microsecond
        self.p_burst = self.c_burst = 0
        self.p_tokens = self.c_tokens = 0
        self.p_last = self.c_last = 0

    def configure(self, config: MeterConfig | None, where: str = "meter") -> None:
        """Set (or with ``None`` clear) the rates; both buckets start full."""
        if config is None:
            self.config = None
            return
        config.validate(where)
        self.config = config
        self.c_rate = config.cir / 1_000_000.0
        self.p_rate = config.pir / 1_000_000.0
        self.c_burst = config.cburst
        self.p_burst = config.pburst
        self.c_tokens = config.cburst
        self.p_tokens = config.pburst
        self.c_last = self.p_last = 0

    def execute(self, now_ns: int, length: int) -> int:
        """Color of a packet of ``length`` bytes arriving at ``now_ns``."""
        if self.config is None:
            return GREEN
        micros = (now_ns - self._init_ns) // NS_PER_US
        units = length if self.bytes_mode else 1
        since = int(micros * self.p_rate)
        tokens = self.p_tokens + since - self.p_last
        self.p_last = since
        self.p_tokens = tokens = tokens if tokens < self.p_burst else self.p_burst
        if tokens < units:
            return RED
        self.p_tokens = tokens - units
        since = int(micros * self.c_rate)
        tokens = self.c_tokens + since - self.c_last
        self.c_last = since
        self.c_tokens = tokens = tokens if tokens < self.c_burst else self.c_burst
        if tokens < units:
            return YELLOW
        self.c_tokens = tokens - units
        return GREEN


class Meter:
    """``meter(size, MeterType)`` (indirect meter array)."""

    __slots__ = ("_cells", "clock", "name", "out_of_range", "size", "type")

    def __init__(self, name: str, size: int, type: MeterType, clock: Clock) -> None:
        if size < 0:
            raise ExternError(f"meter {name}: size must not be negative, got {size}")
        self.name = name
        self.size = size
        self.type = type
        self.clock = clock
        created = clock.now_ns()
        self._cells = [MeterCell(type, created) for _ in range(size)]
        self.out_of_range = 0

    def execute(self, index: int, length: int, unchanged: int = GREEN) -> int:
        """Packet path: color at ``index``; out of range: log, return ``unchanged`` (dst kept)."""
        if 0 <= index < self.size:
            return self._cells[index].execute(self.clock.now_ns(), length)
        self.out_of_range += 1
        log.error(
            "Attempted to update meter '%s' with size %d at out-of-bounds index %d. "
            "No meters were updated, and neither was dest field.",
            self.name,
            self.size,
            index,
        )
        return unchanged

    def configure(self, index: int, config: MeterConfig | None) -> None:
        """Control plane: set/clear the config of one index (P4Runtime MeterEntry)."""
        self._check(index)
        self._cells[index].configure(config, f"meter {self.name}[{index}]")

    def configure_all(self, config: MeterConfig | None) -> None:
        """Same config for every index (BMv2 ``meter_array_set_rates``)."""
        if config is not None:
            config.validate(f"meter {self.name}")
        for cell in self._cells:
            cell.configure(config)

    def get_config(self, index: int) -> MeterConfig | None:
        self._check(index)
        return self._cells[index].config

    def _check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise ExternIndexError("meter", self.name, index, self.size)


@dataclass(frozen=True)
class DirectMeter:
    """``direct_meter<T>(MeterType)`` attached to one table; the cells live in its entries."""

    name: str
    type: MeterType


def meter_config_from_bmv2_rates(
    rates: Sequence[tuple[float, int]], where: str = "meter"
) -> MeterConfig:
    """Convert BMv2 CLI rates ``[(cir_per_us, cburst), (pir_per_us, pburst)]`` to a config.

    ``simple_switch_CLI meter_set_rates`` (and the STF command of the same name) give rates
    in units per microsecond.
    """
    if len(rates) != 2:
        raise MeterConfigError(f"{where}: a trTCM needs exactly 2 rates, got {len(rates)}")
    (c_rate, c_burst), (p_rate, p_burst) = rates
    return MeterConfig(
        cir=round(c_rate * 1_000_000), cburst=c_burst, pir=round(p_rate * 1_000_000), pburst=p_burst
    )


# --- random -----------------------------------------------------------------------------


def _bit_length(n: int) -> int:
    """``n.bit_length()`` of ``0 <= n < 2**64`` (compiled: of a C unsigned 64-bit integer,
    in six halving steps instead of a Python method call)."""
    if cython.compiled:
        k = 0
        step = 32
        while step:
            if n >> step:
                n >>= step
                k += step
            step >>= 1
        return k + n
    return n.bit_length()


class RandomSource:
    """``random<T>(out result, lo, hi)`` with a seedable generator (one per switch)."""

    __slots__ = ("_bits", "_rng")

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)
        self._bits = self._rng.getrandbits  # the generator's own method (seed() keeps it)

    @property
    def rng(self) -> random.Random:
        """The underlying generator (also used by ``HashAlgorithm.random``)."""
        return self._rng

    def seed(self, seed: int | None) -> None:
        self._rng.seed(seed)

    def uniform(self, lo: int, hi: int) -> int:
        """Uniform integer in ``[lo, hi]`` (BMv2 ``modify_field_rng_uniform``).

        ``lo > hi`` is undefined in BMv2 (its distribution's precondition); p4emu returns
        ``lo`` and logs a warning.
        """
        if lo > hi:
            log.warning("random(): lo %d > hi %d, returning lo", lo, hi)
            return lo
        # ``self._rng.randint(lo, hi)`` without its three Python frames (randint,
        # randrange, _randbelow_with_getrandbits): the same draws from the same
        # generator, so the same values (tests/p4emu/runtime/test_externs.py compares
        # them with randint's)
        n = hi - lo + 1
        k = n.bit_length()
        bits = self._bits
        r = bits(k)
        while r >= n:
            r = bits(k)
        return lo + r

    def uniform_at(self, lo: int, hi: int) -> int:
        """:meth:`uniform` for generated code whose bounds are ``bit<W>`` values that fit
        a C ``Py_ssize_t`` (``0 <= lo``, ``hi <= sys.maxsize``: 63 bits on a 64-bit
        machine): the same draws from the same generator, so the same values and the same
        warning. Compiled, a C call on C integers (no bound method, no argument tuple, no
        Python arithmetic but the generator's own call)."""
        if lo > hi:
            log.warning("random(): lo %d > hi %d, returning lo", lo, hi)
            return lo
        n = hi - lo + 1  # compiled: at most sys.maxsize + 1, an unsigned 64-bit C integer
        k = _bit_length(n)
        bits = self._bits
        r = bits(k)
        while r >= n:
            r = bits(k)
        return lo + r


# --- digests ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DigestConfig:
    """P4Runtime ``DigestEntry.Config`` (0 timeouts mean "send at once" / "no dedup")."""

    max_timeout_ns: int = 0
    max_list_size: int = 1
    ack_timeout_ns: int = 0


@dataclass
class DigestList:
    """A batch of digest samples ready for the controller (P4Runtime ``DigestList``)."""

    digest_id: int
    list_id: int
    samples: list[tuple[int, ...]]
    timestamp_ns: int


@dataclass
class _DigestState:
    """One digest's configuration and state: samples waiting to be sent (and when the first
    arrived, in ns), the learning filter and the lists sent but not acknowledged."""

    config: DigestConfig
    pending: list[tuple[int, ...]] = field(default_factory=list)
    first_pending_ns: int = 0
    # sample -> time after which it may be learnt again (ack timeout), while unacked
    filter: dict[tuple[int, ...], int] = field(default_factory=dict)
    # list_id -> (ack deadline, samples) of a sent, unacknowledged list
    unacked: dict[int, tuple[int, list[tuple[int, ...]]]] = field(default_factory=dict)


class DigestQueue:
    """Collects ``digest<T>(receiver, data)`` samples and batches them for the controller.

    Samples are tuples of ints (the struct's fields in order). With ``ack_timeout_ns > 0`` a
    sample already sent and not yet acknowledged is dropped as a duplicate (like BMv2's
    learning filter) until acknowledged or until the ack timeout expires. At most
    ``capacity`` samples wait in total; beyond that new samples are dropped and counted.
    """

    def __init__(self, clock: Clock, capacity: int = 4096) -> None:
        self.clock = clock
        self.capacity = capacity
        self._states: dict[int, _DigestState] = {}
        self._next_list_id = 1
        self._ready: deque[DigestList] = deque()
        self._waiting = 0
        self.dropped_duplicates = 0
        self.dropped_overflow = 0

    def configure(self, digest_id: int, config: DigestConfig) -> None:
        if config.max_list_size < 0 or config.max_timeout_ns < 0 or config.ack_timeout_ns < 0:
            raise ExternError(f"digest {digest_id}: config values must not be negative")
        state = self._states.get(digest_id)
        if state is None:
            self._states[digest_id] = _DigestState(config)
        else:
            state.config = config

    def remove(self, digest_id: int) -> None:
        """Forget the configuration and pending samples of a digest."""
        state = self._states.pop(digest_id, None)
        if state is not None:
            self._waiting -= len(state.pending)

    def push(self, digest_id: int, sample: tuple[int, ...]) -> bool:
        """Packet path: queue one sample; returns False if it was dropped."""
        now = self.clock.now_ns()
        state = self._states.get(digest_id)
        if state is None:
            state = self._states[digest_id] = _DigestState(DigestConfig())
        config = state.config
        if config.ack_timeout_ns > 0:
            until = state.filter.get(sample)
            if until is not None and now < until:
                self.dropped_duplicates += 1
                return False
        if self._waiting >= self.capacity:
            self.dropped_overflow += 1
            log.error(
                "digest %d: queue full (%d samples), sample dropped", digest_id, self.capacity
            )
            return False
        if not state.pending:
            state.first_pending_ns = now
        state.pending.append(sample)
        self._waiting += 1
        if config.ack_timeout_ns > 0:
            # unacked samples block duplicates until acked or ack timeout
            state.filter[sample] = 1 << 62
        if len(state.pending) >= max(config.max_list_size, 1):
            self._flush(digest_id, state, now)
        return True

    def poll(self) -> list[DigestList]:
        """Lists ready now (full, or older than ``max_timeout_ns``); empties the ready queue."""
        now = self.clock.now_ns()
        for digest_id, state in self._states.items():
            if state.pending and now - state.first_pending_ns >= state.config.max_timeout_ns:
                self._flush(digest_id, state, now)
            expired = [lid for lid, (deadline, _) in state.unacked.items() if now >= deadline]
            for list_id in expired:
                _, samples = state.unacked.pop(list_id)
                for sample in samples:
                    if state.filter.get(sample, 0) <= now:
                        state.filter.pop(sample, None)
        out = list(self._ready)
        self._ready.clear()
        return out

    def ack(self, digest_id: int, list_id: int) -> None:
        """Controller acknowledged ``list_id``: its samples may be learnt again."""
        state = self._states.get(digest_id)
        if state is None:
            raise ExternError(f"digest {digest_id}: not configured")
        sent = state.unacked.pop(list_id, None)
        if sent is None:
            raise ExternError(f"digest {digest_id}: no unacknowledged list {list_id}")
        for sample in sent[1]:
            state.filter.pop(sample, None)

    def _flush(self, digest_id: int, state: _DigestState, now: int) -> None:
        samples = state.pending
        state.pending = []
        self._waiting -= len(samples)
        list_id = self._next_list_id
        self._next_list_id += 1
        if state.config.ack_timeout_ns > 0:
            expiry = now + state.config.ack_timeout_ns
            for sample in samples:
                state.filter[sample] = expiry
            state.unacked[list_id] = (expiry, samples)
        self._ready.append(DigestList(digest_id, list_id, samples, now))


# --- log_msg ----------------------------------------------------------------------------


class LogMsgFormat:
    """A precompiled ``log_msg(format, {args})`` format string (BMv2 ``log_msg`` primitive).

    Each ``{...}`` (from an unescaped ``{`` to the next unescaped ``}``) is replaced by the
    next argument in decimal; ``\\{`` and ``\\}`` print literal braces. Deviation from
    BMv2: BMv2's scanner misses a placeholder at position 0 and one directly following a
    substituted value (then aborts the switch with "Not enough arguments"); p4emu
    substitutes every placeholder.
    """

    __slots__ = ("_pieces", "format", "placeholders")

    def __init__(self, format: str) -> None:
        self.format = format
        pieces: list[str] = []
        current: list[str] = []
        i = 0
        n = len(format)
        while i < n:
            ch = format[i]
            if ch == "\\" and i + 1 < n and format[i + 1] in "{}":
                current.append(format[i + 1])
                i += 2
                continue
            if ch == "{":
                j = i + 1
                while j < n and not (format[j] == "}" and format[j - 1] != "\\"):
                    j += 1
                if j >= n:
                    raise LogMsgFormatError(f'log_msg: no matching "}}" in {format!r}')
                pieces.append("".join(current))
                current = []
                i = j + 1
                continue
            current.append(ch)
            i += 1
        pieces.append("".join(current))
        self._pieces = pieces
        self.placeholders = len(pieces) - 1

    def render(self, args: Sequence[int]) -> str:
        if len(args) != self.placeholders:
            raise LogMsgFormatError(
                f"log_msg {self.format!r}: format expects {self.placeholders} argument(s), "
                f"got {len(args)}"
            )
        pieces = self._pieces
        out = [pieces[0]]
        for arg, piece in zip(args, pieces[1:]):
            out.append(str(arg))
            out.append(piece)
        return "".join(out)


def format_log_msg(format: str, args: Sequence[int] = ()) -> str:
    """One-shot :class:`LogMsgFormat` rendering."""
    return LogMsgFormat(format).render(args)
