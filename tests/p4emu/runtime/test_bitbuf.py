"""Header extraction and deparsing at byte and bit offsets."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p4emu.runtime.bitbuf import BitWriter, HeaderLayout, pack_bits, peek_bits
from p4emu.runtime.exceptions import (
    FieldValueError,
    HeaderLayoutError,
    HeaderTooShort,
    PacketTooShort,
)

ETHERNET = [48, 48, 16]
IPV4 = [4, 4, 8, 16, 16, 3, 13, 8, 8, 16, 32, 32]
IPV4_BYTES = bytes.fromhex("450000730000400040110000c0a80001c0a800c7")


def test_ethernet_struct_path_extracts_big_endian_fields() -> None:
    layout = HeaderLayout(ETHERNET, name="ethernet_t")
    frame = bytes.fromhex("ffffffffffff 001122334455 0800".replace(" ", "")) + b"payload"
    assert layout.extract(frame, 0) == [0xFFFFFFFFFFFF, 0x001122334455, 0x0800]
    assert layout.nbytes == 14


def test_ipv4_sub_byte_fields() -> None:
    layout = HeaderLayout(IPV4, name="ipv4_t")
    fields = layout.extract(IPV4_BYTES, 0)
    assert fields[0] == 4 and fields[1] == 5
    assert fields[3] == 0x73
    assert fields[5] == 0b010  # flags: don't fragment
    assert fields[6] == 0
    assert fields[8] == 17
    assert fields[10] == 0xC0A80001
    assert layout.emit(fields) == IPV4_BYTES


def test_extract_at_byte_offset_after_another_header() -> None:
    eth = HeaderLayout(ETHERNET)
    ipv4 = HeaderLayout(IPV4)
    frame = bytes(12) + b"\x08\x00" + IPV4_BYTES
    assert eth.extract(frame, 0)[2] == 0x0800
    assert ipv4.extract(frame, 14 * 8)[10] == 0xC0A80001


def test_extract_at_non_byte_aligned_offset() -> None:
    layout = HeaderLayout([8, 16, 32, 8])
    data = bytes.fromhex("0a0b0c0d0e0f1011")
    shifted = (int.from_bytes(data, "big") << 3).to_bytes(9, "big")
    assert layout.extract(shifted, 5) == layout.extract(data, 0)


def test_packet_too_short_reports_bits() -> None:
    layout = HeaderLayout(IPV4)
    with pytest.raises(PacketTooShort) as info:
        layout.extract(IPV4_BYTES[:19], 0)
    assert info.value.needed_bits == 160
    assert info.value.available_bits == 152
    with pytest.raises(PacketTooShort):
        layout.extract(IPV4_BYTES + b"\x00", 9)  # non-aligned path too


def test_packet_too_short_is_distinguishable_from_other_errors() -> None:
    layout = HeaderLayout([8, 8])
    with pytest.raises(PacketTooShort):
        layout.extract(b"\x01", 0)
    assert not issubclass(PacketTooShort, HeaderTooShort)


def test_emit_truncates_negative_int_fields_to_twos_complement() -> None:
    layout = HeaderLayout([8, 8])
    assert layout.emit([-1, 0x101]) == b"\xff\x01"
    layout2 = HeaderLayout([4, 12])
    assert layout2.emit([-1, -2]) == b"\xff\xfe"


def test_emit_wrong_value_count() -> None:
    with pytest.raises(FieldValueError):
        HeaderLayout([8, 8]).emit([1])
    with pytest.raises(FieldValueError):
        HeaderLayout([4, 4, 8]).emit([1, 2])


def test_emit_refuses_non_byte_multiple_header_but_emit_bits_works() -> None:
    layout = HeaderLayout([3, 2])
    with pytest.raises(FieldValueError):
        layout.emit([1, 1])
    writer = BitWriter()
    layout.emit_bits(writer, [0b101, 0b11])
    assert writer.nbits == 5
    assert writer.to_bytes() == bytes([0b10111000])


def test_bad_layouts() -> None:
    with pytest.raises(HeaderLayoutError):
        HeaderLayout([])
    with pytest.raises(HeaderLayoutError):
        HeaderLayout([8, 0])
    with pytest.raises(HeaderLayoutError):
        HeaderLayout([8, None, None], varbit_max=32)
    with pytest.raises(HeaderLayoutError):
        HeaderLayout([8, None])


def test_varbit_header_round_trip_and_limits() -> None:
    options = HeaderLayout([8, None], name="ipv4_options_t", varbit_max=320)
    data = bytes.fromhex("07 01020304".replace(" ", ""))
    assert options.extract(data, 0, 32) == [7, 0x01020304]
    assert options.emit([7, 0x01020304], 32) == data
    with pytest.raises(HeaderTooShort):
        options.extract(data, 0, 328)
    with pytest.raises(PacketTooShort):
        options.extract(data, 0, 40)


def test_peek_bits() -> None:
    assert peek_bits(b"\xab\xcd", 4, 8) == 0xBC
    assert peek_bits(b"\xab", 0, 0) == 0
    with pytest.raises(PacketTooShort):
        peek_bits(b"\xab", 4, 8)


def test_pack_bits_pads_at_the_end_like_bmv2() -> None:
    # BMv2 calculations test "Extra": f6=0x3d f8=0x3e f9=1 f9=0 -> 0xf4f80200
    assert pack_bits([(0x3D, 6), (0x3E, 8), (1, 9), (0, 9)]) == bytes.fromhex("f4f80200")
    # 12-bit value: zero bits go to the least significant end of the last byte
    assert pack_bits([(0xABC, 12)]) == bytes.fromhex("abc0")
    assert pack_bits([]) == b""


@given(st.lists(st.integers(min_value=1, max_value=70), min_size=1, max_size=12), st.data())
def test_extract_emit_round_trip(widths: list[int], data: st.DataObject) -> None:
    pad = -sum(widths) % 8
    widths = [*widths, pad] if pad else widths
    values = [data.draw(st.integers(min_value=0, max_value=(1 << w) - 1)) for w in widths]
    layout = HeaderLayout(widths)
    raw = layout.emit(values)
    assert layout.extract(raw, 0) == values
    offset = data.draw(st.integers(min_value=0, max_value=15))
    shifted = (int.from_bytes(raw, "big") << (16 - offset)).to_bytes(len(raw) + 2, "big")
    assert layout.extract(shifted, offset) == values
