"""Wide header fields (more than 64 bits: IPv6 addresses, SIDs): the codec's decisions
(an unsigned field of up to 128 bits is its two halves, read and written as two 64-bit
chunks: p4emu.backend.wide; a signed one alone in its bytes one ``Ns`` struct part,
``int.from_bytes`` / ``int.to_bytes``), its generated code on edge values against a
byte-level reference, and (``-m integration``) a program computing on 128-bit, 72-bit
and ``int<128>`` fields compiled against pure against P4's results.

Every width from 1 to 1024 bits against a bit-level reference: test_header_layouts.py."""

from __future__ import annotations

import re
import struct

import pytest
from backend_helpers import header_class, program_compiler, switch_on_path

from p4emu.backend import cfields, native
from p4emu.backend.headercodec import (
    FROM_BYTES,
    TO_BYTES,
    WIDE_FIELD_BYTES,
    HeaderCodec,
    header_codec,
)
from p4emu.frontend import types as t

needs_build = pytest.mark.skipif(
    native.build_missing() is not None, reason=str(native.build_missing())
)

M64 = (1 << 64) - 1
M128 = (1 << 128) - 1


def _codec(*fields: tuple[str, int, bool]) -> HeaderCodec:
    return header_codec(
        t.HeaderType("h", [t.FieldInfo(name, t.BitsType(w, s)) for name, w, s in fields])
    )


def _functions(codec: HeaderCodec):
    """(extract(data) -> object, emit(object) -> bytes, their source) from the codec's
    generated text, ``from_bytes`` and ``to_bytes`` bound to names as the program binds
    them; the header an object of p4emu's class for it (``H``)."""
    packer = struct.Struct(codec.struct_format)
    names = {
        "U": packer.unpack_from,
        "P": packer.pack,
        "FB": FROM_BYTES,
        "TB": TO_BYTES,
        "H": header_class(codec.type_),
    }
    body = "\n    ".join(codec.extract_lines("h", "data", "off", "U", "FB"))
    source = (
        f"def extract(data, off):\n    h = H()\n    {body}\n    return h\n"
        f"def emit(h):\n    return {codec.emit_expr('h', 'P', 'TB')}\n"
    )
    exec(compile(source, "<codec>", "exec"), names)
    return names["extract"], names["emit"], source


# ------------------------------------------------------------------ decisions


def test_an_unsigned_wide_field_is_two_halves_a_signed_one_one_string_part() -> None:
    codec = _codec(("a", 128, False), ("n", 16, False), ("s", 128, True), ("x", 72, False))
    # a: two Q halves; s: one 16s part; x: its 8-bit high half (B) and its low half (Q)
    assert codec.struct_format == ">QQH16sBQ"
    assert codec.wide
    _, _, source = _functions(codec)
    assert "h.a_hi_, h.a_lo_, h.n, _x1, h.x_hi_, h.x_lo_ = U(data, off)" in source
    assert "P(h.a_hi_, h.a_lo_, h.n, TB((h.s &" in source and "h.x_hi_, h.x_lo_)" in source
    assert ">> 64" not in source and "<< 64" not in source and str(M64) not in source
    # int<128>: two's complement of the same bytes, both ways
    assert f"((FB(_x1, 'big')) ^ {1 << 127}) - {1 << 127}" in source
    assert f"TB((h.s & {M128}), 16, 'big')" in source


def test_64_bit_and_unaligned_wide_fields_keep_the_integer_codes() -> None:
    assert WIDE_FIELD_BYTES == 8
    codec = _codec(("q", 64, False), ("w", 65, False), ("pad", 7, False))
    assert codec.struct_format == ">QQB"  # 64 bits: Q; 65 + 7 bits: one chunk of fields
    assert not codec.wide
    _, _, source = _functions(codec)
    assert "FB" not in source and "TB" not in source


def test_a_header_that_is_one_wide_field_reads_and_writes_its_two_halves() -> None:
    codec = _codec(("sid", 128, False))
    assert codec.struct_format == ">QQ" and not codec.wide
    _, _, source = _functions(codec)
    assert "h.sid_hi_, h.sid_lo_ = U(data, off)" in source
    assert "return P(h.sid_hi_, h.sid_lo_)" in source
    assert "FB" not in source and "TB" not in source
    signed = _codec(("sid", 128, True))  # int<128>: its bytes converted by int
    _, _, source = _functions(signed)
    assert "h.sid = ((FB(data[off:off + 16], 'big'))" in source
    assert "U(" not in source and "P(" not in source


# ------------------------------------------------------------------ the generated code


EDGES_128 = [0, 1, M64, 1 << 64, M64 << 1, 1 << 127, M128 - 1, M128]


def _reference(data: bytes, off: int, widths: list[tuple[int, bool]]) -> list[int]:
    """Field values of ``data`` from ``off``, each field's bytes converted alone (the
    fields here are whole bytes)."""
    values = []
    for width, signed in widths:
        n = width // 8
        values.append(int.from_bytes(data[off : off + n], "big", signed=signed))
        off += n
    return values


def test_wide_fields_extract_and_emit_edge_values_as_the_reference() -> None:
    fields = [("a", 128, False), ("n", 16, False), ("s", 128, True), ("x", 72, False)]
    extract, emit, _ = _functions(_codec(*fields))
    widths = [(w, s) for _, w, s in fields]
    for index, a in enumerate(EDGES_128):
        s = EDGES_128[-1 - index]
        s = s - (1 << 128) if s >> 127 else s
        x = [0, (1 << 72) - 1, 1 << 71, 1 << 64, M64][index % 5]
        data = (
            b"\x5a"
            + a.to_bytes(16, "big")
            + (index * 4099).to_bytes(2, "big")
            + s.to_bytes(16, "big", signed=True)
            + x.to_bytes(9, "big")
        )
        header = extract(data, 1)
        got = [header.a, header.n, header.s, header.x]
        assert got == _reference(data, 1, widths) == [a, index * 4099, s, x]
        assert header.valid_ is True
        assert emit(header) == data[1:]


def test_a_wide_only_header_extracts_and_emits_edge_values() -> None:
    extract, emit, _ = _functions(_codec(("sid", 128, False)))
    for value in EDGES_128:
        data = b"\x00\x01" + value.to_bytes(16, "big") + b"\xff"
        header = extract(data, 2)
        assert header.sid == value and header.valid_ is True
        assert emit(header) == value.to_bytes(16, "big")


def test_a_wide_value_outside_its_width_is_an_error_not_other_bytes() -> None:
    codec = _codec(("a", 128, False), ("n", 16, False), ("x", 72, False))
    header = header_class(codec.type_)()
    for field, value in (("a", 1 << 128), ("a", -1), ("x", 1 << 72), ("x", -1)):
        # the generator never stores one; through the property it raises, as struct's
        # Q and int.to_bytes did when the header was emitted
        with pytest.raises(OverflowError):
            setattr(header, field, value)
    _, emit, _ = _functions(codec)
    header.a_hi_ = 1 << 64  # a half outside 64 bits (only the pure class can hold one)
    with pytest.raises(struct.error):
        emit(header)


# ------------------------------------------------------------------ a program on both paths


WIDE128 = """
#include <core.p4>
#include <v1model.p4>
header in_t { bit<128> a; bit<128> b; int<128> s; bit<72> n; bit<8> k; }
header sid_t { bit<128> sid; }
header out_t {
    bit<128> shl; bit<128> shr; bit<128> cross; bit<128> masked; bit<128> sum;
    bit<128> diff; int<128> sdec; int<128> sshr; bit<72> nwrap; bit<64> lo; bit<64> hi;
    bit<128> swapped; bit<8> flags;
    bit<128> s0; bit<128> s63; bit<128> s64; bit<128> s127;
    bit<128> r63; bit<128> r127; bit<64> mid; bit<8> mid8; bit<112> inner;
    bit<72> cat; bit<72> cut72; bit<128> widen; bit<128> inv; bit<128> orx; bit<128> andx;
    bit<72> nshl; bit<72> nshr; bit<128> mixed; bit<8> order;
}
struct headers_t { in_t i; sid_t sid; out_t o; }
struct meta_t { bit<128> m; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.sid); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.o.setValid();
        hdr.o.shl = hdr.i.a << 1;
        hdr.o.shr = hdr.i.a >> 64;
        hdr.o.cross = (hdr.i.a << 60) | (hdr.i.b >> 68);
        hdr.o.masked = hdr.i.a & 0x0000000000000000ffffffffffffffff;
        hdr.o.sum = hdr.i.a + hdr.i.b;
        hdr.o.diff = hdr.i.a - hdr.i.b;
        hdr.o.sdec = hdr.i.s - 1;
        hdr.o.sshr = hdr.i.s >> 65;
        hdr.o.nwrap = hdr.i.n + 1;
        hdr.o.lo = hdr.i.a[63:0];
        hdr.o.hi = hdr.i.a[127:64];
        hdr.o.swapped = hdr.i.a[63:0] ++ hdr.i.a[127:64];
        hdr.o.flags = 0;
        if (hdr.i.a == hdr.i.b) { hdr.o.flags = hdr.o.flags | 1; }
        if (hdr.i.a > hdr.i.b) { hdr.o.flags = hdr.o.flags | 2; }
        if (hdr.i.s < 0) { hdr.o.flags = hdr.o.flags | 4; }
        hdr.o.s0 = hdr.i.a << 0;
        hdr.o.s63 = hdr.i.a << 63;
        hdr.o.s64 = hdr.i.a << 64;
        hdr.o.s127 = hdr.i.a << 127;
        hdr.o.r63 = hdr.i.a >> 63;
        hdr.o.r127 = hdr.i.a >> 127;
        hdr.o.mid = hdr.i.a[95:32];
        hdr.o.mid8 = hdr.i.a[67:60];
        hdr.o.inner = hdr.i.a[119:8];
        hdr.o.cat = hdr.i.a[63:0] ++ hdr.i.b[127:120];
        hdr.o.cut72 = (bit<72>) hdr.i.a;
        hdr.o.widen = (bit<128>) hdr.i.k;
        hdr.o.inv = ~hdr.i.a;
        hdr.o.orx = hdr.i.a | hdr.i.b;
        hdr.o.andx = hdr.i.a & hdr.i.b;
        hdr.o.nshl = hdr.i.n << 9;
        hdr.o.nshr = hdr.i.n >> 70;
        hdr.o.mixed = (hdr.i.a & 0xffff0000000000000000000000000001) ^ (bit<128>) hdr.i.n;
        hdr.o.order = 0;
        if (hdr.i.a != hdr.i.b) { hdr.o.order = hdr.o.order | 1; }
        if (hdr.i.a < hdr.i.b) { hdr.o.order = hdr.o.order | 2; }
        if (hdr.i.a <= hdr.i.b) { hdr.o.order = hdr.o.order | 4; }
        if (hdr.i.a >= hdr.i.b) { hdr.o.order = hdr.o.order | 8; }
        if (hdr.i.a[127:64] == hdr.i.b[127:64]) { hdr.o.order = hdr.o.order | 16; }
        if (hdr.i.n == (bit<72>) hdr.i.a) { hdr.o.order = hdr.o.order | 32; }
        meta.m = hdr.sid.sid;
        hdr.sid.sid = meta.m ^ hdr.i.b;
        sm.egress_spec = 2;
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.i); pkt.emit(hdr.sid); pkt.emit(hdr.o); }
}
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""
IN_FIELDS = [("a", 128, False), ("b", 128, False), ("s", 128, True), ("n", 72, False)]
IN_FIELDS += [("k", 8, False), ("sid", 128, False)]
OUT_FIELDS = [
    ("shl", 128, False),
    ("shr", 128, False),
    ("cross", 128, False),
    ("masked", 128, False),
    ("sum", 128, False),
    ("diff", 128, False),
    ("sdec", 128, True),
    ("sshr", 128, True),
    ("nwrap", 72, False),
    ("lo", 64, False),
    ("hi", 64, False),
    ("swapped", 128, False),
    ("flags", 8, False),
    ("s0", 128, False),
    ("s63", 128, False),
    ("s64", 128, False),
    ("s127", 128, False),
    ("r63", 128, False),
    ("r127", 128, False),
    ("mid", 64, False),
    ("mid8", 8, False),
    ("inner", 112, False),
    ("cat", 72, False),
    ("cut72", 72, False),
    ("widen", 128, False),
    ("inv", 128, False),
    ("orx", 128, False),
    ("andx", 128, False),
    ("nshl", 72, False),
    ("nshr", 72, False),
    ("mixed", 128, False),
    ("order", 8, False),
]
IN_BYTES = sum(w for _, w, _ in IN_FIELDS) // 8


def _pack(values: dict[str, int]) -> bytes:
    return b"".join(
        values[name].to_bytes(width // 8, "big", signed=signed) for name, width, signed in IN_FIELDS
    )


def _unpack(data: bytes, fields: list[tuple[str, int, bool]]) -> dict[str, int]:
    out, off = {}, 0
    for name, width, signed in fields:
        out[name] = int.from_bytes(data[off : off + width // 8], "big", signed=signed)
        off += width // 8
    return out


def _expected(v: dict[str, int]) -> dict[str, int]:
    """P4's results, from the spec's rules (wrap at the field's width; not from either
    module): the input header unchanged but the SID, then the output header."""

    def wrap(x: int, width: int, signed: bool = False) -> int:
        x &= (1 << width) - 1
        return x - (1 << width) if signed and x >> (width - 1) else x

    a, b, s = v["a"], v["b"], v["s"]
    return {
        **{name: v[name] for name, _, _ in IN_FIELDS},
        "sid": v["sid"] ^ b,
        "shl": wrap(a << 1, 128),
        "shr": a >> 64,
        "cross": wrap((a << 60) | (b >> 68), 128),
        "masked": a & M64,
        "sum": wrap(a + b, 128),
        "diff": wrap(a - b, 128),
        "sdec": wrap(s - 1, 128, True),
        "sshr": s >> 65,
        "nwrap": wrap(v["n"] + 1, 72),
        "lo": a & M64,
        "hi": a >> 64,
        "swapped": ((a & M64) << 64) | (a >> 64),
        "flags": (a == b) | (a > b) << 1 | (s < 0) << 2,
        "s0": a,
        "s63": wrap(a << 63, 128),
        "s64": wrap(a << 64, 128),
        "s127": wrap(a << 127, 128),
        "r63": a >> 63,
        "r127": a >> 127,
        "mid": (a >> 32) & M64,
        "mid8": (a >> 60) & 0xFF,
        "inner": (a >> 8) & ((1 << 112) - 1),
        "cat": ((a & M64) << 8) | (b >> 120),
        "cut72": wrap(a, 72),
        "widen": v["k"],
        "inv": a ^ M128,
        "orx": a | b,
        "andx": a & b,
        "nshl": wrap(v["n"] << 9, 72),
        "nshr": v["n"] >> 70,
        "mixed": (a & 0xFFFF0000000000000000000000000001) ^ v["n"],
        "order": (a != b)
        | (a < b) << 1
        | (a <= b) << 2
        | (a >= b) << 3
        | ((a >> 64) == (b >> 64)) << 4
        | (v["n"] == wrap(a, 72)) << 5,
    }


def _inputs() -> list[dict[str, int]]:
    cases = []
    smin, smax = -(1 << 127), (1 << 127) - 1
    signed = [smin, -1, 0, 1, smax, -(1 << 64), (1 << 64) - 1, smin + 1]
    for index, a in enumerate(EDGES_128):
        for shift, b in enumerate((a, M128, 0, 1 << 64, M64, (a * 3 + 7) & M128)):
            cases.append(
                {
                    "a": a,
                    "b": b,
                    "s": signed[(index + shift) % len(signed)],
                    "n": [0, (1 << 72) - 1, 1 << 64, M64, a & ((1 << 72) - 1)][(index + shift) % 5],
                    "k": index,
                    "sid": EDGES_128[(index + shift) % len(EDGES_128)],
                }
            )
    return cases


def test_the_proof_makes_unsigned_wide_fields_c_halves_and_keeps_the_others() -> None:
    """The generated text through :func:`p4emu.backend.native.program_declarations` (no
    compiler): the unsigned 72- and 128-bit fields are two ``unsigned long long`` halves
    (the operations on them in the text keep within 64 bits), ``int<128>`` (read with
    ``from_bytes``, written with ``to_bytes``) and ``bit<64>`` stay objects; the 8-bit
    fields beside them are proven C integers; no C-typed temporary holds a wide part."""
    compiler = program_compiler(WIDE128, "w128.p4")
    compiled = compiler.compile()
    assert "G_from_bytes" in compiled.source and "G_to_bytes" in compiled.source
    source = compiled.source
    codec_text = source[source.index("def parse_block") : source.index("def verify_block")]
    codec_text += source[source.index("def deparse_block") :]
    assert "<< 64" not in codec_text and ">> 64" not in codec_text and str(M64) not in codec_text
    pxd = native.program_declarations(
        compiled.source, compiler.types.classes, compiler.types.scalars
    )
    declared: dict[str, str] = {}
    current = ""
    for line in pxd.splitlines():
        cls = re.match(r"cdef class \w+?_(\w+):", line)
        current = cls.group(1) if cls else current
        attr = re.match(r"\s+cdef public (.+) (\w+)$", line)
        if attr:
            declared[f"{current}.{attr.group(2)}"] = attr.group(1)
    for name, width, signed in IN_FIELDS + OUT_FIELDS:
        header = "in_t" if (name, width, signed) in IN_FIELDS[:5] else "out_t"
        header = "sid_t" if name == "sid" else header
        if width > 64 and not signed:
            for half in ("_hi_", "_lo_"):
                assert declared[f"{header}.{name}{half}"] == cfields.UNSIGNED_C_TYPE, name
            assert f"{header}.{name}" not in declared
            continue
        expected = cfields.C_TYPE if width <= 8 else "object"
        assert declared[f"{header}.{name}"] == expected, name
    assert declared["meta_t.m_hi_"] == declared["meta_t.m_lo_"] == cfields.UNSIGNED_C_TYPE
    assert not re.search(r"_u(6[4-9]|[7-9]\d|\d{3,})_\d+: cython.longlong", compiled.source)


def _run(native_env: str, cases: list[dict[str, int]]) -> tuple[str, list[dict[str, int]]]:
    switch = switch_on_path(WIDE128, f"w128-{native_env}.p4", native_env)
    results = []
    for case in cases:
        switch.inject(1, _pack(case) + b"\xa5")
        frames = switch.collect()
        assert len(frames) == 1
        frame = frames[0][1]
        assert frame[-1:] == b"\xa5"  # the payload after the emitted headers
        results.append(
            {**_unpack(frame[:IN_BYTES], IN_FIELDS), **_unpack(frame[IN_BYTES:-1], OUT_FIELDS)}
        )
    assert switch.program.shared is not None
    return switch.program.shared.how, results


def test_the_pure_module_computes_p4s_results_on_wide_fields() -> None:
    cases = _inputs()
    how, results = _run("0", cases)
    assert how.startswith("pure")
    assert results == [_expected(case) for case in cases]


@pytest.mark.integration
@needs_build
def test_wide_fields_compiled_equal_pure_and_p4(fresh_native: None) -> None:
    cases = _inputs()
    how, compiled = _run("1", cases)
    assert how == "compiled"
    _, pure = _run("0", cases)
    assert compiled == pure == [_expected(case) for case in cases]
