from __future__ import annotations

import pytest
from finsy.proto import p4d, p4r, rpc_code

from p4emu.p4rt.codec import (
    BitstringType,
    decode_matches,
    decode_p4data,
    decode_signed,
    decode_unsigned,
    encode_matches,
    encode_p4data,
    encode_signed,
    encode_unsigned,
)
from p4emu.p4rt.exceptions import P4RuntimeError
from p4emu.p4rt_client.schema import FieldSchema
from p4emu.runtime.tables import Exact, Lpm, OptionalMatch, Range, Ternary

# The spec's "Examples of Valid Bytestring Encoding" table.
VALID_UNSIGNED = [
    (8, b"\x63", 99),
    (16, b"\x00\x63", 99),
    (16, b"\x63", 99),
    (16, b"\x30\x64", 12388),
    (16, b"\x00\x30\x64", 12388),
    (12, b"\x00\x63", 99),
    (12, b"\x63", 99),
    (12, b"\x00\x00\x63", 99),
]
VALID_SIGNED = [
    (8, b"\x63", 99),
    (8, b"\x9d", -99),
    (8, b"\xff\x9d", -99),
    (12, b"\xfd\x1d", -739),
    (16, b"\x00\x00", 0),
    (16, b"\x00", 0),
]
INVALID_UNSIGNED = [(8, b"\x01\x63"), (8, b""), (16, b"\x01\x00\x63"), (12, b"\x10\x63"),
                    (12, b"\x01\x00\x63"), (12, b"\x00\x40\x63")]  # fmt: skip
INVALID_SIGNED = [(8, b"\x00\x9d"), (12, b"\x8d\x1d"), (16, b"")]


@pytest.mark.parametrize(("width", "data", "value"), VALID_UNSIGNED)
def test_valid_unsigned_bytestrings_are_accepted(width: int, data: bytes, value: int) -> None:
    assert decode_unsigned(data, width, "f") == value


@pytest.mark.parametrize(("width", "data", "value"), VALID_SIGNED)
def test_valid_signed_bytestrings_are_accepted(width: int, data: bytes, value: int) -> None:
    assert decode_signed(data, width, "f") == value


@pytest.mark.parametrize(("width", "data"), INVALID_UNSIGNED)
def test_invalid_unsigned_bytestrings_are_invalid_argument(width: int, data: bytes) -> None:
    with pytest.raises(P4RuntimeError) as info:
        decode_unsigned(data, width, "field x")
    assert info.value.code == rpc_code.INVALID_ARGUMENT
    assert "field x" in info.value.message


@pytest.mark.parametrize(("width", "data"), INVALID_SIGNED)
def test_invalid_signed_bytestrings_are_invalid_argument(width: int, data: bytes) -> None:
    with pytest.raises(P4RuntimeError) as info:
        decode_signed(data, width, "f")
    assert info.value.code == rpc_code.INVALID_ARGUMENT


def test_canonical_encodings() -> None:
    assert encode_unsigned(0) == b"\x00"
    assert encode_unsigned(99) == b"\x63"
    assert encode_unsigned(0x100) == b"\x01\x00"
    assert encode_signed(0) == b"\x00"
    assert encode_signed(-99) == b"\x9d"
    assert encode_signed(-739) == b"\xfd\x1d"
    assert encode_signed(128) == b"\x00\x80"
    assert encode_signed(-128) == b"\x80"
    with pytest.raises(ValueError):
        encode_unsigned(-1)


def test_p4data_round_trip_for_signed_and_unsigned_cells() -> None:
    signed = BitstringType(8, signed=True)
    assert decode_p4data(p4d.P4Data(bitstring=b"\xff"), signed, "r") == 0xFF
    assert encode_p4data(0xFF, signed).bitstring == b"\xff"
    assert encode_p4data(0x7F, signed).bitstring == b"\x7f"
    unsigned = BitstringType(16)
    assert decode_p4data(p4d.P4Data(bitstring=b"\x00\x00\x12"), unsigned, "r") == 0x12
    assert encode_p4data(0x1234, unsigned).bitstring == b"\x12\x34"
    with pytest.raises(P4RuntimeError, match="expected a bitstring"):
        decode_p4data(p4d.P4Data(bool=True), unsigned, "r")


SPECS = [
    FieldSchema("e", 1, 16, "EXACT"),
    FieldSchema("l", 2, 32, "LPM"),
    FieldSchema("t", 3, 8, "TERNARY"),
    FieldSchema("r", 4, 8, "RANGE"),
    FieldSchema("o", 5, 9, "OPTIONAL"),
]


def fm(field_id: int, **kind) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=field_id, **kind)


def test_matches_decode_and_encode_canonically() -> None:
    matches = [
        fm(1, exact=p4r.FieldMatch.Exact(value=b"\x00\x00\x05")),
        fm(2, lpm=p4r.FieldMatch.LPM(value=b"\x0a\x00\x00\x00", prefix_len=8)),
        fm(3, ternary=p4r.FieldMatch.Ternary(value=b"\x00\x10", mask=b"\xf0")),
        fm(4, range=p4r.FieldMatch.Range(low=b"\x01", high=b"\x05")),
        fm(5, optional=p4r.FieldMatch.Optional(value=b"\x01\x00")),
    ]
    values = decode_matches(matches, SPECS, "t")
    assert values == [
        Exact(5),
        Lpm(0x0A000000, 8),
        Ternary(0x10, 0xF0),
        Range(1, 5),
        OptionalMatch(256),
    ]
    encoded = encode_matches(values, SPECS)
    assert encoded[0].exact.value == b"\x05"
    assert encoded[2].ternary.value == b"\x10"
    assert [m.field_id for m in encoded] == [1, 2, 3, 4, 5]


def test_dont_care_fields_are_omitted_in_both_directions() -> None:
    values = decode_matches([fm(1, exact=p4r.FieldMatch.Exact(value=b"\x01"))], SPECS, "t")
    assert values == [Exact(1), None, None, None, None]
    assert [m.field_id for m in encode_matches(values, SPECS)] == [1]


@pytest.mark.parametrize(
    ("matches", "needle"),
    [
        ([], "exact match field e"),
        ([fm(9, exact=p4r.FieldMatch.Exact(value=b"\x01"))], "unknown match field id 9"),
        ([fm(1, exact=p4r.FieldMatch.Exact(value=b"\x01")),
          fm(1, exact=p4r.FieldMatch.Exact(value=b"\x01"))], "given twice"),
        ([fm(1, ternary=p4r.FieldMatch.Ternary(value=b"\x01", mask=b"\x01"))], "got a ternary match"),
        ([fm(1, exact=p4r.FieldMatch.Exact(value=b"\x01")),
          fm(2, lpm=p4r.FieldMatch.LPM(value=b"\x0a", prefix_len=0))], "must be omitted"),
        ([fm(1, exact=p4r.FieldMatch.Exact(value=b"\x01")),
          fm(2, lpm=p4r.FieldMatch.LPM(value=b"\x0a\x00\x00\x01", prefix_len=8))], "past the /8"),
        ([fm(1, exact=p4r.FieldMatch.Exact(value=b"\x01")),
          fm(2, lpm=p4r.FieldMatch.LPM(value=b"\x0a", prefix_len=33))], "prefix length 33"),
        ([fm(1, exact=p4r.FieldMatch.Exact(value=b"\x01")),
          fm(3, ternary=p4r.FieldMatch.Ternary(value=b"\x01", mask=b"\x00"))], "must be omitted"),
        ([fm(1, exact=p4r.FieldMatch.Exact(value=b"\x01")),
          fm(3, ternary=p4r.FieldMatch.Ternary(value=b"\x11", mask=b"\xf0"))], "outside mask"),
        ([fm(1, exact=p4r.FieldMatch.Exact(value=b"\x01")),
          fm(4, range=p4r.FieldMatch.Range(low=b"\x05", high=b"\x01"))], "low 5 > high 1"),
        ([fm(1, exact=p4r.FieldMatch.Exact(value=b"\x01")),
          fm(4, range=p4r.FieldMatch.Range(low=b"\x00", high=b"\xff"))], "must be omitted"),
        ([fm(1, exact=p4r.FieldMatch.Exact(value=b"\x01\x00\x00"))], "does not fit in 16 bits"),
        ([fm(1)], "no match value"),
    ],
)  # fmt: skip
def test_bad_matches_are_invalid_argument(matches: list, needle: str) -> None:
    with pytest.raises(P4RuntimeError) as info:
        decode_matches(matches, SPECS, "table t")
    assert info.value.code == rpc_code.INVALID_ARGUMENT
    assert needle in info.value.message
    assert info.value.message.startswith("table t")


def test_error_proto_carries_code_message_and_space() -> None:
    error = P4RuntimeError(rpc_code.NOT_FOUND, "gone")
    proto = error.to_proto()
    assert (proto.canonical_code, proto.message, proto.space) == (
        rpc_code.NOT_FOUND,
        "gone",
        "ALL-sswitch-p4org",
    )
    assert str(error) == "NOT_FOUND: gone"


@pytest.mark.parametrize(
    ("decode", "data"),
    [
        (decode_unsigned, b"\x01" * 4096),
        (decode_unsigned, b"\xff" * 100_000),
        (decode_signed, b"\x01" * 4096),
        (decode_signed, b"\x80" + b"\x00" * 4095),
    ],
)
def test_huge_values_are_refused_by_length_with_a_short_message(decode, data: bytes) -> None:
    with pytest.raises(P4RuntimeError) as caught:
        decode(data, 32, "parameter x")
    assert caught.value.code == rpc_code.INVALID_ARGUMENT
    assert caught.value.message.startswith("parameter x: bytestring 0x")
    assert f"({len(data)} bytes)" in caught.value.message and len(caught.value.message) < 200


def test_long_sign_and_zero_extensions_still_fit() -> None:
    assert decode_unsigned(b"\x00" * 5000 + b"\x2a", 8, "v") == 42
    assert decode_signed(b"\xff" * 5000 + b"\xd6", 8, "v") == -42
    assert decode_signed(b"\x00" * 5000 + b"\x2a", 8, "v") == 42
