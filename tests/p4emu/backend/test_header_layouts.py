"""Header extraction and emission against a bit-level reference, for every width 1..1024
and random mixtures of field widths (the codec's generated code, run directly), and the
generated extract-and-emit programs on p4emu against the reference and (``-m bmv2``) BMv2.

The reference reads a header as a string of '0'/'1' characters and slices it field by
field; it shares nothing with the codec's ``struct`` codes and shifts."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from backend_helpers import header_class
from header_layouts import (
    EGRESS_PORT,
    Layout,
    expected,
    layouts_program,
    offset_layouts,
    packed,
    packets,
    random_layouts,
    width_layouts,
)

from p4emu.backend.headercodec import header_codec
from p4emu.frontend import load_program_text
from p4emu.frontend import types as t
from p4emu.switch import Switch

ALL_WIDTHS = width_layouts(range(1, 1025))
PAD_FIRST = [list(reversed(layout)) for layout in ALL_WIDTHS if len(layout) == 2]
MIXTURES = [layout for seed in range(4) for layout in random_layouts(seed, 64)]


def _header_type(layout: Layout) -> t.HeaderType:
    fields = []
    for index, (kind, width) in enumerate(layout):
        type_: t.Type = t.BoolType() if kind == "bool" else t.BitsType(width, kind == "int")
        fields.append(t.FieldInfo(f"f{index}", type_))
    return t.HeaderType("h", fields)


def _codec_functions(layout: Layout):
    """(extract(data) -> object, emit(object) -> bytes) built from the codec's code."""
    type_ = _header_type(layout)
    codec = header_codec(type_)
    packer = struct.Struct(codec.struct_format)
    names = {"U": packer.unpack_from, "P": packer.pack, "H": header_class(type_)}
    body = "\n    ".join(codec.extract_lines("h", "data", "0", "U"))
    source = (
        f"def extract(data):\n    h = H()\n    {body}\n    return h\n"
        f"def emit(h):\n    return {codec.emit_expr('h', 'P')}\n"
    )
    exec(compile(source, "<codec>", "exec"), names)
    return names["extract"], names["emit"], codec.nbytes


def _bit_string(data: bytes) -> str:
    return "".join(format(byte, "08b") for byte in data)


def _reference_fields(layout: Layout, data: bytes) -> list[object]:
    """Field values of ``data`` as P4 values: bit strings unsigned, int<W> two's complement."""
    bits = _bit_string(data)
    values: list[object] = []
    position = 0
    for kind, width in layout:
        piece = bits[position : position + width]
        position += width
        if kind == "bool":
            values.append(piece == "1")
        elif kind == "int" and piece[0] == "1":
            values.append(int(piece, 2) - (1 << width))
        else:
            values.append(int(piece, 2))
    return values


def _reference_bytes(layout: Layout, values: list[object]) -> bytes:
    pieces = []
    for (kind, width), value in zip(layout, values, strict=True):
        number = int(value) if kind == "bool" else int(value) % (1 << width)  # type: ignore[call-overload]
        pieces.append(format(number, f"0{width}b"))
    bits = "".join(pieces)
    return bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8))


def _random_values(layout: Layout, rng: random.Random) -> list[object]:
    values: list[object] = []
    for kind, width in layout:
        if kind == "bool":
            values.append(rng.random() < 0.5)
        elif kind == "int":
            values.append(rng.randrange(-(1 << (width - 1)), 1 << (width - 1)))
        else:
            values.append(rng.getrandbits(width))
    return values


def _check_layout(layout: Layout, rng: random.Random) -> None:
    extract, emit, nbytes = _codec_functions(layout)
    assert nbytes * 8 == sum(width for _, width in layout)
    for data in (rng.randbytes(nbytes), b"\xff" * nbytes, bytes(nbytes)):
        header = extract(data)
        got = [getattr(header, f"f{index}") for index in range(len(layout))]
        assert got == _reference_fields(layout, data), (layout, data.hex())
        assert header.valid_ is True
        assert emit(header) == data, (layout, data.hex())
    values = _random_values(layout, rng)
    header = header_class(_header_type(layout))()
    for index, value in enumerate(values):
        setattr(header, f"f{index}", value)
    assert emit(header) == _reference_bytes(layout, values), layout


@pytest.mark.parametrize("first", range(1, 1025, 128))
def test_every_width_from_1_to_1024_bits_extracts_and_emits_as_the_reference(first: int) -> None:
    rng = random.Random(first)
    for layout in ALL_WIDTHS[first - 1 : first + 127]:
        _check_layout(layout, rng)


def test_every_width_after_a_sub_byte_pad_field() -> None:
    rng = random.Random(2)
    for layout in PAD_FIRST:
        _check_layout(layout, rng)


def test_sub_byte_fields_at_every_bit_offset() -> None:
    rng = random.Random(3)
    for layout in offset_layouts():
        _check_layout(layout, rng)


def test_random_mixtures_of_bit_int_and_bool_fields() -> None:
    rng = random.Random(4)
    for layout in MIXTURES:
        _check_layout(layout, rng)


def test_the_widths_of_the_reported_corruption() -> None:
    """Chunks of 7, 11, 13, 14, 15 and 17+ bytes (three or more ``struct`` codes) were
    combined with ``a << n | b << m | c`` and lost their top parts."""
    for width in (56, 88, 104, 112, 120, 136, 1024):
        extract, emit, _ = _codec_functions([("bit", width)])
        data = bytes(range(1, width // 8 + 1))
        assert extract(data).f0 == int.from_bytes(data, "big")
        assert emit(extract(data)) == data
    extract, emit, _ = _codec_functions([("bit", 4), ("bit", 52)])
    data = bytes.fromhex("123456789abcde")
    header = extract(data)
    assert (header.f0, header.f1) == (0x1, 0x23456789ABCDE)
    assert emit(header) == data


# ---------------------------------------------------------------- whole programs

PROGRAM_LAYOUTS = {
    "widths_1_to_1024": packed(ALL_WIDTHS, 16),
    "offsets_and_mixtures": packed(offset_layouts(), 12) + random_layouts(11, 12),
}
"""Two programs with many headers each (a parser select picks one per packet): every width
1..1024, sixteen to a header, and sub-byte fields at every offset plus random mixtures."""


def _p4emu_frames(source: str, name: str, sent: list[bytes]) -> list[tuple[int, bytes]]:
    switch = Switch(load_program_text(source, f"{name}.p4"))
    frames = []
    for packet in sent:
        switch.inject(0, packet)
        frames.extend(switch.collect())
    return frames


def test_a_generated_program_extracts_changes_and_emits_as_the_reference() -> None:
    """The whole path (parser, ingress, deparser) of one program; the widths' program, 20 s
    to compile here, runs with ``-m bmv2`` below (the codec tests above cover each width)."""
    name = "offsets_and_mixtures"
    layouts = PROGRAM_LAYOUTS[name]
    sent = packets(layouts, seed=len(name))
    frames = _p4emu_frames(layouts_program(layouts), name, sent)
    assert frames == [
        (EGRESS_PORT, expected(layout, packet)) for layout, packet in zip(layouts, sent)
    ]


@pytest.mark.bmv2
@pytest.mark.parametrize("name", sorted(PROGRAM_LAYOUTS))
def test_generated_layouts_give_the_same_frames_as_bmv2_and_the_reference(
    name: str, tmp_path: Path
) -> None:
    from bmv2_harness import run_on_bmv2, tools_missing

    reason = tools_missing()
    if reason is not None:
        pytest.skip(reason)
    layouts = PROGRAM_LAYOUTS[name]
    source = layouts_program(layouts)
    sent = packets(layouts, seed=len(name))
    reference = [(EGRESS_PORT, expected(layout, packet)) for layout, packet in zip(layouts, sent)]
    assert _p4emu_frames(source, name, sent) == reference
    program = tmp_path / f"{name}.p4"
    program.write_text(source, encoding="utf-8")
    bmv2 = run_on_bmv2(
        program, [], [(0, packet) for packet in sent], tmp_path, expected_frames=len(sent)
    )
    assert bmv2 == reference
