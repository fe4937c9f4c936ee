"""p4emu.backend.wide and the lowering of wide expressions to halves
(p4emu.backend.body.expressions): which fields are split and how their halves are named,
the constants of halves, and the half codes of shifts, slices and bitwise operations
evaluated against Python's ``int`` results at the edges (0, 2**64 - 1, 2**64,
2**128 - 1; shifts by 0, 1, 63, 64, 65 and 127)."""

from __future__ import annotations

import pytest

from p4emu.backend import cfields, native, wide
from p4emu.backend.body.expressions import (
    Half,
    Pair,
    half_mask,
    pair_bitwise,
    pair_shl,
    pair_shr,
)
from p4emu.frontend import types as t

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
