"""Bit-level access to packet bytes: header extraction and deparsing.

All values are big-endian (network order, most significant bit first), as BMv2 lays out
header fields. Values are plain Python ints; signed (``int<W>``) fields are handled in
two's complement by masking, so a negative int written to a field is stored as BMv2
stores it.

Main API
--------
- :class:`HeaderLayout` — precompiled extractor/emitter for one header type, built once
  from its field widths (at most one ``None`` width marks the varbit field)::

      ipv4 = HeaderLayout([4, 4, 8, 16, 16, 3, 13, 8, 8, 16, 32, 32], name="ipv4_t")
      fields = ipv4.extract(data, bit_offset)     # -> list[int], raises PacketTooShort
      raw = ipv4.emit(fields)                     # -> bytes

  Byte-aligned headers whose fields are all 8/16/32/64 bits wide use a precompiled
  ``struct.Struct``; other fixed layouts use generated shift/mask code; varbit layouts
  use a generic loop.
- :func:`peek_bits` — read ``width`` bits at any bit offset (``lookahead``).
- :class:`BitWriter` — append fields of any width MSB-first and get bytes zero-padded at
  the end (the BMv2 rule for field lists fed to hashes and checksums; see
  :func:`pack_bits`).

Errors: a packet shorter than what is extracted raises :class:`PacketTooShort` (the
parser turns it into ``error.PacketTooShort`` and keeps the headers extracted so far);
a varbit size above its maximum raises :class:`HeaderTooShort`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence

from p4emu.runtime.exceptions import (
    FieldValueError,
    HeaderLayoutError,
    HeaderTooShort,
    PacketTooShort,
)

Extractor = Callable[[bytes, int], list[int]]
Emitter = Callable[[Sequence[int]], bytes]

_STRUCT_CODES = {8: "B", 16: "H", 32: "I", 64: "Q"}


def mask_of(width: int) -> int:
    """All-ones value of ``width`` bits."""
    return (1 << width) - 1


def peek_bits(data: bytes | bytearray | memoryview, bit_offset: int, width: int) -> int:
    """Return the ``width``-bit big-endian value starting at ``bit_offset``.

    Raises :class:`PacketTooShort` if the packet ends before ``bit_offset + width``.
    """
    if width == 0:
        return 0
    available = len(data) * 8 - bit_offset
    if width > available:
        raise PacketTooShort(width, max(available, 0))
    start = bit_offset >> 3
    lead = bit_offset & 7
    nbytes = (lead + width + 7) >> 3
    value = int.from_bytes(data[start : start + nbytes], "big")
    return (value >> (nbytes * 8 - lead - width)) & ((1 << width) - 1)


def pack_bits(fields: Iterable[tuple[int, int]]) -> bytes:
    """Concatenate ``(value, width)`` pairs MSB-first; pad the last byte with zero bits.

    This is how BMv2 (``BufBuilder``) serializes a v1model field list before hashing or
    checksumming: fields are packed bit by bit with no alignment, and a total that is not
    a multiple of 8 is completed with zero bits at the end (least significant side).
    """
    acc = 0
    nbits = 0
    for value, width in fields:
        acc = (acc << width) | (value & ((1 << width) - 1))
        nbits += width
    pad = -nbits & 7
    return (acc << pad).to_bytes((nbits + pad) >> 3, "big")


class BitWriter:
    """Accumulates fields MSB-first; :meth:`to_bytes` pads with zeros at the end."""

    __slots__ = ("_acc", "nbits")

    def __init__(self) -> None:
        self._acc = 0
        self.nbits = 0

    def append(self, value: int, width: int) -> None:
        """Append the low ``width`` bits of ``value``."""
        self._acc = (self._acc << width) | (value & ((1 << width) - 1))
        self.nbits += width

    def append_bytes(self, data: bytes) -> None:
        """Append whole bytes (at any bit alignment)."""
        if data:
            self.append(int.from_bytes(data, "big"), len(data) * 8)

    def to_bytes(self) -> bytes:
        pad = -self.nbits & 7
        return (self._acc << pad).to_bytes((self.nbits + pad) >> 3, "big")


class HeaderLayout:
    """Precompiled extract/emit functions for a header made of fields of given widths.

    ``widths`` lists the field widths in declaration order; at most one may be ``None``
    (the varbit field), whose maximum width is ``varbit_max``.

    Attributes:
        fixed_bits: total width of the fixed-width fields.
        nbytes: ``fixed_bits`` rounded up to bytes (the header's size without varbit).
        extract: ``extract(data, bit_offset[, varbit_bits])`` -> ``list[int]``.
        emit: ``emit(values[, varbit_bits])`` -> ``bytes``; values are truncated to their
            widths (P4 semantics for ``int<W>``/``bit<W>``). The header's total width must
            be a multiple of 8 (BMv2 only deparses whole bytes); use :meth:`emit_bits` to
            append to a :class:`BitWriter` otherwise.
    """

    __slots__ = (
        "_generic",
        "emit",
        "extract",
        "fixed_bits",
        "name",
        "nbytes",
        "varbit_index",
        "varbit_max",
        "widths",
    )

    def __init__(
        self, widths: Sequence[int | None], name: str = "header", varbit_max: int = 0
    ) -> None:
        self.name = name
        self.widths = tuple(widths)
        if not self.widths:
            raise HeaderLayoutError(f"{name}: a header needs at least one field")
        varbits = [i for i, w in enumerate(self.widths) if w is None]
        if len(varbits) > 1:
            raise HeaderLayoutError(f"{name}: at most one varbit field is allowed")
        for w in self.widths:
            if w is not None and w <= 0:
                raise HeaderLayoutError(f"{name}: field width must be positive, got {w}")
        self.varbit_index = varbits[0] if varbits else -1
        self.varbit_max = varbit_max
        if self.varbit_index >= 0 and varbit_max <= 0:
            raise HeaderLayoutError(f"{name}: a varbit field needs a positive maximum width")
        self.fixed_bits = sum(w for w in self.widths if w is not None)
        self.nbytes = (self.fixed_bits + 7) >> 3
        if self.varbit_index >= 0:
            self.extract = self._extract_varbit  # type: ignore[assignment]
            self.emit = self._emit_varbit  # type: ignore[assignment]
        else:
            fixed = [w for w in self.widths if w is not None]
            self._generic = _compile_split(fixed, name)
            self.extract = _compile_extractor(fixed, name, self._generic)
            self.emit = _compile_emitter(fixed, name)

    def __repr__(self) -> str:
        return f"HeaderLayout({list(self.widths)!r}, name={self.name!r})"

    def emit_bits(self, writer: BitWriter, values: Sequence[int], varbit_bits: int = 0) -> None:
        """Append the header's fields to ``writer`` (any bit alignment)."""
        if len(values) != len(self.widths):
            raise FieldValueError(
                f"{self.name}: expected {len(self.widths)} field values, got {len(values)}"
            )
        for value, width in zip(values, self.widths):
            writer.append(value, varbit_bits if width is None else width)

    # -- varbit (generic, slower) path ----------------------------------------------------

    def _check_varbit(self, varbit_bits: int) -> None:
        if varbit_bits < 0 or varbit_bits > self.varbit_max:
            raise HeaderTooShort(varbit_bits, self.varbit_max)

    def _extract_varbit(
        self, data: bytes | bytearray | memoryview, bit_offset: int, varbit_bits: int = 0
    ) -> list[int]:
        self._check_varbit(varbit_bits)
        total = self.fixed_bits + varbit_bits
        available = len(data) * 8 - bit_offset
        if total > available:
            raise PacketTooShort(total, max(available, 0), self.name)
        value = peek_bits(data, bit_offset, total)
        out: list[int] = []
        remaining = total
        for width in self.widths:
            w = varbit_bits if width is None else width
            remaining -= w
            out.append((value >> remaining) & ((1 << w) - 1))
        return out

    def _emit_varbit(self, values: Sequence[int], varbit_bits: int = 0) -> bytes:
        self._check_varbit(varbit_bits)
        if (self.fixed_bits + varbit_bits) & 7:
            raise FieldValueError(
                f"{self.name}: header of {self.fixed_bits + varbit_bits} bits is not a whole "
                "number of bytes; use emit_bits()"
            )
        writer = BitWriter()
        self.emit_bits(writer, values, varbit_bits)
        return writer.to_bytes()


def _field_shifts(widths: Sequence[int], total_bits: int) -> list[tuple[int, int]]:
    """(shift, mask) of each field inside a ``total_bits``-wide big-endian integer."""
    out = []
    consumed = 0
    for width in widths:
        consumed += width
        out.append((total_bits - consumed, (1 << width) - 1))
    return out


def _split_expr(widths: Sequence[int], total_bits: int, var: str) -> str:
    parts = []
    for i, (shift, mask) in enumerate(_field_shifts(widths, total_bits)):
        shifted = f"({var} >> {shift})" if shift else var
        # the top field of an exactly-sized integer needs no mask
        parts.append(shifted if i == 0 and total_bits == sum(widths) else f"{shifted} & {mask}")
    return "[" + ", ".join(parts) + "]"


def _compile_split(widths: Sequence[int], name: str) -> Callable[[int], list[int]]:
    """Generate ``split(v) -> list`` for a value holding exactly ``sum(widths)`` bits."""
    total = sum(widths)
    src = f"def split(v):\n    return {_split_expr(widths, total, 'v')}\n"
    namespace: dict[str, object] = {}
    exec(compile(src, f"<split {name}>", "exec"), namespace)
    return namespace["split"]  # type: ignore[return-value]


def _compile_extractor(
    widths: Sequence[int], name: str, split: Callable[[int], list[int]]
) -> Extractor:
    total = sum(widths)
    nbytes = (total + 7) >> 3
    namespace: dict[str, object] = {
        "PacketTooShort": PacketTooShort,
        "split": split,
        "from_bytes": int.from_bytes,
        "name": name,
    }
    aligned_struct = all(w in _STRUCT_CODES for w in widths)
    if aligned_struct:
        namespace["unpack_from"] = struct.Struct(
            ">" + "".join(_STRUCT_CODES[w] for w in widths)
        ).unpack_from
        fast = "    return list(unpack_from(data, start))\n"
    else:
        fast = (
            f"    v = from_bytes(data[start:end], 'big')\n"
            f"    return {_split_expr(widths, nbytes * 8, 'v')}\n"
        )
    src = (
        "def extract(data, bit_offset):\n"
        "    if bit_offset & 7:\n"
        "        return slow(data, bit_offset)\n"
        "    start = bit_offset >> 3\n"
        f"    end = start + {nbytes}\n"
        "    if end > len(data):\n"
        f"        raise PacketTooShort({total}, max(len(data) * 8 - bit_offset, 0), name)\n"
        + fast
        + "\n"
        "def slow(data, bit_offset):\n"
        "    available = len(data) * 8 - bit_offset\n"
        f"    if available < {total}:\n"
        f"        raise PacketTooShort({total}, max(available, 0), name)\n"
        "    start = bit_offset >> 3\n"
        "    lead = bit_offset & 7\n"
        f"    n = (lead + {total} + 7) >> 3\n"
        "    v = from_bytes(data[start:start + n], 'big')\n"
        f"    return split((v >> (n * 8 - lead - {total})) & {(1 << total) - 1})\n"
    )
    exec(compile(src, f"<extract {name}>", "exec"), namespace)
    return namespace["extract"]  # type: ignore[return-value]


def _compile_emitter(widths: Sequence[int], name: str) -> Emitter:
    total = sum(widths)
    count = len(widths)
    namespace: dict[str, object] = {"FieldValueError": FieldValueError, "name": name}
    if total & 7:
        src = (
            "def emit(values):\n"
            f"    raise FieldValueError(name + ': header of {total} bits is not a whole "
            "number of bytes; use emit_bits()')\n"
        )
    elif all(w in _STRUCT_CODES for w in widths):
        names = [f"f{i}" for i in range(count)]
        unpack = ", ".join(names) + ("," if count == 1 else "")
        namespace["pack"] = struct.Struct(">" + "".join(_STRUCT_CODES[w] for w in widths)).pack
        masked = ", ".join(f"{var} & {(1 << w) - 1}" for var, w in zip(names, widths))
        src = (
            "def emit(values):\n"
            "    try:\n"
            f"        {unpack} = values\n"
            "    except ValueError:\n"
            f"        raise FieldValueError(name + ': expected {count} field values, got '"
            " + str(len(values))) from None\n"
            f"    return pack({masked})\n"
        )
    else:
        names = [f"f{i}" for i in range(count)]
        unpack = ", ".join(names) + ("," if count == 1 else "")
        terms = []
        for var, (shift, mask) in zip(names, _field_shifts(widths, total)):
            terms.append(f"(({var} & {mask}) << {shift})" if shift else f"({var} & {mask})")
        src = (
            "def emit(values):\n"
            "    try:\n"
            f"        {unpack} = values\n"
            "    except ValueError:\n"
            f"        raise FieldValueError(name + ': expected {count} field values, got '"
            " + str(len(values))) from None\n"
            f"    return ({' | '.join(terms)}).to_bytes({total >> 3}, 'big')\n"
        )
    exec(compile(src, f"<emit {name}>", "exec"), namespace)
    return namespace["emit"]  # type: ignore[return-value]
