"""p4emu.backend.wide and the lowering of wide expressions to halves
(p4emu.backend.body.expressions): which fields are split and how their halves are named,
the constants of halves, and the half codes of shifts, slices and bitwise operations
evaluated against Python's ``int`` results at the edges (0, 2**64 - 1, 2**64,
2**128 - 1; shifts by 0, 1, 63, 64, 65 and 127)."""

from __future__ import annotations

import re

import pytest
from backend_helpers import switch_on_path

from p4emu.backend import cfields, native, wide
from p4emu.backend.body.expressions import (
    Half,
    Pair,
    half_mask,
    pair_bitwise,
    pair_shl,
    pair_shr,
)
from p4emu.frontend import load_program_text
from p4emu.frontend import types as t
from p4emu.runtime.clock import VirtualClock
from p4emu.switch import Switch

M64 = (1 << 64) - 1
EDGES = [0, 1, M64, 1 << 64, (1 << 64) + 1, 1 << 127, (1 << 128) - 1, 0x0123456789ABCDEF << 60]
SHIFTS = [0, 1, 31, 63, 64, 65, 96, 127]


def test_unsigned_fields_of_65_to_128_bits_are_split() -> None:
    assert wide.split_width(t.BitsType(128, False)) == 128
    assert wide.split_width(t.BitsType(65, False)) == 65
    assert wide.split_width(t.BitsType(64, False)) is None
    assert wide.split_width(t.BitsType(129, False)) is None
    assert wide.split_width(t.BitsType(128, True)) is None
    assert wide.split_width(t.BoolType()) is None


def test_half_names_never_take_another_attribute() -> None:
    bits = t.BitsType(128, False)
    found = wide.split_fields([("a", bits), ("a_hi_", t.BitsType(8, False)), ("b", bits)])
    assert found["a"] == wide.Split("a_hi__", "a_lo_", 128)
    assert found["b"] == wide.Split("b_hi_", "b_lo_", 128)
    assert "a_hi_" not in found
    assert found["a"].hi_bits == 64
    header = t.HeaderType("h", [t.FieldInfo("x", t.BitsType(72, False))])
    assert wide.type_splits(header) == {"x": wide.Split("x_hi_", "x_lo_", 72)}


def test_constants_beyond_31_bits_are_named_module_constants() -> None:
    assert wide.constant(65535) == "65535"
    assert wide.constant((1 << 31) - 1) == str((1 << 31) - 1)
    name = wide.constant(1 << 31)
    assert name == "_W_80000000" and wide.constant_value(name) == 1 << 31
    assert wide.constant_value("x_W_1") is None
    lines = wide.constant_lines([wide.constant(M64), name, name])
    assert lines == ["_W_80000000 = 2147483648", f"_W_ffffffffffffffff = {M64}"]
    assert wide.constants_in("import x\n" + "\n".join(lines) + "\n") == [
        "_W_80000000",
        "_W_ffffffffffffffff",
    ]


NAMED_TEXT = """import x
def f(a, b):
    m = (a - b) & 4294967295
    n = a | 2147483648
    o = 9223372036854775807 ^ a
    c = a < 4294967296 and 2147483648 <= b
    keep = (a + 4294967295, a * 4294967296, a << 40, a & 2147483647, a & 9223372036854775808)
    neg = a & -4294967296
    s = "& 4294967295"
    return m, n, o, c, keep, neg, s
"""


def test_literals_past_31_bits_in_bitwise_operations_and_comparisons_are_named() -> None:
    named = wide.name_literals(NAMED_TEXT, 1)
    lines = named.split("\n")
    # the definitions at the line given, sorted; only the bitwise and compared operands
    assert lines[:5] == [
        "import x",
        "_K_100000000 = 4294967296",
        "_K_7fffffffffffffff = 9223372036854775807",
        "_K_80000000 = 2147483648",
        "_K_ffffffff = 4294967295",
    ]
    assert "    m = (a - b) & _K_ffffffff" in lines
    assert "    n = a | _K_80000000" in lines
    assert "    o = _K_7fffffffffffffff ^ a" in lines
    assert "    c = a < _K_100000000 and _K_80000000 <= b" in lines
    # arithmetic operands, literals of 31 bits or of 64, negative ones and strings stay
    assert (
        "    keep = (a + 4294967295, a * 4294967296, a << 40, a & 2147483647, a & 9223372036854775808)"
        in lines
    )
    assert "    neg = a & -4294967296" in lines
    assert '    s = "& 4294967295"' in lines
    assert wide.signed_constants_in(named) == [
        "_K_100000000",
        "_K_7fffffffffffffff",
        "_K_80000000",
        "_K_ffffffff",
    ]
    assert wide.signed_constant_value("_K_ffffffff") == (1 << 32) - 1
    assert wide.signed_constant_value("_W_ffffffff") is None
    assert wide.name_literals("a = b & 255\n", 0) == "a = b & 255\n"  # nothing to name
    # the same results (pure): edges of the mask, below zero, the comparisons
    plain: dict[str, object] = {}
    renamed: dict[str, object] = {}
    exec(compile(NAMED_TEXT.replace("import x\n", ""), "plain", "exec"), plain)
    exec(compile(named.replace("import x\n", ""), "named", "exec"), renamed)
    for a, b in [
        (0, 0),
        (0, 1),
        (1 << 32, 3),
        (-5, 7),
        ((1 << 63) - 1, -(1 << 63)),
        (1 << 31, 1 << 31),
    ]:
        assert renamed["f"](a, b) == plain["f"](a, b)  # type: ignore[operator]


def test_named_literals_are_declared_long_long_and_proven_as_the_literals() -> None:
    pxd = native.declarations({"H": [("a", None)]}, signed_constants=["_K_ffffffff"])
    assert "cdef long long _K_ffffffff" in pxd.split("\n")
    classes: dict[str, list[tuple[str, str | None]]] = {"H": [("a", None), ("b", None)]}
    candidates = {"H": {"a": (0, (1 << 32) - 1), "b": (0, (1 << 32) - 1)}}
    for mask in ("4294967295", "_K_ffffffff"):
        source = f"def f(h: H):\n    h.a = (h.a - h.b) & {mask}\n    h.b = h.a | {mask}\n"
        typed = cfields.prove(source, classes, candidates, {})
        assert typed == {"H": {"a": cfields.C_TYPE, "b": cfields.C_TYPE}}, mask
    # a named literal past the field's interval, stored: dropped, as the literal would be
    source = "def f(h: H):\n    h.a = h.b | _K_100000000\n"
    assert cfields.prove(source, classes, candidates, {}) == {"H": {"b": cfields.C_TYPE}}


def _pair(width: int) -> Pair:
    return ("h", width - 64), ("l", 64)


def _eval(half: Half, value: int) -> int:
    names: dict[str, object] = {"h": value >> 64, "l": value & M64}
    code = half[0]
    for token in _constant_tokens(code):  # the constants, as the module defines them
        names[token] = wide.constant_value(token)
    result = eval(code, names)
    assert 0 <= result < 1 << 64, code  # no half leaves 64 bits (no C wrap)
    assert result < 1 << half[1], (code, half[1])  # within the bits the lowering assumed
    return int(result)


def _constant_tokens(code: str) -> list[str]:
    tokens = []
    for part in code.replace("(", " ").replace(")", " ").split():
        if part.startswith("_W_"):
            tokens.append(part)
    return tokens


def _value(pair: Pair, value: int) -> int:
    return (_eval(pair[0], value) << 64) | _eval(pair[1], value)


@pytest.mark.parametrize("width", [128, 72, 65])
def test_shifts_of_halves_are_pythons(width: int) -> None:
    top = (1 << width) - 1
    for value in EDGES:
        value &= top
        for n in SHIFTS:
            if n >= width:
                continue
            assert _value(pair_shr(_pair(width), n, wide.constant), value) == value >> n
            shifted = pair_shl(_pair(width), n, width, wide.constant)
            assert _value(shifted, value) == (value << n) & top, (value, n)


def test_masks_and_bitwise_operations_of_halves_are_pythons() -> None:
    pair = _pair(128)
    for value in EDGES:
        for bits in (0, 1, 31, 32, 48, 63, 64):
            masked = half_mask(pair[1], bits, wide.constant)
            assert _eval(masked, value) == value & M64 & ((1 << bits) - 1)
        ones = (wide.constant(M64), 64), (wide.constant(M64), 64)
        assert _value(pair_bitwise(pair, ones, "&"), value) == value
        assert pair_bitwise(pair, ones, "&") == pair  # an all-ones mask is no operation
        assert _value(pair_bitwise(pair, ones, "^"), value) == value ^ ((1 << 128) - 1)
        zero = ("0", 0), ("0", 0)
        assert pair_bitwise(pair, zero, "|") == pair
        assert pair_bitwise(pair, zero, "&") == zero


# ------------------------------------------------------------------ a stack's last


LAST_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header in_t { bit<8> tag; }
header sid_t { bit<128> sid; }
header out_t { bit<128> first; bit<128> second; bit<128> last; }
struct headers_t { in_t i; sid_t[3] sids; out_t o; }
struct meta_t { bit<128> first; bit<128> second; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.i);
        pkt.extract(hdr.sids.next);
        meta.first = hdr.sids.last.sid;
        pkt.extract(hdr.sids.next);
        meta.second = hdr.sids.last.sid;
        transition accept;
    }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.o.setValid();
        hdr.o.first = meta.first;
        hdr.o.second = meta.second;
        hdr.o.last = hdr.sids[1].sid;
        sm.egress_spec = 2;
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.o); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""
LAST_SIDS = [(0, M64), (1 << 64, (1 << 128) - 1), (0x0123456789ABCDEF << 60, 1 << 127), (5, 5)]


def _last_run(switch: Switch) -> list[tuple[int, int, int]]:
    results = []
    for a, b in LAST_SIDS:
        switch.inject(1, bytes([7]) + a.to_bytes(16, "big") + b.to_bytes(16, "big"))
        [(_, frame)] = switch.collect()
        out = frame[1:]
        results.append(tuple(int.from_bytes(out[i : i + 16], "big") for i in (0, 16, 32)))
    return results


def test_a_stacks_last_wide_field_is_stored_half_by_half_pure() -> None:
    # the header that ``stack.last`` gives bound to a local of its class first: its halves
    # are then read (C reads, compiled) instead of its field's property making one Python
    # int for the store's property to split again
    switch = Switch(load_program_text(LAST_PROGRAM, "last-pure.p4"), clock=VirtualClock())
    source = switch.program.source
    bound = re.findall(r"(last_\d+): H\d+_sid_t = stack_last\(", source)
    assert len(bound) == 2  # the parser's (P4 has ``last`` in parsers only)
    for local in bound:
        assert f"= {local}.sid_hi_, {local}.sid_lo_" in source
    assert "stack_last(" not in source.replace(" = stack_last(", "")  # no .sid of a call
    assert _last_run(switch) == [(a, b, b) for a, b in LAST_SIDS]


@pytest.mark.integration
@pytest.mark.skipif(native.build_missing() is not None, reason=str(native.build_missing()))
def test_a_stacks_last_wide_field_compiled_equals_pure(fresh_native: None) -> None:
    switch = switch_on_path(LAST_PROGRAM, "last-1.p4", "1")
    assert switch.program.shared is not None
    assert switch.program.shared.how == "compiled"
    assert _last_run(switch) == [(a, b, b) for a, b in LAST_SIDS]
