"""Width semantics of the generated code: wrap-around, signed ops, saturation, shifts,
slices, concatenation, casts, comparisons, conditionals, short-circuit evaluation."""

from __future__ import annotations

import pytest
from backend_helpers import Harness
from hypothesis import given, settings
from hypothesis import strategies as st

UNSIGNED = Harness(
    "bit<8> a; bit<8> b; bit<8> s;",
    "bit<8> add; bit<8> sub; bit<8> mul; bit<8> neg; bit<8> inv; bit<8> sadd; bit<8> ssub;"
    "bit<8> shl; bit<8> shr; bit<8> div; bit<8> mod; bit<8> band; bit<8> bor; bit<8> bxor;",
    """
    hdr.o.add = hdr.i.a + hdr.i.b;
    hdr.o.sub = hdr.i.a - hdr.i.b;
    hdr.o.mul = hdr.i.a * hdr.i.b;
    hdr.o.neg = -hdr.i.a;
    hdr.o.inv = ~hdr.i.a;
    hdr.o.sadd = hdr.i.a |+| hdr.i.b;
    hdr.o.ssub = hdr.i.a |-| hdr.i.b;
    hdr.o.shl = hdr.i.a << hdr.i.s;
    hdr.o.shr = hdr.i.a >> hdr.i.s;
    hdr.o.div = hdr.i.a / 8w3;
    hdr.o.mod = hdr.i.a % 8w7;
    hdr.o.band = hdr.i.a & hdr.i.b;
    hdr.o.bor = hdr.i.a | hdr.i.b;
    hdr.o.bxor = hdr.i.a ^ hdr.i.b;
    """,
)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255))
def test_unsigned_ops_wrap_modulo_2_pow_w(a: int, b: int, s: int) -> None:
    out = UNSIGNED.run(a=a, b=b, s=s)
    assert out["add"] == (a + b) % 256
    assert out["sub"] == (a - b) % 256
    assert out["mul"] == (a * b) % 256
    assert out["neg"] == (-a) % 256
    assert out["inv"] == 255 - a
    assert out["sadd"] == min(a + b, 255)
    assert out["ssub"] == max(a - b, 0)
    assert out["shl"] == ((a << s) % 256 if s < 8 else 0)
    assert out["shr"] == (a >> s)
    assert out["div"] == a // 3
    assert out["mod"] == a % 7
    assert out["band"] == a & b
    assert out["bor"] == a | b
    assert out["bxor"] == a ^ b


SIGNED = Harness(
    "int<8> a; int<8> b; bit<8> s;",
    "int<8> add; int<8> sub; int<8> mul; int<8> neg; int<8> sadd; int<8> ssub;"
    "int<8> shr; int<8> shl; bit<8> lt; bit<8> ge; int<16> wide; bit<16> wide_bits; bit<8> bits;",
    """
    hdr.o.add = hdr.i.a + hdr.i.b;
    hdr.o.sub = hdr.i.a - hdr.i.b;
    hdr.o.mul = hdr.i.a * hdr.i.b;
    hdr.o.neg = -hdr.i.a;
    hdr.o.sadd = hdr.i.a |+| hdr.i.b;
    hdr.o.ssub = hdr.i.a |-| hdr.i.b;
    hdr.o.shr = hdr.i.a >> hdr.i.s;
    hdr.o.shl = hdr.i.a << hdr.i.s;
    hdr.o.lt = (hdr.i.a < hdr.i.b) ? 8w1 : 8w0;
    hdr.o.ge = (hdr.i.a >= hdr.i.b) ? 8w1 : 8w0;
    hdr.o.wide = (int<16>)hdr.i.a;
    hdr.o.wide_bits = (bit<16>)(int<16>)hdr.i.a;
    hdr.o.bits = (bit<8>)hdr.i.a;
    """,
)


def _s8(value: int) -> int:
    value &= 0xFF
    return value - 256 if value & 0x80 else value


@settings(max_examples=60, deadline=None)
@given(st.integers(-128, 127), st.integers(-128, 127), st.integers(0, 12))
def test_signed_ops_use_twos_complement(a: int, b: int, s: int) -> None:
    out = SIGNED.run(a=a & 0xFF, b=b & 0xFF, s=s)
    assert _s8(out["add"]) == _s8(a + b)
    assert _s8(out["sub"]) == _s8(a - b)
    assert _s8(out["mul"]) == _s8(a * b)
    assert _s8(out["neg"]) == _s8(-a)
    assert _s8(out["sadd"]) == max(-128, min(127, a + b))
    assert _s8(out["ssub"]) == max(-128, min(127, a - b))
    assert _s8(out["shr"]) == a >> s  # arithmetic shift; >= width gives 0 or -1
    assert _s8(out["shl"]) == (_s8(a << s) if s < 8 else 0)
    assert out["lt"] == int(a < b)
    assert out["ge"] == int(a >= b)
    assert out["wide"] == a & 0xFFFF  # sign extension
    assert out["wide_bits"] == a & 0xFFFF
    assert out["bits"] == a & 0xFF


def test_shift_by_width_or_more_gives_zero() -> None:
    harness = Harness(
        "bit<32> a; bit<8> s;",
        "bit<32> shl; bit<32> shr; bit<32> shl_const; bit<32> big;",
        """
        hdr.o.shl = hdr.i.a << hdr.i.s;
        hdr.o.shr = hdr.i.a >> hdr.i.s;
        hdr.o.shl_const = hdr.i.a << 8w40;
        hdr.o.big = hdr.i.a << (bit<32>)0xFFFFFFFF;
        """,
    )
    out = harness.run(a=0xDEADBEEF, s=32)
    assert out == {"shl": 0, "shr": 0, "shl_const": 0, "big": 0}
    out = harness.run(a=0xDEADBEEF, s=4)
    assert out["shl"] == 0xEADBEEF0 and out["shr"] == 0x0DEADBEE


def test_slices_read_and_write_and_concatenation() -> None:
    harness = Harness(
        "bit<32> a; int<8> n;",
        "bit<8> hi; bit<4> mid; bit<32> patched; bit<40> joined; int<16> sjoined; bit<4> nlow;",
        """
        hdr.o.hi = hdr.i.a[31:24];
        hdr.o.mid = hdr.i.a[11:8];
        hdr.o.patched = hdr.i.a;
        hdr.o.patched[15:8] = 8w0xAB;
        hdr.o.patched[0:0] = 1w0;
        hdr.o.joined = hdr.i.a ++ hdr.i.a[31:24];
        hdr.o.sjoined = hdr.i.n ++ 8w0x01;
        hdr.o.nlow = hdr.i.n[3:0];
        """,
    )
    out = harness.run(a=0x12345679, n=0xF0)
    assert out["hi"] == 0x12
    assert out["mid"] == 0x6
    assert out["patched"] == 0x1234AB78
    assert out["joined"] == (0x12345679 << 8) | 0x12
    assert out["sjoined"] == 0xF001
    assert out["nlow"] == 0x0


def test_top_bit_slices_and_a_zero_concatenation_skip_their_no_op_operations() -> None:
    """A slice reaching a ``bit<W>`` value's top bit is the shift alone and ``x ++ 0`` the
    shift alone (every ``bit<W>`` value the generated code holds is below 2**W); a slice
    of an ``int<W>`` keeps its mask (its value may be negative)."""
    harness = Harness(
        "bit<128> a; int<16> n; bit<8> b;",
        "bit<48> prefix; bit<32> top; bit<128> whole; bit<128> rewritten; bit<8> ntop;"
        " bit<4> btop; bit<24> padded; bit<16> mid; bit<4> pad;",
        """
        hdr.o.prefix = hdr.i.a[127:80];
        hdr.o.top = hdr.i.a[127:96];
        hdr.o.whole = hdr.i.a[127:0];
        hdr.o.rewritten = hdr.i.a[127:96] ++ hdr.i.a[79:0] ++ 16w0;
        hdr.o.ntop = hdr.i.n[15:8];
        hdr.o.btop = hdr.i.b[7:4];
        hdr.o.padded = hdr.i.b ++ 16w0;
        hdr.o.mid = hdr.i.a[79:64];
        """,
    )
    assert harness.switch.program.shared is not None
    source = harness.switch.program.shared.source
    # the 128-bit field's slices are its high half's bits (p4emu.backend.wide)
    assert ".a_hi_ >> 16)" in source and ".a_hi_ >> 16) &" not in source
    assert ".a_hi_ & 65535)" in source  # not the top bits: masked
    assert ".n >> 8) & 255)" in source  # signed: masked
    assert "| 0)" not in source
    m128 = (1 << 128) - 1
    for a in (0, 1, (1 << 64) - 1, 1 << 64, 1 << 127, m128 - 1, m128, 0x0123456789ABCDEF << 60):
        for n in (-1, -(1 << 15), (1 << 15) - 1, 0, -256, 255):
            b = (a ^ n) & 0xFF
            out = harness.run(a=a, n=n, b=b)
            assert out == {
                "prefix": a >> 80,
                "top": a >> 96,
                "whole": a,
                "rewritten": (((a >> 96) << 80 | (a & ((1 << 80) - 1))) << 16) & m128,
                "ntop": (n & 0xFFFF) >> 8,
                "btop": b >> 4,
                "padded": b << 16,
                "mid": (a >> 64) & 0xFFFF,
                "pad": 0,
            }, (a, n)


def test_signed_slice_assignment_keeps_the_value_signed() -> None:
    harness = Harness(
        "int<8> a;",
        "int<8> r; bit<8> neg;",
        """
        int<8> x = hdr.i.a;
        x[7:4] = 4w0xF;
        hdr.o.r = x;
        hdr.o.neg = x < 0 ? 8w1 : 8w0;
        """,
    )
    out = harness.run(a=0x05)
    assert out == {"r": 0xF5, "neg": 1}


def test_casts_between_bool_bits_and_widths() -> None:
    harness = Harness(
        "bit<8> a; bit<1> f; bit<7> pad;",
        "bit<1> from_bool; bit<8> to_bool; bit<4> narrow; bit<16> widen; int<4> snarrow; bit<7> pad;",
        """
        bool b = (bool)hdr.i.f;
        hdr.o.from_bool = (bit<1>)(hdr.i.a > 8w10);
        hdr.o.to_bool = b ? 8w7 : 8w9;
        hdr.o.narrow = (bit<4>)hdr.i.a;
        hdr.o.widen = (bit<16>)hdr.i.a;
        hdr.o.snarrow = (int<4>)(int<8>)hdr.i.a;
        """,
    )
    out = harness.run(a=0xAB, f=1)
    assert out["from_bool"] == 1
    assert out["to_bool"] == 7
    assert out["narrow"] == 0xB
    assert out["widen"] == 0xAB
    assert out["snarrow"] == 0xB
    out = harness.run(a=3, f=0)
    assert out["from_bool"] == 0 and out["to_bool"] == 9


def test_logical_operators_short_circuit_table_applies() -> None:
    harness = Harness(
        "bit<8> a;",
        "bit<8> hits; bit<8> r;",
        """
        hdr.o.hits = 0;
        if (hdr.i.a == 1 && t.apply().hit) {
            hdr.o.r = 1;
        } else {
            hdr.o.r = 2;
        }
        """,
        locals_="""
        action mark() { hdr.o.hits = hdr.o.hits + 1; }
        table t { key = { hdr.i.a: exact; } actions = { mark; NoAction; } default_action = mark(); }
        """,
    )
    # a != 1: the table must not be applied (its default action would count)
    assert harness.run(a=0) == {"hits": 0, "r": 2}
    assert harness.run(a=1) == {"hits": 1, "r": 2}  # applied, missed


def test_ternary_and_comparisons_on_wide_values() -> None:
    harness = Harness(
        "bit<128> a; bit<128> b;",
        "bit<128> max; bit<8> eq;",
        """
        hdr.o.max = hdr.i.a > hdr.i.b ? hdr.i.a : hdr.i.b;
        hdr.o.eq = (hdr.i.a == hdr.i.b) ? 8w1 : 8w0;
        """,
    )
    big = (1 << 127) | 5
    assert harness.run(a=big, b=7) == {"max": big, "eq": 0}
    assert harness.run(a=9, b=9) == {"max": 9, "eq": 1}


@pytest.mark.parametrize(("a", "b"), [(100, 7), (7, 100), (0, 5), (255, 0)])
def test_division_by_runtime_values_including_zero(a: int, b: int) -> None:
    harness = DIVISION
    out = harness.run(a=a, b=b)
    assert out["q"] == (a // b if b else 0)
    assert out["r"] == (a % b if b else 0)


DIVISION = Harness(
    "bit<8> a; bit<8> b;",
    "bit<8> q; bit<8> r;",
    "hdr.o.q = hdr.i.a / hdr.i.b; hdr.o.r = hdr.i.a % hdr.i.b;",
)
