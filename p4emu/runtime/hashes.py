"""v1model ``HashAlgorithm`` implementations with BMv2-exact outputs.

Reference: behavioral-model ``src/bm_sim/calculations.cpp`` (and its unit tests). The
v1model names map to BMv2 calculations of the same name:

============  =======================================================================
crc32         CRC-32 (IEEE 802.3): poly 0x04C11DB7, init 0xFFFFFFFF, reflected in/out,
              xor-out 0xFFFFFFFF. ``crc32(b"123456789") == 0xCBF43926``.
crc16         CRC-16/ARC (a.k.a. CRC-16/IBM): poly 0x8005, init 0, reflected in/out,
              xor-out 0. ``crc16(b"123456789") == 0xBB3D``.
crc32_custom  :class:`CustomCrc` of width 32; BMv2's default config equals ``crc32``;
              reconfigurable at run time (``set_crc32_parameters``).
crc16_custom  :class:`CustomCrc` of width 16; default equals ``crc16``.
identity      the first ``min(8, len)`` bytes read big-endian.
csum16        RFC 1071 ones'-complement checksum (odd length: zero byte appended),
              the value as a big-endian 16-bit integer.
xor16         XOR of the data split in big-endian 16-bit words, the last odd byte
              taken as the high byte of a word.
random        BMv2 registers **no** calculation named ``random``: a BMv2 JSON that uses
              it fails to load ("Unknown hash algorithm: random"). p4emu returns a
              uniformly random 64-bit value from the caller's seedable RNG instead;
              :data:`BMV2_UNSUPPORTED` lets a backend reject it to stay BMv2-exact.
============  =======================================================================

BMv2 also has ``crcCCITT`` (CRC-16/CCITT-FALSE), exposed here as :func:`crc_ccitt`.

The v1model ``hash(out result, algo, base, data, max)`` (BMv2 primitive
``modify_field_with_hash_based_offset``) is :func:`v1model_hash`:
``result = base + (H(data) % max)``, truncated to the width of ``result`` by the caller.
``max == 0``: v1model.p4 documents ``result = base``; BMv2 computes ``% 0`` (undefined,
a crash), so p4emu follows the v1model.p4 documentation.

Field lists are serialized as BMv2 does (:func:`p4emu.runtime.bitbuf.pack_bits`): the
fields are concatenated bit by bit MSB-first without alignment, and the last byte is
completed with zero bits at its least significant end. BMv2's buffer builder skips the
fields of a header invalid at that point (p4c copies hash data into temporaries first, so
for ``hash`` only whole headers are skipped); that choice belongs to the caller.
"""

from __future__ import annotations

import binascii
import enum
import random as _random
import sys
import zlib
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from p4emu.runtime.bitbuf import pack_bits
from p4emu.runtime.exceptions import HashError

_LITTLE_ENDIAN = sys.byteorder == "little"


class HashAlgorithm(enum.Enum):
    """The v1model ``HashAlgorithm`` enum (member values are the P4 names)."""

    crc32 = "crc32"
    crc32_custom = "crc32_custom"
    crc16 = "crc16"
    crc16_custom = "crc16_custom"
    random = "random"
    identity = "identity"
    csum16 = "csum16"
    xor16 = "xor16"

    @classmethod
    def from_name(cls, name: str) -> HashAlgorithm:
        try:
            return cls(name)
        except ValueError:
            known = ", ".join(m.value for m in cls)
            raise HashError(f"unknown hash algorithm {name!r} (known: {known})") from None


#: Algorithms the BMv2 ``simple_switch`` refuses to load (see the module docstring).
BMV2_UNSUPPORTED = frozenset({HashAlgorithm.random})

#: Natural output width (bits) of each algorithm's raw value, before ``% max``.
OUTPUT_BITS = {
    HashAlgorithm.crc32: 32,
    HashAlgorithm.crc32_custom: 32,
    HashAlgorithm.crc16: 16,
    HashAlgorithm.crc16_custom: 16,
    HashAlgorithm.random: 64,
    HashAlgorithm.identity: 64,
    HashAlgorithm.csum16: 16,
    HashAlgorithm.xor16: 16,
}


# --- CRCs -------------------------------------------------------------------------------


def _reflect(value: int, nbits: int) -> int:
    result = 0
    for _ in range(nbits):
        result = (result << 1) | (value & 1)
        value >>= 1
    return result


def _reflected_table(poly: int, width: int) -> list[int]:
    """Table for the LSB-first (reflected) form of a CRC with polynomial ``poly``."""
    rpoly = _reflect(poly, width)
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ rpoly if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC16_ARC_TABLE = _reflected_table(0x8005, 16)


def crc32(data: bytes) -> int:
    """BMv2 ``crc32`` (standard CRC-32)."""
    return zlib.crc32(data)


def crc16(data: bytes) -> int:
    """BMv2 ``crc16`` (CRC-16/ARC)."""
    crc = 0
    table = _CRC16_ARC_TABLE
    for byte in data:
        crc = (crc >> 8) ^ table[(crc ^ byte) & 0xFF]
    return crc


def crc_ccitt(data: bytes) -> int:
    """BMv2 ``crcCCITT`` (CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection)."""
    return binascii.crc_hqx(data, 0xFFFF)


@dataclass(frozen=True)
class CrcConfig:
    """BMv2 ``crc_config_t``: the parameters of a custom CRC."""

    polynomial: int
    initial_remainder: int
    final_xor_value: int
    data_reflected: bool
    remainder_reflected: bool


#: BMv2 defaults of ``crc16_custom`` / ``crc32_custom`` (same outputs as crc16 / crc32).
DEFAULT_CRC16_CONFIG = CrcConfig(0x8005, 0x0000, 0x0000, True, True)
DEFAULT_CRC32_CONFIG = CrcConfig(0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True)


class CustomCrc:
    """A run-time configurable CRC computed exactly as BMv2's ``crc_custom<T>``.

    BMv2 uses an MSB-first table; with ``data_reflected`` each input byte is bit-reversed
    before use, and with ``remainder_reflected`` the final remainder is bit-reversed over
    the CRC width, before the final XOR. Each ``hash()`` call site owns one instance, as
    each BMv2 calculation owns its own configuration.
    """

    __slots__ = ("_byte_reflect", "_table", "_top_shift", "config", "width")

    def __init__(self, width: int, config: CrcConfig | None = None) -> None:
        if width not in (8, 16, 32, 64):
            raise HashError(f"custom CRC width must be 8, 16, 32 or 64, got {width}")
        self.width = width
        self._top_shift = width - 8
        self._byte_reflect = [_reflect(b, 8) for b in range(256)]
        if config is None:
            config = {16: DEFAULT_CRC16_CONFIG, 32: DEFAULT_CRC32_CONFIG}.get(
                width, CrcConfig(0x07 if width == 8 else 0x1B, 0, 0, width != 8, width != 8)
            )
        self.configure(config)

    def configure(self, config: CrcConfig) -> None:
        """Change the parameters (BMv2 ``set_crc16_parameters`` / ``set_crc32_parameters``)."""
        limit = 1 << self.width
        for label, value in (
            ("polynomial", config.polynomial),
            ("initial remainder", config.initial_remainder),
            ("final xor value", config.final_xor_value),
        ):
            if not 0 <= value < limit:
                raise HashError(f"crc{self.width}_custom: {label} {value:#x} does not fit")
        mask = limit - 1
        top = 1 << (self.width - 1)
        table = []
        for dividend in range(256):
            remainder = dividend << (self.width - 8)
            for _ in range(8):
                remainder = (
                    ((remainder << 1) ^ config.polynomial) if remainder & top else (remainder << 1)
                )
                remainder &= mask
            table.append(remainder)
        self._table = table
        self.config = config

    def __call__(self, data: bytes) -> int:
        config = self.config
        table = self._table
        mask = (1 << self.width) - 1
        shift = self._top_shift
        remainder = config.initial_remainder
        if config.data_reflected:
            reflect = self._byte_reflect
            for byte in data:
                remainder = table[reflect[byte] ^ (remainder >> shift)] ^ ((remainder << 8) & mask)
        else:
            for byte in data:
                remainder = table[byte ^ (remainder >> shift)] ^ ((remainder << 8) & mask)
        if config.remainder_reflected:
            remainder = _reflect(remainder, self.width)
        return remainder ^ config.final_xor_value


# --- checksums and trivial hashes -------------------------------------------------------


def csum16(data: bytes) -> int:
    """BMv2 ``csum16``: the RFC 1071 internet checksum of ``data`` (odd length: zero pad)."""
    if len(data) & 1:
        data = bytes(data) + b"\x00"
    # The ones'-complement sum is byte-order independent up to a final byte swap
    # (RFC 1071 section 2), so sum native-order words in C and swap once.
    total = sum(array("H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    if _LITTLE_ENDIAN:
        total = ((total & 0xFF) << 8) | (total >> 8)
    return ~total & 0xFFFF


def xor16(data: bytes) -> int:
    """BMv2 ``xor16``: XOR of big-endian 16-bit words, odd tail byte as high byte."""
    result = 0
    length = len(data)
    for i in range(0, length - 1, 2):
        result ^= (data[i] << 8) | data[i + 1]
    if length & 1:
        result ^= data[-1] << 8
    return result


def identity(data: bytes) -> int:
    """BMv2 ``identity``: the first ``min(8, len)`` bytes as a big-endian integer."""
    return int.from_bytes(data[:8], "big")


# --- dispatch -------------------------------------------------------------------------


_FIXED = {
    HashAlgorithm.crc32: crc32,
    HashAlgorithm.crc16: crc16,
    HashAlgorithm.identity: identity,
    HashAlgorithm.csum16: csum16,
    HashAlgorithm.xor16: xor16,
}


def compute(
    algo: HashAlgorithm,
    data: bytes,
    *,
    custom: CustomCrc | None = None,
    rng: _random.Random | None = None,
) -> int:
    """Raw output of ``algo`` over ``data`` (before ``base``/``max``).

    ``crc16_custom``/``crc32_custom`` use ``custom`` if given (the call site's own,
    reconfigurable CRC), else BMv2's default configuration. ``random`` draws from ``rng``
    (required).
    """
    fn = _FIXED.get(algo)
    if fn is not None:
        return fn(data)
    if algo is HashAlgorithm.crc16_custom:
        return (custom or _DEFAULT_CUSTOM[16])(data)
    if algo is HashAlgorithm.crc32_custom:
        return (custom or _DEFAULT_CUSTOM[32])(data)
    if algo is HashAlgorithm.random:
        if rng is None:
            raise HashError("HashAlgorithm.random needs an RNG (pass rng=)")
        return rng.getrandbits(64)
    raise HashError(f"unknown hash algorithm {algo!r}")


_DEFAULT_CUSTOM = {16: CustomCrc(16), 32: CustomCrc(32)}


def hash_function(
    algo: HashAlgorithm, *, custom: CustomCrc | None = None, rng: _random.Random | None = None
) -> Callable[[bytes], int]:
    """Return a one-argument ``f(data: bytes) -> int`` for ``algo`` (bind once per call site)."""
    fn = _FIXED.get(algo)
    if fn is not None:
        return fn
    if algo is HashAlgorithm.crc16_custom:
        return custom or CustomCrc(16)
    if algo is HashAlgorithm.crc32_custom:
        return custom or CustomCrc(32)
    if algo is HashAlgorithm.random:
        if rng is None:
            raise HashError("HashAlgorithm.random needs an RNG (pass rng=)")
        return lambda _data: rng.getrandbits(64)
    raise HashError(f"unknown hash algorithm {algo!r}")


def v1model_hash(hash_value: int, base: int, max_value: int) -> int:
    """v1model ``hash`` arithmetic: ``base + hash_value % max`` (``base`` when max is 0).

    The caller truncates the result to the width of the ``out`` argument.
    """
    if max_value == 0:
        return base
    return base + hash_value % max_value


def hash_fields(
    algo: HashAlgorithm,
    fields: Sequence[tuple[int, int]],
    base: int,
    max_value: int,
    *,
    custom: CustomCrc | None = None,
    rng: _random.Random | None = None,
) -> int:
    """Convenience: pack ``(value, width)`` fields as BMv2 does, hash, apply base/max."""
    return v1model_hash(compute(algo, pack_bits(fields), custom=custom, rng=rng), base, max_value)


def checksum(
    algo: HashAlgorithm,
    fields: Sequence[tuple[int, int]],
    payload: bytes = b"",
    *,
    custom: CustomCrc | None = None,
) -> int:
    """Checksum for ``verify_checksum``/``update_checksum`` (``_with_payload`` if payload).

    BMv2 serializes the field list (zero-padded to a byte), appends the payload bytes and
    runs the calculation; ``verify`` compares the result with the checksum field,
    ``update`` writes it (truncated to the field's width by the caller).
    """
    return compute(algo, pack_bits(fields) + bytes(payload), custom=custom)
