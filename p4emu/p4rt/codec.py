"""P4Runtime bytestrings, match fields, action parameters and ``P4Data`` values.

Bytestrings (P4Runtime spec "Bytestrings"): a value is sent big-endian in any number of
bytes as long as it fits the P4Info bitwidth once leading zero bytes (sign-extension
bytes for ``int<W>``) are removed, so ``\\x00\\x63`` is accepted for ``bit<8>`` 99.
Replies always use the canonical (shortest) form; zero is ``\\x00``. A value that does
not fit, and an empty string, are refused with INVALID_ARGUMENT (the code PI's
``bytestring_p4rt_to_pi`` uses; PI pads an empty string to zero, the specification
rejects it, p4emu follows the specification).

Match fields (spec "Match Format"): a don't-care field is omitted; writing one
explicitly (ternary mask 0, lpm prefix 0, full range) is INVALID_ARGUMENT, as are an
lpm value with bits past the prefix, a ternary value with bits outside the mask, a range
with low > high, a field id that is unknown or repeated, a match type that is not the
field's, and a missing exact field.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from google.protobuf.internal.containers import RepeatedCompositeFieldContainer

from p4emu.p4rt.exceptions import invalid, unimplemented
from p4emu.p4rt_client.schema import ONEOF_OF_KIND, FieldSchema, encode_unsigned
from p4emu.proto import p4d, p4r
from p4emu.runtime.tables import Exact, Lpm, MatchValue, OptionalMatch, Range, Ternary

# --------------------------------------------------------------------------- bytestrings


# Bytes of a refused value quoted in an error message; the rest is summarised.
_QUOTED_BYTES = 16


def _quote(data: bytes) -> str:
    """``0x...`` of a bytestring for an error message, shortened when long."""
    if len(data) <= _QUOTED_BYTES:
        return f"0x{data.hex()}"
    return f"0x{data[:_QUOTED_BYTES].hex()}... ({len(data)} bytes)"


def _significant_bits(data: bytes) -> int:
    """Bits of the unsigned value of ``data`` (leading zeros dropped), without converting it."""
    stripped = data.lstrip(b"\0")
    if not stripped:
        return 0
    return (len(stripped) - 1) * 8 + stripped[0].bit_length()


def decode_unsigned(data: bytes, width: int, what: str) -> int:
    """The ``bit<width>`` value of a P4Runtime bytestring (INVALID_ARGUMENT if it does not fit).

    The width is checked on the bytes before any conversion, so a huge value costs nothing
    and is reported by its length, not converted to a number.
    """
    if not data:
        raise invalid(f"{what}: empty bytestring (zero is encoded as \\x00)")
    bits = _significant_bits(data)
    if bits > width:
        raise invalid(
            f"{what}: bytestring {_quote(data)} does not fit in {width} bits "
            f"(it has {bits} significant bits)"
        )
    return int.from_bytes(data, "big")


def decode_signed(data: bytes, width: int, what: str) -> int:
    """The ``int<width>`` value (a Python int, possibly negative) of a bytestring."""
    if not data:
        raise invalid(f"{what}: empty bytestring (zero is encoded as \\x00)")
    # Sign-extension bytes carry no information; what remains must fit in width bits (+1
    # byte of slack for the sign), checked before the bytes become a number.
    start = 0
    while start + 1 < len(data) and (
        (data[start] == 0x00 and data[start + 1] < 0x80)
        or (data[start] == 0xFF and data[start + 1] >= 0x80)
    ):
        start += 1
    if (len(data) - start) * 8 > width + 8:
        raise invalid(f"{what}: bytestring {_quote(data)} does not fit in int<{width}>")
    value = int.from_bytes(data[start:], "big", signed=True)
    if not -(1 << (width - 1)) <= value < (1 << (width - 1)):
        raise invalid(f"{what}: bytestring {_quote(data)} ({value}) does not fit in int<{width}>")
    return value


def encode_signed(value: int) -> bytes:
    """Canonical two's-complement bytestring of a signed value (shortest, sign-extended)."""
    nbits = (value.bit_length() if value >= 0 else (~value).bit_length()) + 1
    return value.to_bytes(max(1, (nbits + 7) // 8), "big", signed=True)


# --------------------------------------------------------------------------- match fields


class Specs(tuple):
    """The specs of a table key or an action's parameters with their id -> position index,
    built once (per table / action, by :class:`p4emu.p4rt.context.Context`), not per call."""

    by_id: dict[int, int]

    def __new__(cls, specs: Iterable[FieldSchema]) -> Specs:
        self = super().__new__(cls, specs)
        self.by_id = {spec.id: index for index, spec in enumerate(self)}
        return self


def _index_of(specs: Sequence[FieldSchema]) -> dict[int, int]:
    if isinstance(specs, Specs):
        return specs.by_id
    return {spec.id: index for index, spec in enumerate(specs)}


def decode_matches(
    matches: Iterable[p4r.FieldMatch], specs: Sequence[FieldSchema], where: str
) -> list[MatchValue]:
    """Runtime match values (one per spec, ``None`` = don't care) of P4Runtime matches."""
    by_id = _index_of(specs)
    out: list[MatchValue] = [None] * len(specs)
    seen: set[int] = set()
    for match in matches:
        index = by_id.get(match.field_id)
        if index is None:
            raise invalid(f"{where}: unknown match field id {match.field_id}")
        if match.field_id in seen:
            raise invalid(f"{where}: match field id {match.field_id} given twice")
        seen.add(match.field_id)
        out[index] = _decode_match(match, specs[index], where)
    for spec, value in zip(specs, out):
        if value is None and spec.kind == "EXACT":
            raise invalid(f"{where}: exact match field {spec.name} (id {spec.id}) is missing")
    return out


def lpm_padding(width: int) -> int:
    """Bits a ``width``-bit LPM key's P4Runtime prefix length counts beyond the field.

    BMv2 1.15 (through PI) takes an LPM prefix length as counted from the first bit of the
    key's bytestring, the field padded at the front to whole bytes, and PI checks the
    trailing zeros over that padded width: on a ``bit<7>`` key, ``0x20/3`` (``010....``)
    matches ``01.....`` and ``0x10/3`` is refused. p4emu's tables hold prefixes of the
    field, so a written prefix ``p`` is the field's ``p - lpm_padding(width)`` (and back
    on reads). Measured on BMv2: docs/conformance.md, "LPM keys whose width is not a
    multiple of 8".
    """
    return -width % 8


def _decode_match(match: p4r.FieldMatch, spec: FieldSchema, where: str) -> MatchValue:
    kind = match.WhichOneof("field_match_type")
    expected = ONEOF_OF_KIND.get(spec.kind)  # also the kind's name in messages: "exact"...
    what = f"{where}: match field {spec.name} (id {spec.id}, {expected}, {spec.bitwidth} bits)"
    if kind is None:
        raise invalid(f"{what}: no match value set")
    if kind == "other":
        raise unimplemented(f"{what}: 'other' match types are not supported")
    if kind != expected:
        raise invalid(f"{what}: got a {kind} match for a {expected} field")
    width = spec.bitwidth
    full = (1 << width) - 1
    if kind == "exact":
        return Exact(decode_unsigned(match.exact.value, width, f"{what} value"))
    if kind == "optional":
        return OptionalMatch(decode_unsigned(match.optional.value, width, f"{what} value"))
    if kind == "lpm":
        value = decode_unsigned(match.lpm.value, width, f"{what} value")
        prefix = match.lpm.prefix_len
        if prefix < 0 or prefix > width:
            raise invalid(f"{what}: prefix length {prefix} out of [1, {width}]")
        if prefix == 0:
            raise invalid(f"{what}: a don't-care lpm match must be omitted, not given prefix 0")
        if value & ((1 << (width - prefix)) - 1):
            raise invalid(f"{what}: value 0x{value:x} has bits set past the /{prefix} prefix")
        pad = lpm_padding(width)
        if value & ((1 << (width + pad - prefix)) - 1):
            raise invalid(
                f"{what}: value 0x{value:x}/{prefix}: invalid LPM value, incorrect number of "
                f"trailing zeros (BMv2 counts the prefix in the key's {width + pad}-bit "
                f"bytestring: its last {width + pad - prefix} bits must be 0)"
            )
        return Lpm(value, max(0, prefix - pad))
    if kind == "ternary":
        value = decode_unsigned(match.ternary.value, width, f"{what} value")
        mask = decode_unsigned(match.ternary.mask, width, f"{what} mask")
        if mask == 0:
            raise invalid(f"{what}: a don't-care ternary match must be omitted, not given mask 0")
        if value & ~mask:
            raise invalid(f"{what}: value 0x{value:x} has bits outside mask 0x{mask:x}")
        return Ternary(value, mask)
    # range
    low = decode_unsigned(match.range.low, width, f"{what} low")
    high = decode_unsigned(match.range.high, width, f"{what} high")
    if low > high:
        raise invalid(f"{what}: range low {low} > high {high}")
    if low == 0 and high == full:
        raise invalid(f"{what}: a don't-care range match must be omitted, not given [0, {full}]")
    return Range(low, high)


def encode_matches(
    values: Sequence[MatchValue], specs: Sequence[FieldSchema]
) -> list[p4r.FieldMatch]:
    """Canonical P4Runtime matches (don't-care fields omitted) of runtime match values."""
    holder = p4r.TableEntry()
    add_matches(holder.match, values, specs)
    return list(holder.match)


def add_matches(
    out: RepeatedCompositeFieldContainer[p4r.FieldMatch],
    values: Sequence[MatchValue],
    specs: Sequence[FieldSchema],
) -> None:
    """Appends the canonical matches of ``values`` to the repeated field ``out`` (building
    them in place, without the copy ``extend`` makes)."""
    for spec, value in zip(specs, values):
        if value is None:
            continue
        match = out.add(field_id=spec.id)
        if isinstance(value, Exact):
            kind = spec.kind
            if kind == "EXACT":
                match.exact.value = encode_unsigned(value.value)
            elif kind == "LPM":
                match.lpm.value = encode_unsigned(value.value)
                match.lpm.prefix_len = spec.bitwidth
            elif kind == "TERNARY":
                match.ternary.value = encode_unsigned(value.value)
                match.ternary.mask = encode_unsigned((1 << spec.bitwidth) - 1)
            elif kind == "OPTIONAL":
                match.optional.value = encode_unsigned(value.value)
            else:
                match.range.low = match.range.high = encode_unsigned(value.value)
        elif isinstance(value, Lpm):
            match.lpm.value = encode_unsigned(value.value)
            match.lpm.prefix_len = value.prefix_len + lpm_padding(spec.bitwidth)
        elif isinstance(value, Ternary):
            match.ternary.value = encode_unsigned(value.value)
            match.ternary.mask = encode_unsigned(value.mask)
        elif isinstance(value, Range):
            match.range.low = encode_unsigned(value.low)
            match.range.high = encode_unsigned(value.high)
        else:
            match.optional.value = encode_unsigned(value.value)


# --------------------------------------------------------------------------- actions


def decode_params(
    params: Iterable[p4r.Action.Param], specs: Sequence[FieldSchema], where: str
) -> tuple[int, ...]:
    """Argument values in parameter order; every parameter must be given exactly once."""
    by_id = _index_of(specs)
    values: list[int | None] = [None] * len(specs)
    for param in params:
        index = by_id.get(param.param_id)
        if index is None:
            raise invalid(f"{where}: unknown parameter id {param.param_id}")
        if values[index] is not None:
            raise invalid(f"{where}: parameter id {param.param_id} given twice")
        spec = specs[index]
        values[index] = decode_unsigned(
            param.value, spec.bitwidth, f"{where}: parameter {spec.name} (id {spec.id})"
        )
    missing = [spec.name for spec, value in zip(specs, values) if value is None]
    if missing:
        raise invalid(f"{where}: missing parameter(s) {', '.join(missing)}")
    return tuple(values)  # type: ignore[arg-type]


def encode_params(args: Sequence[int], specs: Sequence[FieldSchema]) -> list[p4r.Action.Param]:
    return [
        p4r.Action.Param(param_id=spec.id, value=encode_unsigned(arg))
        for spec, arg in zip(specs, args)
    ]


def add_params(
    out: RepeatedCompositeFieldContainer[p4r.Action.Param],
    args: Sequence[int],
    specs: Sequence[FieldSchema],
) -> None:
    """Appends the canonical parameters to the repeated field ``out``, built in place."""
    for spec, arg in zip(specs, args):
        out.add(param_id=spec.id, value=encode_unsigned(arg))


def fast_params(
    params: Sequence[p4r.Action.Param], specs: Sequence[FieldSchema]
) -> tuple[int, ...] | None:
    """:func:`decode_params` of the usual request — every parameter once, in P4Info order,
    in at most the parameter's own bytes, fitting its width — or None for anything else
    (then :func:`decode_params` decides, with its error). Same values, less work."""
    if len(params) != len(specs):
        return None
    values = []
    for param, spec in zip(params, specs):
        data = param.value
        if param.param_id != spec.id or not data or len(data) > (spec.bitwidth + 7) >> 3:
            return None
        value = int.from_bytes(data, "big")
        if value >> spec.bitwidth:
            return None
        values.append(value)
    return tuple(values)


# --------------------------------------------------------------------------- P4Data


@dataclass(frozen=True)
class BitstringType:
    """The P4Data shape p4emu supports for register cells: ``bit<W>`` or ``int<W>``."""

    width: int
    signed: bool = False


def decode_p4data(data: p4d.P4Data, type_: BitstringType, what: str) -> int:
    """The cell value (stored as an unsigned ``width``-bit int) of a ``P4Data``."""
    kind = data.WhichOneof("data")
    if kind != "bitstring":
        shown = kind or "nothing"
        raise invalid(f"{what}: expected a bitstring P4Data for {_type_name(type_)}, got {shown}")
    if type_.signed:
        value = decode_signed(data.bitstring, type_.width, what)
        return value & ((1 << type_.width) - 1)
    return decode_unsigned(data.bitstring, type_.width, what)


def encode_p4data(value: int, type_: BitstringType) -> p4d.P4Data:
    if type_.signed and value >> (type_.width - 1):
        return p4d.P4Data(bitstring=encode_signed(value - (1 << type_.width)))
    if type_.signed:
        return p4d.P4Data(bitstring=encode_signed(value))
    return p4d.P4Data(bitstring=encode_unsigned(value))


def _type_name(type_: BitstringType) -> str:
    return f"{'int' if type_.signed else 'bit'}<{type_.width}>"
