"""Every v1model HashAlgorithm against BMv2's vectors."""

from __future__ import annotations

import random

import pytest

from p4emu.runtime.bitbuf import pack_bits
from p4emu.runtime.exceptions import HashError
from p4emu.runtime.hashes import (
    BMV2_UNSUPPORTED,
    CrcConfig,
    CustomCrc,
    HashAlgorithm,
    checksum,
    compute,
    crc16,
    crc32,
    crc_ccitt,
    csum16,
    hash_fields,
    hash_function,
    identity,
    v1model_hash,
    xor16,
)

CHECK = b"123456789"
# behavioral-model tests/test_calculations.cpp input
BMV2_INPUT = bytes([0x0B, 0xB8, 0x1F, 0x90])


def test_crc32_vectors() -> None:
    assert crc32(CHECK) == 0xCBF43926
    assert crc32(BMV2_INPUT) == 0x005D6A6F
    assert compute(HashAlgorithm.crc32, CHECK) == 0xCBF43926


def test_crc16_is_crc16_arc() -> None:
    assert crc16(CHECK) == 0xBB3D
    assert crc16(BMV2_INPUT) == 0x5D8A
    assert compute(HashAlgorithm.crc16, BMV2_INPUT) == 0x5D8A


def test_crc_ccitt() -> None:
    assert crc_ccitt(CHECK) == 0x29B1
    assert crc_ccitt(BMV2_INPUT) == 0x5D75


def test_crc16_custom_default_and_reconfigured() -> None:
    crc = CustomCrc(16)
    assert crc(BMV2_INPUT) == 0x5D8A
    crc.configure(CrcConfig(0x1021, 0xFFFF, 0x0000, False, False))
    assert crc(BMV2_INPUT) == 0x5D75  # crcCCITT
    crc.configure(CrcConfig(0x1021, 0x0000, 0x0000, False, False))
    assert crc(BMV2_INPUT) == 0xD9B5  # XMODEM
    assert compute(HashAlgorithm.crc16_custom, BMV2_INPUT, custom=crc) == 0xD9B5
    assert compute(HashAlgorithm.crc16_custom, BMV2_INPUT) == 0x5D8A


def test_crc32_custom_default_and_mpeg2() -> None:
    crc = CustomCrc(32)
    assert crc(BMV2_INPUT) == 0x005D6A6F
    assert crc(CHECK) == 0xCBF43926
    crc.configure(CrcConfig(0x04C11DB7, 0xFFFFFFFF, 0x00000000, False, False))
    assert crc(BMV2_INPUT) == 0x125E1592  # CRC-32/MPEG-2
    assert crc(CHECK) == 0x0376E6E7


def test_custom_crc_other_widths_and_errors() -> None:
    assert CustomCrc(8)(CHECK) == 0xF4  # BMv2 crc8 default = CRC-8/SMBUS
    with pytest.raises(HashError):
        CustomCrc(12)
    with pytest.raises(HashError):
        CustomCrc(16).configure(CrcConfig(0x18005, 0, 0, True, True))


def test_csum16_ipv4_header() -> None:
    header = bytes.fromhex("450000730000400040110000c0a80001c0a800c7")
    assert csum16(header) == 0xB861
    assert compute(HashAlgorithm.csum16, header) == 0xB861
    # a header carrying its correct checksum sums to zero
    assert csum16(header[:10] + b"\xb8\x61" + header[12:]) == 0
    assert csum16(b"\x01") == 0xFEFF  # odd length: zero byte appended
    assert csum16(b"") == 0xFFFF


def test_xor16_vectors() -> None:
    assert xor16(bytes.fromhex("1234")) == 0x1234
    assert xor16(bytes.fromhex("123456")) == 0x4434
    assert xor16(bytes.fromhex("12345678")) == 0x444C
    assert xor16(bytes.fromhex("123456789a")) == 0xDE4C
    assert xor16(bytes.fromhex("123456789abc")) == 0xDEF0


def test_identity() -> None:
    assert identity(bytes([1, 2, 3, 4, 5])) == 0x0102030405
    assert identity(bytes(range(1, 11))) == 0x0102030405060708
    # BMv2 "WithConstantNonAligned": 4 zero bits, 0xffff, 12-bit 0x9fd -> 0x0ffff9fd
    assert identity(pack_bits([(0, 4), (0xFFFF, 16), (0x9FD, 12)])) == 0x0FFFF9FD


def test_random_needs_rng_and_is_flagged_unsupported_by_bmv2() -> None:
    assert HashAlgorithm.random in BMV2_UNSUPPORTED
    with pytest.raises(HashError):
        compute(HashAlgorithm.random, b"x")
    a = compute(HashAlgorithm.random, b"x", rng=random.Random(7))
    b = compute(HashAlgorithm.random, b"x", rng=random.Random(7))
    assert a == b
    fn = hash_function(HashAlgorithm.random, rng=random.Random(7))
    assert fn(b"anything") == a


def test_from_name() -> None:
    assert HashAlgorithm.from_name("csum16") is HashAlgorithm.csum16
    with pytest.raises(HashError):
        HashAlgorithm.from_name("md5")


def test_v1model_hash_base_and_max() -> None:
    assert v1model_hash(0x5D8A, 0, 0x10000) == 0x5D8A
    assert v1model_hash(0x5D8A, 100, 16) == 100 + 0x5D8A % 16
    assert v1model_hash(0x5D8A, 7, 0) == 7  # v1model.p4: max == 0 yields base


def test_hash_fields_packs_like_bmv2() -> None:
    fields = [(0x0BB8, 16), (0x1F90, 16)]
    assert hash_fields(HashAlgorithm.crc16, fields, 0, 0x10000) == 0x5D8A
    assert hash_fields(HashAlgorithm.crc32, fields, 10, 1000) == 10 + 0x005D6A6F % 1000


def test_hash_function_for_each_algorithm() -> None:
    for algo in HashAlgorithm:
        fn = hash_function(algo, rng=random.Random(1))
        assert isinstance(fn(BMV2_INPUT), int)


def test_checksum_with_payload() -> None:
    header = bytes.fromhex("450000730000400040110000c0a80001c0a800c7")
    fields = [(int.from_bytes(header, "big"), 160)]
    assert checksum(HashAlgorithm.csum16, fields) == 0xB861
    assert checksum(HashAlgorithm.csum16, fields, b"\x00\x00") == 0xB861
    assert checksum(HashAlgorithm.csum16, fields, b"\x00\x01") == 0xB860
