"""The native deparser (``cython.compiled`` branches of the generated deparser: every
header's fields written big-endian from C into one ``bytes`` with the payload) and the
parser against the pure module and an independent byte-level reference: every kind of
field at its boundary values (all ones, top bit set, signed extremes, 128-bit values
above 2**64), valid and invalid headers mixed, a header stack of 0 to 4 entries, a
varbit header (the native deparser copies its ``emit_vl_`` bytes), payloads empty and
long (docs/virtual-fabric.md, "Native parser and deparser"). The ingress multiplies two
signed fields so that the native build holds them as Python objects (``cfields``), the
others as C ``long long``: both kinds of field are read and written."""

from __future__ import annotations

import itertools
import struct
from typing import Any

import pytest
from backend_helpers import generated_declarations, program_compiler, switch_on_path

from p4emu.backend import native
from p4emu.backend.headercodec import (
    NATIVE_BUF,
    header_codec,
    native_deparse_locals,
    native_deparse_return,
)
from p4emu.backend.rt import PacketContext
from p4emu.frontend import types as t

needs_build = pytest.mark.skipif(
    native.build_missing() is not None, reason=str(native.build_missing())
)

#: (header, [(field, kind, width)]) in the deparser's order; kind: bit, int or bool
HEADERS: list[tuple[str, list[tuple[str, str, int]]]] = [
    ("sel", [("mask", "bit", 8), ("nsid", "bit", 8)]),
    (
        "a",
        [
            ("f1", "bit", 1),
            ("f3", "bit", 3),
            ("s4", "int", 4),
            ("s8", "int", 8),
            ("mac", "bit", 48),
            ("q", "bit", 64),
            ("sq", "int", 64),
            ("b", "bool", 1),
            ("f7", "bit", 7),
            ("f63", "bit", 63),
            ("g1", "bit", 1),
        ],
    ),
    (
        "w",
        [
            ("addr", "bit", 128),
            ("saddr", "int", 128),
            ("n", "bit", 4),
            ("rest", "bit", 124),
            ("x", "bit", 72),
        ],
    ),
]
SID_BITS = 128
MAX_SIDS = 4
VARBIT_MAX = 64

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header sel_t { bit<8> mask; bit<8> nsid; }
header a_t {
    bit<1> f1; bit<3> f3; int<4> s4; int<8> s8; bit<48> mac; bit<64> q; int<64> sq;
    bool b; bit<7> f7; bit<63> f63; bit<1> g1;
}
header w_t { bit<128> addr; int<128> saddr; bit<4> n; bit<124> rest; bit<72> x; }
header sid_t { bit<128> sid; }
header v_t { bit<8> len; varbit<64> data; }
struct headers_t { sel_t sel; a_t a; w_t w; sid_t[4] sids; v_t v; }
struct meta_t { int<64> r; }
parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.sel);
        transition select(h.sel.mask[0:0]) { 1: pa; default: tw; }
    }
    state pa { pk.extract(h.a); transition tw; }
    state tw { transition select(h.sel.mask[1:1]) { 1: pw; default: ts; } }
    state pw { pk.extract(h.w); transition ts; }
    state ts { transition select(h.sel.nsid) { 0: tv; 1: s1; 2: s2; 3: s3; default: s4; } }
    state s4 { pk.extract(h.sids.next); transition s3; }
    state s3 { pk.extract(h.sids.next); transition s2; }
    state s2 { pk.extract(h.sids.next); transition s1; }
    state s1 { pk.extract(h.sids.next); transition tv; }
    state tv { transition select(h.sel.mask[2:2]) { 1: pv; default: accept; } }
    state pv {
        pk.extract(h.v, (bit<32>)pk.lookahead<bit<8>>() * 8);
        transition accept;
    }
}
control V(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        m.r = ((int<64>)h.a.s8) * h.a.sq;  // may overflow 64 bits: both stay Python ints
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t h) {
    apply { pk.emit(h.sel); pk.emit(h.a); pk.emit(h.w); pk.emit(h.sids); pk.emit(h.v); }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def _edges(kind: str, width: int) -> list[Any]:
    """A field's boundary values, as P4 values (int<W> signed, bool a bool)."""
    if kind == "bool":
        return [False, True]
    if kind == "int":
        half = 1 << (width - 1)
        return [0, -1, -half, half - 1, 1, -2]
    values = [0, (1 << width) - 1, 1 << (width - 1), 1, (1 << width) - 2]
    if width > 64:
        values += [1 << 64, (1 << 64) - 1, (1 << 64) | 1, (1 << width) - (1 << 63)]
    return values


def _bits(kind: str, width: int, value: Any) -> int:
    return int(value) % (1 << width)


def _reference(fields: list[tuple[str, str, int]], values: dict[str, Any]) -> bytes:
    """The header's bytes, bit by bit, knowing nothing of p4emu."""
    number = 0
    total = 0
    for name, kind, width in fields:
        number = (number << width) | _bits(kind, width, values[name])
        total += width
    return number.to_bytes(total // 8, "big")


def _cases() -> list[dict[str, Any]]:
    """Packets: each header's fields at their edges (rotated per field so that every
    value meets every other), valid/invalid mixes, 0..4 SIDs, varbit lengths, payloads."""
    cases = []
    payloads = [b"", b"\x00", bytes(range(256)) * 6]
    for index, (mask, nsid) in enumerate(itertools.product(range(8), range(MAX_SIDS + 1))):
        values: dict[str, dict[str, Any]] = {}
        for header, fields in HEADERS[1:]:
            values[header] = {}
            for position, (name, kind, width) in enumerate(fields):
                edges = _edges(kind, width)
                values[header][name] = edges[(index + position) % len(edges)]
        sid_edges = _edges("bit", SID_BITS)
        sids = [sid_edges[(index + k) % len(sid_edges)] for k in range(nsid)]
        vlen = (index * 3) % (VARBIT_MAX // 8 + 1)
        vdata = (1 << (vlen * 8)) - 1 - index if vlen else 0
        vdata = max(vdata, 0)
        cases.append(
            {
                "mask": mask,
                "nsid": nsid,
                "values": values,
                "sids": sids,
                "vlen": vlen,
                "vdata": vdata,
                "payload": payloads[index % len(payloads)],
            }
        )
    return cases


def _frame(case: dict[str, Any]) -> bytes:
    """The packet of ``case``: what the parser reads and the deparser gives back."""
    out = bytes([case["mask"], case["nsid"]])
    for header, fields in HEADERS[1:]:
        bit = 1 if header == "a" else 2
        if case["mask"] & bit:
            out += _reference(fields, case["values"][header])
    for sid in case["sids"]:
        out += sid.to_bytes(SID_BITS // 8, "big")
    if case["mask"] & 4:
        out += bytes([case["vlen"]]) + case["vdata"].to_bytes(case["vlen"], "big")
    return out + case["payload"]


def _set_headers(program: Any, case: dict[str, Any]) -> Any:
    """A header struct holding ``case``'s values, set field by field (not parsed)."""
    hdr = program.new_headers()
    hdr.sel.valid_ = True
    hdr.sel.mask, hdr.sel.nsid = case["mask"], case["nsid"]
    for header, _fields in HEADERS[1:]:
        bit = 1 if header == "a" else 2
        target = getattr(hdr, header)
        target.valid_ = bool(case["mask"] & bit)
        for name, value in case["values"][header].items():
            setattr(target, name, value)
    for k, sid in enumerate(case["sids"]):
        hdr.sids.items[k].valid_ = True
        hdr.sids.items[k].sid = sid
    if case["mask"] & 4:
        hdr.v.valid_ = True
        hdr.v.len = case["vlen"]
        hdr.v.data = (case["vlen"] * 8, case["vdata"])
    return hdr


def _run(native_env: str, cases: list[dict[str, Any]]) -> tuple[str, list[Any]]:
    """Per case: the switch's frame out, the deparser's bytes of headers set by hand,
    and the parser's (offset, error, field values) of the frame."""
    switch = switch_on_path(PROGRAM, f"codec-{native_env}.p4", native_env)
    program = switch.program
    results: list[Any] = []
    for case in cases:
        frame = _frame(case)
        switch.inject(0, frame)
        sent = switch.collect()
        hdr = _set_headers(program, case)
        deparsed = program.deparse(hdr, PacketContext(0, case["payload"]))
        # the payload as the switch gives it: the tail of the packet that came in
        tail = PacketContext(0)
        tail.set_payload(b"\xee" * 37 + case["payload"], 37)
        assert program.deparse(hdr, tail) == deparsed
        parsed = program.new_headers()
        ctx = PacketContext(len(frame))
        meta, sm = program.new_metadata(), program.new_standard_metadata()
        sm.parser_error = -1  # the parser stores its error (0: none) on every path
        offset = program.parse(frame, parsed, meta, sm, ctx)
        error = sm.parser_error
        fields = {
            header: (
                getattr(parsed, header).valid_,
                {name: getattr(getattr(parsed, header), name) for name, _, _ in fields_}
                if getattr(parsed, header).valid_
                else {},
            )
            for header, fields_ in HEADERS
        }
        sids = [item.sid for item in parsed.sids.items if item.valid_]
        varbit = parsed.v.data if parsed.v.valid_ else None
        results.append((sent, deparsed, offset, error, fields, sids, varbit))
    assert program.shared is not None
    return program.shared.how, results


def _check(case: dict[str, Any], result: Any) -> None:
    sent, deparsed, offset, error, fields, sids, varbit = result
    frame = _frame(case)
    assert sent == [(1, frame)]
    assert deparsed == frame
    assert (offset, error) == (len(frame) - len(case["payload"]), 0)
    for header, header_fields in HEADERS[1:]:
        bit = 1 if header == "a" else 2
        valid, values = fields[header]
        assert valid == bool(case["mask"] & bit)
        if valid:
            want = {name: case["values"][header][name] for name, _, _ in header_fields}
            assert values == want
    assert sids == case["sids"]
    if case["mask"] & 4:
        assert varbit == (case["vlen"] * 8, case["vdata"])


def test_the_pure_deparser_and_parser_give_the_reference_bytes_and_values() -> None:
    cases = _cases()
    how, results = _run("0", cases)
    assert how.startswith("pure")
    for case, result in zip(cases, results, strict=True):
        _check(case, result)


@pytest.mark.integration
@needs_build
def test_native_deparser_and_parser_equal_pure_byte_for_byte(fresh_native: None) -> None:
    cases = _cases()
    how, compiled = _run("1", cases)
    assert how == "compiled"
    _, pure = _run("0", cases)
    assert compiled == pure
    for case, result in zip(cases, compiled, strict=True):
        _check(case, result)


@pytest.mark.integration
@needs_build
def test_native_deparser_raises_as_pure_on_a_value_outside_its_field(
    fresh_native: None,
) -> None:
    """A value the generator never stores (wider than its field) is no silent wrong byte:
    both paths refuse 2**128 in a 128-bit field when it is stored (the property of its
    halves: p4emu.backend.wide), a half outside 64 bits (the compiled class cannot hold
    one, the pure deparser's ``pack`` raises), and raise on a 64-bit field holding 2**64
    (``pack`` and Cython's conversion)."""
    for native_env in ("1", "0"):
        switch = switch_on_path(PROGRAM, f"codec-raise-{native_env}.p4", native_env)
        program = switch.program
        hdr = program.new_headers()
        hdr.w.valid_ = True
        with pytest.raises(OverflowError):
            hdr.w.addr = 1 << 128
        try:
            hdr.w.addr_hi_ = 1 << 64
        except OverflowError:
            assert native_env == "1"  # an unsigned long long
        else:
            assert native_env == "0"
            with pytest.raises(struct.error):
                program.deparse(hdr, PacketContext(0, b""))
        hdr = program.new_headers()
        hdr.a.valid_ = True
        hdr.a.q = 1 << 64
        with pytest.raises((OverflowError, struct.error)):  # struct.error on the pure path
            program.deparse(hdr, PacketContext(0, b""))


def test_the_native_buffer_holds_every_emit_of_the_deparser() -> None:
    """The deparser's C buffer is sized for every header it can emit: here sel (2) + a
    (33) + w (57) + 4 SIDs (64) + the varbit header at its maximum (1 + 8) bytes."""
    switch = switch_on_path(PROGRAM, "codec-size.p4", "0")
    source = switch.program.source
    deparser = source[source.index("def deparse_block") :]
    assert f"{NATIVE_BUF}: cython.uchar[{2 + 33 + 57 + 4 * 16 + 9}]" in deparser
    assert deparser.count("if cython.compiled:") == 6  # five emits (one loops) and the end


def test_native_emit_lines_write_each_chunk_big_endian() -> None:
    codec = header_codec(
        t.HeaderType(
            "h",
            [
                t.FieldInfo("a", t.BitsType(4, False)),
                t.FieldInfo("b", t.BitsType(12, False)),
                t.FieldInfo("c", t.BitsType(128, False)),
                t.FieldInfo("d", t.BitsType(128, True)),
                t.FieldInfo("e", t.BitsType(8, False)),
            ],
        )
    )
    lines = codec.native_emit_lines("x")
    assert lines[0] == (
        "_dpc = (cython.cast(cython.ulonglong, x.a) << 12) | cython.cast(cython.ulonglong, x.b)"
    )
    # a chunk of 2 to 8 bytes: its low bytes stored big-endian by one C helper
    assert lines[1] == "P4_STORE_BE(cython.address(_dpb[_dpn + 0]), _dpc, 2)"
    # an unsigned 128-bit field: its two halves, each a chunk
    assert lines[2] == "_dpc = cython.cast(cython.ulonglong, x.c_hi_)"
    assert lines[3] == "P4_STORE_BE(cython.address(_dpb[_dpn + 2]), _dpc, 8)"
    assert lines[4] == "_dpc = cython.cast(cython.ulonglong, x.c_lo_)"
    assert lines[5] == "P4_STORE_BE(cython.address(_dpb[_dpn + 10]), _dpc, 8)"
    # a signed one: converted from its Python int by CPython
    assert lines[6] == (
        f"P4_INT_TO_BE((x.d & {(1 << 128) - 1}), cython.address(_dpb[_dpn + 18]), 16)"
    )
    # a one-byte chunk: the byte stored
    assert lines[7] == "_dpc = cython.cast(cython.ulonglong, x.e)"
    assert lines[8] == "_dpb[_dpn + 34] = cython.cast(cython.uchar, _dpc)"
    assert lines[9] == "_dpn += 35"
    assert len(lines) == 10
    assert native_deparse_locals(0)[0] == "_dpb: cython.uchar[1]"
    assert native_deparse_return()[-1] == 'return b"".join(out)'


def test_native_extract_lines_read_each_chunk_big_endian() -> None:
    codec = header_codec(
        t.HeaderType(
            "h",
            [
                t.FieldInfo("a", t.BitsType(4, False)),
                t.FieldInfo("b", t.BitsType(12, False)),
                t.FieldInfo("c", t.BitsType(128, False)),
                t.FieldInfo("e", t.BitsType(8, False)),
            ],
        )
    )
    assert codec.native_extract_lines("x") == [
        "_pdo = off",
        "_dpc = P4_LOAD_BE(cython.address(_pdp[_pdo + 0]), 2)",  # 2 to 8 bytes: one helper
        "x.a = (_dpc >> 12) & 15",
        "x.b = (_dpc) & 4095",
        "_dpc = P4_LOAD_BE(cython.address(_pdp[_pdo + 2]), 8)",
        "x.c_hi_ = _dpc",
        "_dpc = P4_LOAD_BE(cython.address(_pdp[_pdo + 10]), 8)",
        "x.c_lo_ = _dpc",
        "_dpc = cython.cast(cython.ulonglong, _pdp[_pdo + 18])",  # one byte: read
        "x.e = _dpc",
        "x.valid_ = True",
    ]


def test_the_program_holds_signed_fields_both_as_c_and_as_python_objects() -> None:
    compiler = program_compiler(PROGRAM, "codec-decl.p4")
    _, pxd = generated_declarations(compiler)
    a_class = pxd[pxd.index("_a_t:") :]
    a_class = a_class[: a_class.index("cdef class")]
    assert "cdef public object s8" in a_class and "cdef public object sq" in a_class
    assert "cdef public long long s4" in a_class and "cdef public object q" in a_class
