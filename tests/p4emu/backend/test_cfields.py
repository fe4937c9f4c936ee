"""p4emu.backend.cfields: which scalar fields the native build holds as C integers, and
that a compiled program computes wide intermediates exactly as its pure module
(docs/virtual-fabric.md, "Typed declarations: the generated P4 code")."""

from __future__ import annotations

import random
import re
import textwrap
from pathlib import Path

import pytest
from backend_helpers import generated_declarations, program_compiler, switch_on_path

from p4emu.backend import cfields, native

needs_build = pytest.mark.skipif(
    native.build_missing() is not None, reason=str(native.build_missing())
)

# ------------------------------------------------------------------ the proof on text

CLASSES: dict[str, list[tuple[str, str | None]]] = {
    "H": [("valid_", "bint"), ("a", None), ("b", None), ("w", None), ("c", None)],
    "S": [("h", "H"), ("small", None), ("s", None)],
}
U32 = (0, (1 << 32) - 1)
CANDIDATES = {
    "H": {"a": U32, "b": U32, "w": (0, (1 << 63) - 1), "c": (0, 255)},
    "S": {"small": (0, 255), "s": (-(1 << 15), (1 << 15) - 1)},
}
RUNTIME = {"PacketContext": frozenset({"length_reg"})}


def proven(body: str) -> set[str]:
    """The fields proven C in a block function whose parameters are ``p: S`` and
    ``ctx: PacketContext`` (and ``h``, its header, hoisted as the generator does)."""
    source = "def block(p: S, ctx: PacketContext):\n    h: H = p.h\n" + textwrap.indent(
        textwrap.dedent(body), "    "
    )
    result = cfields.prove(source, CLASSES, CANDIDATES, RUNTIME)
    return {f"{cls}.{attr}" for cls, fields in result.items() for attr in fields}


ALL = {"H.a", "H.b", "H.w", "H.c", "S.small", "S.s"}


def test_field_range_holds_63_unsigned_and_64_signed_bits() -> None:
    assert cfields.field_range(63, signed=False) == (0, (1 << 63) - 1)
    assert cfields.field_range(64, signed=False) is None
    assert cfields.field_range(64, signed=True) == (-(1 << 63), (1 << 63) - 1)
    assert cfields.field_range(65, signed=True) is None
    assert cfields.field_range(1, signed=False) == (0, 1)


def test_bounded_arithmetic_stays_c() -> None:
    assert (
        proven(
            """
        p.small = (h.a + h.b) & 255
        p.small = ((h.a - h.b) & 255)
        x = (h.a * 1000) >> 7
        p.s = ((p.s * p.s + 32768 & 65535) - 32768)
        if h.w > h.a and h.c < 64:
            p.small = min(h.a + h.b, 255)
        """
        )
        == ALL
    )


def test_a_wide_shift_product_or_shift_count_is_left_to_python() -> None:
    assert proven("x = (h.w << 1) & 9223372036854775807") == ALL - {"H.w"}
    assert proven("x = h.a * h.w") == ALL - {"H.a", "H.w"}
    # a count from a field may reach 64 (C: undefined; Python: exact)
    assert proven("x = ((h.a << h.c) & 255) if h.c < 8 else 0") == ALL - {"H.a", "H.c"}
    assert proven("x = h.a >> h.c") == ALL - {"H.a", "H.c"}
    assert proven("x = h.a >> 63") == ALL
    assert proven("x = h.a << 31") == ALL  # below 2**63
    assert proven("x = h.a << 32") == ALL - {"H.a"}  # up to 2**64 - 2**32


def test_a_product_of_two_48_bit_values_is_left_to_python() -> None:
    classes = {"H": [("valid_", "bint"), ("m", None), ("n", None)]}
    u48 = (0, (1 << 48) - 1)
    source = "def f(h: H):\n    h.m = (h.m * h.n) & 281474976710655\n"
    assert cfields.prove(source, classes, {"H": {"m": u48, "n": u48}}, {}) == {"H": {}}
    u16 = (0, (1 << 16) - 1)
    source = source.replace("281474976710655", "65535")
    assert cfields.prove(source, classes, {"H": {"m": u16, "n": u16}}, {}) == {
        "H": {"m": cfields.C_TYPE, "n": cfields.C_TYPE}
    }


def test_a_store_must_stay_in_the_fields_interval() -> None:
    assert proven("p.small = h.a + 1") == ALL - {"S.small"}  # read back as below 2**8
    assert proven("p.small = h.c + 0") == ALL
    assert proven("p.small += 1") == ALL - {"S.small"}
    assert proven("p.small = x + 1") == ALL  # a Python value: the generator's, reduced


def test_a_dropped_field_is_dropped_to_a_fixed_point() -> None:
    # h.w << 1 drops w; then nothing else is C there: only w goes
    assert proven("p.small = ((h.w << 1) + h.a) & 255") == ALL - {"H.w", "H.a"}
    # the runtime's C fields are any 64-bit value: an addition may overflow
    assert proven("x = ctx.length_reg + h.a") == ALL - {"H.a"}
    assert proven("x = ctx.length_reg == h.a") == ALL


def test_python_locals_builtins_and_signed_edges() -> None:
    assert proven("x = h.w\ny = x << 100") == ALL  # x: a Python object
    assert proven("x = abs(h.a)") == ALL - {"H.a"}
    assert proven("x = h.a / 2") == ALL - {"H.a"}
    assert proven("x = h.a ** 2") == ALL - {"H.a"}
    assert proven("x = -p.s") == ALL
    assert proven("x = ~h.w") == ALL
    assert proven("x = h.a // h.b\ny = h.a % h.c") == ALL


def test_a_methods_self_is_typed() -> None:
    source = "class H:\n    def f(self):\n        return self.w << 1\n"
    assert cfields.prove(source, CLASSES, CANDIDATES, RUNTIME)["H"] == {
        "a": cfields.C_TYPE,
        "b": cfields.C_TYPE,
        "c": cfields.C_TYPE,
    }


# the halves of a wide field (p4emu.backend.wide): unsigned 64-bit candidates
HALF_CLASSES: dict[str, list[tuple[str, str | None]]] = {
    "W": [("valid_", "bint"), ("x_hi_", None), ("x_lo_", None), ("n", None), ("s", None)],
}
HALF = (0, (1 << 64) - 1)
HALF_CANDIDATES = {
    "W": {"x_hi_": HALF, "x_lo_": HALF, "n": (0, (1 << 48) - 1), "s": (-128, 127)},
}
HALVES = {"W.x_hi_", "W.x_lo_", "W.n", "W.s"}


def proven_halves(body: str) -> set[str]:
    source = "def block(h: W):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    result = cfields.prove(source, HALF_CLASSES, HALF_CANDIDATES, RUNTIME)
    return {f"{cls}.{attr}" for cls, fields in result.items() for attr in fields}


def test_wide_halves_are_unsigned_c_fields_while_nothing_leaves_64_bits() -> None:
    typed = cfields.prove("def f(h: W):\n    pass\n", HALF_CLASSES, HALF_CANDIDATES, {})
    assert typed["W"]["x_hi_"] == typed["W"]["x_lo_"] == cfields.UNSIGNED_C_TYPE
    assert typed["W"]["n"] == cfields.C_TYPE
    # the lowering's forms: masked before shifted, shifts by 0..63, constants as names
    assert (
        proven_halves(
            """
        h.x_hi_, h.x_lo_ = (((h.x_hi_ & 65535) << 48) | (h.x_lo_ >> 16)), (h.x_lo_ >> 63)
        h.n = h.x_hi_ >> 16
        h.x_lo_ = (h.x_lo_ & _W_ffffffffffff) << 16
        if (h.x_hi_ >> 32) == (h.x_lo_ >> 32) or h.x_hi_ < h.n:
            h.x_lo_ = h.x_hi_ ^ _W_ffffffffffffffff
        """
        )
        == HALVES
    )


def test_an_operation_on_a_half_that_may_leave_64_bits_is_left_to_python() -> None:
    assert proven_halves("x = h.x_hi_ << 1") == HALVES - {"W.x_hi_"}  # C would wrap
    assert proven_halves("x = h.x_lo_ + 1") == HALVES - {"W.x_lo_"}
    assert proven_halves("x = (h.x_lo_ >> 1) + 1") == HALVES
    assert proven_halves("x = h.x_lo_ - h.n") == HALVES - {"W.x_lo_", "W.n"}  # below 0
    assert proven_halves("x = -h.x_lo_") == HALVES - {"W.x_lo_"}
    assert proven_halves("x = ~h.x_hi_") == HALVES - {"W.x_hi_"}
    assert proven_halves("x = h.x_hi_ >> h.n") == HALVES - {"W.x_hi_", "W.n"}
    # a signed value beside an unsigned one is converted by C: left to Python
    assert proven_halves("x = h.x_lo_ & h.s") == HALVES - {"W.x_lo_", "W.s"}
    assert proven_halves("x = h.x_lo_ == h.s") == HALVES - {"W.x_lo_", "W.s"}
    assert proven_halves("x = h.x_lo_ if h.n else h.s") == HALVES - {"W.x_lo_", "W.s"}
    assert proven_halves("x = h.x_lo_ == h.n") == HALVES  # both non-negative: exact
    # a half's value stored into a narrower field must fit it
    assert proven_halves("h.n = h.x_hi_ >> 15") == HALVES - {"W.n"}
    assert proven_halves("h.n = h.x_hi_ >> 16") == HALVES


def test_runtime_c_fields_are_read_from_the_pxd_files(tmp_path: Path) -> None:
    pxd = tmp_path / "x.pxd"
    pxd.write_text(
        "cdef class A:\n    cdef public long long n\n    cdef public object o\n"
        "    cdef public bint b\ncdef class B(A):\n    cdef public dict d\n"
    )
    assert cfields.runtime_c_fields([pxd]) == {"A": frozenset({"n", "b"}), "B": frozenset()}
    declared = native.runtime_c_fields()
    assert "length_reg" in declared["PacketContext"]
    assert "hdr" not in declared["PacketContext"]


# ------------------------------------------------------------------ a program's fields

WIDE = """
#include <core.p4>
#include <v1model.p4>
header in_t {
    bit<1> pad; bit<63> w; bit<48> m1; bit<48> m2; bit<32> a; bit<8> c; bit<32> d1;
    bit<32> d2; int<16> s1; int<16> s2; int<64> g1; int<64> g2; bit<64> u;
}
header out_t {
    bit<1> pad; bit<63> shl; bit<48> prod; bit<32> dyn; bit<32> diff; bit<32> sum;
    int<16> swrap; int<16> sprod; int<16> sshr; int<64> gsum; bit<64> ushl;
}
struct headers_t { in_t i; out_t o; }
struct meta_t { bit<8> unused; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.o.setValid();
        hdr.o.shl = hdr.i.w << 1;
        hdr.o.prod = hdr.i.m1 * hdr.i.m2;
        hdr.o.dyn = hdr.i.a << hdr.i.c;
        hdr.o.diff = hdr.i.d1 - hdr.i.d2;
        hdr.o.sum = hdr.i.d1 + hdr.i.d2;
        hdr.o.swrap = hdr.i.s1 + hdr.i.s2;
        hdr.o.sprod = hdr.i.s1 * hdr.i.s2;
        hdr.o.sshr = hdr.i.s1 >> 3;
        hdr.o.gsum = hdr.i.g1 + hdr.i.g2;
        hdr.o.ushl = hdr.i.u << 3;
        sm.egress_spec = 2;
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.o); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""
IN_FIELDS = [
    ("pad", 1, False),
    ("w", 63, False),
    ("m1", 48, False),
    ("m2", 48, False),
    ("a", 32, False),
    ("c", 8, False),
    ("d1", 32, False),
    ("d2", 32, False),
    ("s1", 16, True),
    ("s2", 16, True),
    ("g1", 64, True),
    ("g2", 64, True),
    ("u", 64, False),
]
OUT_FIELDS = [
    ("pad", 1, False),
    ("shl", 63, False),
    ("prod", 48, False),
    ("dyn", 32, False),
    ("diff", 32, False),
    ("sum", 32, False),
    ("swrap", 16, True),
    ("sprod", 16, True),
    ("sshr", 16, True),
    ("gsum", 64, True),
    ("ushl", 64, False),
]


def declared_types(p4: str) -> dict[str, str]:
    """``class.field -> declared type`` of the scalar fields of ``p4``'s generated
    module, as the native build would declare them (no compiler run)."""
    compiler = program_compiler(p4, "wide.p4")
    _, pxd = generated_declarations(compiler)
    found: dict[str, str] = {}
    current = ""
    for line in pxd.splitlines():
        cls = re.match(r"cdef class \w+?_(\w+):", line)
        if cls:
            current = cls.group(1)
        attr = re.match(r"\s+cdef public (.+) (\w+)$", line)
        if attr:
            found[f"{current}.{attr.group(2)}"] = attr.group(1)
    return found


def test_the_generator_keeps_unsafe_fields_python_objects() -> None:
    types = declared_types(WIDE)
    ll, obj = cfields.C_TYPE, "object"
    # read by an operation that may leave 64 bits: objects
    assert types["in_t.w"] == obj  # bit<63> << 1
    assert types["in_t.m1"] == obj and types["in_t.m2"] == obj  # bit<48> * bit<48>
    assert types["in_t.a"] == obj and types["in_t.c"] == obj  # a shift by a field
    assert types["in_t.g1"] == obj and types["in_t.g2"] == obj  # int<64> wrapped via 2**63
    assert types["in_t.u"] == obj and types["out_t.ushl"] == obj  # 64 bits unsigned
    # the deparser packs pad and the 63-bit field as (pad << 63) | w: 2**63 overflows
    assert types["in_t.pad"] == obj and types["out_t.pad"] == obj
    # bounded: C integers (a subtraction below zero, masked, is exact in 64 signed bits)
    for name in ("in_t.d1", "in_t.d2", "in_t.s1", "in_t.s2"):
        assert types[name] == ll, name
    for name in ("shl", "prod", "dyn", "diff", "sum", "swrap", "sprod", "sshr", "gsum"):
        assert types[f"out_t.{name}"] == ll, name  # a value stored already reduced
    assert types["in_t.valid_"] == "bint"
    assert types["standard_metadata_t.egress_spec"] == ll


# ------------------------------------------------------------------ compiled against pure


def _pack(values: dict[str, int]) -> bytes:
    acc = 0
    for name, width, _signed in IN_FIELDS:
        acc = (acc << width) | (values[name] & ((1 << width) - 1))
    return acc.to_bytes(sum(w for _, w, _ in IN_FIELDS) // 8, "big")


def _unpack(data: bytes) -> dict[str, int]:
    total = sum(w for _, w, _ in OUT_FIELDS)
    acc = int.from_bytes(data[: total // 8], "big")
    out = {}
    for name, width, signed in OUT_FIELDS:
        total -= width
        value = (acc >> total) & ((1 << width) - 1)
        if signed and value >> (width - 1):
            value -= 1 << width
        out[name] = value
    return out


def _expected(v: dict[str, int]) -> dict[str, int]:
    """P4's results, from the spec's rules (not from either module)."""

    def wrap(x: int, width: int, signed: bool) -> int:
        x &= (1 << width) - 1
        return x - (1 << width) if signed and x >> (width - 1) else x

    return {
        "shl": wrap(v["w"] << 1, 63, False),
        "prod": wrap(v["m1"] * v["m2"], 48, False),
        "dyn": wrap(v["a"] << v["c"], 32, False) if v["c"] < 32 else 0,
        "diff": wrap(v["d1"] - v["d2"], 32, False),
        "sum": wrap(v["d1"] + v["d2"], 32, False),
        "swrap": wrap(v["s1"] + v["s2"], 16, True),
        "sprod": wrap(v["s1"] * v["s2"], 16, True),
        "sshr": v["s1"] >> 3,
        "gsum": wrap(v["g1"] + v["g2"], 64, True),
        "ushl": wrap(v["u"] << 3, 64, False),
        "pad": 0,
    }


def _inputs() -> list[dict[str, int]]:
    rng = random.Random(13)
    edges = {
        "w": (1 << 63) - 1,
        "m1": (1 << 48) - 1,
        "m2": (1 << 48) - 1,
        "a": (1 << 32) - 1,
        "c": 31,
        "d1": 0,
        "d2": (1 << 32) - 1,
        "s1": -(1 << 15),
        "s2": -(1 << 15),
        "g1": (1 << 63) - 1,
        "g2": (1 << 63) - 1,
        "u": (1 << 64) - 1,
        "pad": 1,
    }
    cases = [edges, {**edges, "c": 200, "s1": (1 << 15) - 1, "g2": -(1 << 63)}]
    for _ in range(40):
        case = {}
        for name, width, signed in IN_FIELDS:
            low, high = (
                (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
            )
            case[name] = rng.choice([low, high, rng.randint(low, high)])
        cases.append(case)
    return cases


def _run(
    native_env: str, cases: list[dict[str, int]], p4: str = WIDE
) -> tuple[str, list[dict[str, int]]]:
    name = "wide" if p4 is WIDE else "locals"
    switch = switch_on_path(p4, f"{name}-{native_env}.p4", native_env)
    results = []
    in_len = sum(w for _, w, _ in IN_FIELDS) // 8
    for case in cases:
        switch.inject(1, _pack(case))
        frames = switch.collect()
        assert len(frames) == 1
        results.append(_unpack(frames[0][1][in_len:]))
    assert switch.program.shared is not None
    return switch.program.shared.how, results


def test_the_pure_module_computes_p4s_results() -> None:
    cases = _inputs()
    how, results = _run("0", cases)
    assert how.startswith("pure")
    assert results == [_expected(case) for case in cases]


@pytest.mark.integration
@needs_build
def test_wide_intermediates_compiled_equal_pure(fresh_native: None) -> None:
    cases = _inputs()
    how, compiled = _run("1", cases)
    assert how == "compiled"
    _, pure = _run("0", cases)
    assert compiled == pure
    assert compiled == [_expected(case) for case in cases]


# ------------------------------------------------------------------ typed temporaries


def test_the_parsers_temporaries_are_c_typed_and_checked() -> None:
    source = (
        "def parse(data, off, h: H):\n"
        "    _u8_1: cython.longlong\n"
        "    _u8_1, h.a = unpack(data, off)\n"
        "    h.c = _u8_1 >> 4\n"
        "    p = (_u8_1 << 8) | h.c\n"
    )
    assert cfields.prove(source, CLASSES, CANDIDATES, RUNTIME)["H"] == {
        attr: cfields.C_TYPE for attr in ("a", "b", "w", "c")
    }
    with pytest.raises(cfields.ProofError, match="_u8_1"):  # 2**8 << 56: 2**64
        cfields.prove(source.replace("<< 8", "<< 56"), CLASSES, CANDIDATES, RUNTIME)
    with pytest.raises(cfields.ProofError, match="_u8_1"):  # a 32-bit value in 8 bits
        cfields.prove(source + "    _u8_1 = h.a\n", CLASSES, CANDIDATES, RUNTIME)
    with pytest.raises(cfields.ProofError, match="_u8_1"):
        cfields.prove(source + "    _u8_1 += 1\n", CLASSES, CANDIDATES, RUNTIME)


def test_an_unprovable_text_is_a_build_error() -> None:
    source = "def f():\n    _u8_1: cython.longlong\n    _u8_1 = 1\n    x = _u8_1 << 63\n"
    with pytest.raises(native.NativeBuildError, match="width proof"):
        native.program_declarations(source, {}, {})


NARROW = WIDE.replace(
    "header in_t {",
    "header in_t { bit<4> n4; bit<12> n12; bit<60> q60; bit<4> q4;",
    1,
).replace("hdr.o.sum = hdr.i.d1 + hdr.i.d2;", "hdr.o.sum = hdr.i.d1 + (bit<32>) hdr.i.n12;", 1)


def test_the_generated_parser_annotates_only_narrow_temporaries() -> None:
    compiler = program_compiler(NARROW, "narrow.p4")
    source = compiler.compile().source
    # n4 and n12: one 16-bit part, a C temporary; q60 and q4: one 64-bit part, an object
    assert "_u16_1: cython.longlong" in source
    assert "p1_i_1.n12 = (_u16_1) & 4095" in source
    assert re.search(r"_x\d+: cython", source) is None
    assert "p1_i_1.q4 = (_x" in source
    pxd = native.program_declarations(source, compiler.types.classes, compiler.types.scalars)
    assert "cimport cython" in pxd
    assert re.search(r"cdef public long long n12\n", pxd)


SUBBYTE = """
#include <core.p4>
#include <v1model.p4>
header in_t { int<4> s4; bit<12> u12; bit<3> f3; int<5> s5; bit<8> b8; }
header out_t { int<4> r4; bit<12> r12; bit<16> r16; int<8> r8; }
struct headers_t { in_t i; out_t o; }
struct meta_t { bit<8> unused; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.o.setValid();
        hdr.o.r4 = hdr.i.s4 + 1;
        hdr.o.r12 = hdr.i.u12 - 1;
        hdr.o.r16 = ((bit<16>) hdr.i.b8 << 8) | (bit<16>) hdr.i.f3;
        hdr.o.r8 = (int<8>) hdr.i.s5 - 100;
        sm.egress_spec = 2;
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.o); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def _subbyte_run(native_env: str) -> tuple[str, str, list[tuple[int, int, int, int]]]:
    switch = switch_on_path(SUBBYTE, f"sub-{native_env}.p4", native_env)
    out = []
    for word in [
        0,
        0xFFFFFFFF,
        0x80000000,
        0x7FFFFFFF,
        *random.Random(5).sample(range(1 << 32), 60),
    ]:
        switch.inject(1, word.to_bytes(4, "big"))
        frames = switch.collect()
        assert len(frames) == 1
        o = int.from_bytes(frames[0][1][4:9], "big")
        out.append((o >> 36, (o >> 24) & 0xFFF, (o >> 8) & 0xFFFF, o & 0xFF))
    assert switch.program.shared is not None
    return switch.program.shared.how, switch.program.source, out


def _subbyte_expected(word: int) -> tuple[int, int, int, int]:
    s4, u12, f3, s5, b8 = (
        word >> 28,
        (word >> 16) & 0xFFF,
        (word >> 13) & 7,
        (word >> 8) & 31,
        word & 255,
    )
    s5 = s5 - 32 if s5 >= 16 else s5
    return ((s4 + 1) & 15, (u12 - 1) & 0xFFF, (b8 << 8) | f3, (s5 - 100) & 255)


def test_signed_sub_byte_fields_in_typed_temporaries_pure() -> None:
    how, source, out = _subbyte_run("0")
    assert how.startswith("pure")
    # two chunks shared by several fields: C temporaries, signed fields among them
    assert "_u16_1: cython.longlong" in source and "_u8_2: cython.longlong" in source
    words = [0, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, *random.Random(5).sample(range(1 << 32), 60)]
    assert out == [_subbyte_expected(w) for w in words]


@pytest.mark.integration
@needs_build
def test_signed_sub_byte_fields_compiled_equal_pure(fresh_native: None) -> None:
    how, _, compiled = _subbyte_run("1")
    assert how == "compiled"
    _, _, pure = _subbyte_run("0")
    assert compiled == pure


# ------------------------------------------------------------------ P4 locals in C


def proven_in_method(
    body: str, cls: str = "B(Blocks)", method: str = "ingress_block"
) -> tuple[set[str], set[str]]:
    """The fields and the candidate locals proven C in ``method`` of a class ``cls`` (its
    parameters as :func:`proven`'s block function)."""
    source = (
        f"class {cls}:\n    def {method}(self, p: S, ctx: PacketContext):\n"
        "        h: H = p.h\n" + textwrap.indent(textwrap.dedent(body), "        ")
    )
    fields, found = cfields.prove_all(source, CLASSES, CANDIDATES, RUNTIME)
    return (
        {f"{name}.{attr}" for name, attrs in fields.items() for attr in attrs},
        set(found.get(method, {})),
    )


def proven_locals(body: str, cls: str = "B(Blocks)", method: str = "ingress_block") -> set[str]:
    return proven_in_method(body, cls, method)[1]


def test_a_p4_local_is_named_for_its_type_when_it_may_be_c() -> None:
    assert cfields.local_name("q_5", 32, signed=False) == "q_5_b32"
    assert cfields.local_name("g_1", 64, signed=True) == "g_1_i64"
    assert cfields.local_name("u_2", 64, signed=False) == "u_2"  # bit<64>: an object
    assert cfields.local_range("q_5_b32") == (0, (1 << 32) - 1)
    assert cfields.local_range("g_1_i64") == (-(1 << 63), (1 << 63) - 1)
    for other in ("q_5", "_u8_1", "p1_ipv6_7", "x_b32", "u_2_b64"):
        assert cfields.local_range(other) is None, other


def test_bounded_locals_of_a_block_method_stay_c() -> None:
    body = """
    x_1_b32 = h.a
    y_2_b32 = (x_1_b32 - h.b) & 4294967295
    z_3_i16 = p.s
    p.small = (y_2_b32 + z_3_i16) & 255
    k_4_b8 = f()
    """
    assert proven_in_method(body) == (ALL, {"x_1_b32", "y_2_b32", "z_3_i16", "k_4_b8"})
    # only a Blocks class's block methods type their locals
    assert proven_locals(body, cls="C") == set()
    assert proven_locals(body, method="helper") == set()


def test_a_local_that_may_overflow_or_leave_its_type_is_left_to_python() -> None:
    # shifted out of 64 bits: the local goes, not the field it was read from
    assert proven_in_method("x_1_b63 = h.w\ny = x_1_b63 << 1") == (ALL, set())
    # a product of a local and a field: both go
    assert proven_in_method("x_1_b32 = h.a\ny = x_1_b32 * h.w") == (ALL - {"H.w"}, set())
    assert proven_locals("x_1_b8 = h.a") == set()  # a 32-bit value in 8 bits
    assert proven_locals("x_1_b8 = 0\nx_1_b8 += f()") == set()  # a Python result
    assert proven_locals("x_1_b8 = 0\nx_1_b8 += 1") == set()  # may reach 256
    assert proven_locals("x_1_b8 = 0\nx_1_b8 = (x_1_b8 + 1) & 255") == {"x_1_b8"}


LOCALS = WIDE.replace(
    """        hdr.o.shl = hdr.i.w << 1;
        hdr.o.prod = hdr.i.m1 * hdr.i.m2;
        hdr.o.dyn = hdr.i.a << hdr.i.c;
        hdr.o.diff = hdr.i.d1 - hdr.i.d2;
        hdr.o.sum = hdr.i.d1 + hdr.i.d2;
        hdr.o.swrap = hdr.i.s1 + hdr.i.s2;
        hdr.o.sprod = hdr.i.s1 * hdr.i.s2;
        hdr.o.sshr = hdr.i.s1 >> 3;
        hdr.o.gsum = hdr.i.g1 + hdr.i.g2;
        hdr.o.ushl = hdr.i.u << 3;""",
    """        bit<63> w = hdr.i.w;
        hdr.o.shl = w << 1;
        bit<48> m = hdr.i.m1;
        hdr.o.prod = m * hdr.i.m2;
        bit<8> c = hdr.i.c;
        hdr.o.dyn = hdr.i.a << c;
        bit<32> diff = hdr.i.d1 - hdr.i.d2;
        hdr.o.diff = diff;
        bit<32> sum = hdr.i.d1;
        sum = sum + hdr.i.d2;
        hdr.o.sum = sum;
        int<16> s = hdr.i.s1 + hdr.i.s2;
        hdr.o.swrap = s;
        int<16> sp = hdr.i.s1;
        hdr.o.sprod = sp * hdr.i.s2;
        int<16> sh = hdr.i.s1 >> 3;
        hdr.o.sshr = sh;
        int<64> g = hdr.i.g1 + hdr.i.g2;
        hdr.o.gsum = g;
        bit<64> u = hdr.i.u;
        hdr.o.ushl = u << 3;""",
)


def test_the_generator_declares_the_proven_locals_of_a_block() -> None:
    assert LOCALS != WIDE
    compiler = program_compiler(LOCALS, "locals.p4")
    compiled = compiler.compile()
    assert compiled.template is not None
    classes, scalars, _ = compiled.template.declarations
    _, found = cfields.prove_all(compiled.source, classes, scalars, native.runtime_c_fields())
    kept = {re.sub(r"_\d+_[bi]\d+$", "", name) for name in found["ingress_block"]}
    # bounded: C (g too: its value is stored whole, though the fields it adds are objects)
    assert kept == {"diff", "sum", "s", "sp", "sh", "g"}
    # w << 1, m * m2 and a shift by c may leave 64 bits; bit<64> is never a candidate
    assert re.search(r"\bw_\d+_b63 = ", compiled.source)
    assert re.search(r"\bu_\d+ = ", compiled.source)
    pxd = native.declarations(
        {"ProgramBlocks": []}, True, {}, {"ProgramBlocks": "Blocks"}, c_locals=found
    )
    lines = pxd.splitlines()
    at = next(i for i, line in enumerate(lines) if "cpdef ingress_block" in line)
    listed = ", ".join(f'{name}="long long"' for name in sorted(found["ingress_block"]))
    assert lines[at - 1] == f"    @cython.locals({listed})"
    assert "@cython.locals" not in lines[at - 2]  # only the methods with C locals


def test_locals_the_pure_module_computes_p4s_results() -> None:
    cases = _inputs()
    how, results = _run("0", cases, LOCALS)
    assert how.startswith("pure")
    assert results == [_expected(case) for case in cases]


@pytest.mark.integration
@needs_build
def test_locals_compiled_equal_pure(fresh_native: None) -> None:
    cases = _inputs()
    how, compiled = _run("1", cases, LOCALS)
    assert how == "compiled"
    _, pure = _run("0", cases, LOCALS)
    assert compiled == pure
    assert compiled == [_expected(case) for case in cases]
