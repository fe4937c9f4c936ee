"""Data sources of a send: specs, the bytes each makes, and every bad input refused."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from nic_emu import datasource
from nic_emu.datasource import (
    DEFAULT_PATTERN,
    MAX_PATTERN_BYTES,
    PIECE_BYTES,
    DataSpec,
    FileSource,
    PatternSource,
    RandomSource,
    open_source,
    parse_data_spec,
)
from nic_emu.exceptions import DataSourceError

LEGACY_CHUNK = 1 << 20  # nic-emu made its data in chunks of this size before streaming


def legacy_bytes(seed: int, size: int) -> bytes:
    """The data ``nic-emu serve`` sent before its data was streamed (one generator,
    1 MiB ``randbytes`` calls in order)."""
    rng = random.Random(seed)
    return b"".join(
        rng.randbytes(min(LEGACY_CHUNK, size - offset)) for offset in range(0, size, LEGACY_CHUNK)
    )


@pytest.mark.parametrize("size", [1, 10, 4097, PIECE_BYTES + 3, (2 << 20) + 2])
def test_random_source_makes_the_same_bytes_as_before_from_any_offset(size: int) -> None:
    want = legacy_bytes(5, size)
    source = RandomSource(5, size)
    assert all(len(piece) <= PIECE_BYTES for piece in source.pieces(0, size))
    assert b"".join(source.pieces(0, size)) == want
    for start in sorted({0, 1, size // 3, size // 2, size - 1}):
        length = min(size - start, 70_000)
        assert b"".join(source.pieces(start, length)) == want[start : start + length]


def test_a_full_pass_saves_the_generator_state_at_marked_offsets() -> None:
    size = 3 * PIECE_BYTES + 7
    source = RandomSource(9, size)
    source.mark([PIECE_BYTES + 5, 2 * PIECE_BYTES])
    assert b"".join(source.pieces(0, size)) == legacy_bytes(9, size)
    assert sorted(source._states) == [PIECE_BYTES, 2 * PIECE_BYTES]
    got = b"".join(source.pieces(PIECE_BYTES + 5, 100))
    assert got == legacy_bytes(9, size)[PIECE_BYTES + 5 : PIECE_BYTES + 105]


def test_a_reader_ending_at_a_marked_offset_saves_the_state_there() -> None:
    """It is never resumed after its last piece (a StreamPayload stops asking), so the
    state is saved when the piece before the mark is made."""
    size = 4 * PIECE_BYTES
    source = RandomSource(9, size)
    source.mark([2 * PIECE_BYTES])
    first = source.pieces(0, 2 * PIECE_BYTES)
    next(first)
    next(first)  # the reader's last piece; the generator stays suspended
    assert 2 * PIECE_BYTES in source._states
    got = b"".join(source.pieces(2 * PIECE_BYTES, 10))
    assert got == legacy_bytes(9, size)[2 * PIECE_BYTES : 2 * PIECE_BYTES + 10]


def test_a_fast_forward_past_a_marked_offset_saves_the_state_there() -> None:
    size = 4 * PIECE_BYTES
    source = RandomSource(9, size)
    source.mark([PIECE_BYTES])
    assert (
        b"".join(source.pieces(3 * PIECE_BYTES, 5)) == legacy_bytes(9, size)[3 * PIECE_BYTES :][:5]
    )
    assert sorted(source._states) == [PIECE_BYTES]


@pytest.mark.parametrize("size", [37, 64, 67])
def test_every_range_with_small_pieces_is_the_bytes_of_the_whole(
    monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """Pieces of 16 bytes, every (start, length) of the data: the bytes of one
    ``randbytes(size)`` call (a range cut inside a piece or a word, a last partial word
    included), with and without marked offsets (readers then start from saved streams,
    each reader after the first of a mark from a copy); each piece 1 to 16 bytes."""
    monkeypatch.setattr(datasource, "PIECE_BYTES", 16)
    want = random.Random(4).randbytes(size)
    for marks in ([], [20, 37], [5, 33, 50]):
        source = RandomSource(4, size)
        source.mark([m for m in marks if m < size])
        for start in range(size + 1):
            for length in range(size - start + 1):
                got = list(source.pieces(start, length))
                assert b"".join(got) == want[start : start + length], (marks, start, length)
                assert all(0 < len(piece) <= 16 for piece in got)
        assert sorted(source._states) == sorted({m // 16 * 16 for m in marks if m < size} - {0})


def test_a_reader_ending_inside_a_piece_before_a_mark_goes_on_to_the_mark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reader that ends inside a piece whose end is marked and not yet saved makes the
    piece to its end, so the mark's stream is saved, and a reader from the mark goes on
    from it."""
    monkeypatch.setattr(datasource, "PIECE_BYTES", 16)
    source = RandomSource(8, 64)
    source.mark([32])
    assert b"".join(source.pieces(0, 21)) == random.Random(8).randbytes(64)[:21]
    assert sorted(source._states) == [32]
    assert b"".join(source.pieces(33, 7)) == random.Random(8).randbytes(64)[33:40]


def test_pattern_source_repeats_its_pattern_from_any_offset() -> None:
    size = 3 * PIECE_BYTES + 11
    want = (b"\xde\xad\xbe" * size)[:size]
    source = PatternSource(b"\xde\xad\xbe", size)
    assert b"".join(source.pieces(0, size)) == want
    assert (
        b"".join(source.pieces(PIECE_BYTES - 1, PIECE_BYTES + 9))
        == want[PIECE_BYTES - 1 : 2 * PIECE_BYTES + 8]
    )
    default = open_source(parse_data_spec("pattern"), 600, default_seed=1)
    assert b"".join(default.pieces(0, 600)) == (DEFAULT_PATTERN * 3)[:600]


def test_file_source_reads_the_first_bytes_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    content = random.Random(1).randbytes(PIECE_BYTES * 2 + 99)
    path.write_bytes(content)
    source = open_source(parse_data_spec(f"file:{path}"), len(content) - 9, default_seed=1)
    assert isinstance(source, FileSource)
    assert b"".join(source.pieces(0, source.size)) == content[: len(content) - 9]
    assert (
        b"".join(source.pieces(PIECE_BYTES + 1, 50)) == content[PIECE_BYTES + 1 : PIECE_BYTES + 51]
    )


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("random", DataSpec("random")),
        ("random:42", DataSpec("random", seed=42)),
        ("pattern", DataSpec("pattern")),
        ("pattern:00ff", DataSpec("pattern", pattern=b"\x00\xff")),
        ("file:/tmp/x", DataSpec("file", path="/tmp/x")),
    ],
)
def test_specs_parse_and_print_back(spec: str, parsed: DataSpec) -> None:
    assert parse_data_spec(spec) == parsed and str(parsed) == spec


def test_random_without_a_seed_takes_the_sends_seed() -> None:
    source = open_source(parse_data_spec("random"), 100, default_seed=7)
    assert b"".join(source.pieces(0, 100)) == legacy_bytes(7, 100)
    source = open_source(parse_data_spec("random:8"), 100, default_seed=7)
    assert b"".join(source.pieces(0, 100)) == legacy_bytes(8, 100)


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (5, "a data source is a string, got int"),
        ("zeros", "unknown data source 'zeros'"),
        ("x" * 20_000, "at most 16384 characters"),
        ("random:", "random:SEED needs a non-negative integer seed, got ''"),
        ("random:-3", "random:SEED needs a non-negative integer seed"),
        ("random:1e3", "random:SEED needs a non-negative integer seed"),
        ("pattern:abc", "pattern:HEX needs hexadecimal bytes"),
        ("pattern:zz", "pattern:HEX needs hexadecimal bytes"),
        ("pattern:", "pattern:HEX needs at least one byte"),
        ("pattern:" + "00" * (MAX_PATTERN_BYTES + 1), f"at most {MAX_PATTERN_BYTES} bytes"),
        ("file:", "file:PATH needs a path"),
        ("file:data.bin", "file:PATH needs an absolute path"),
    ],
)
def test_bad_specs_are_refused_naming_the_mistake(spec: object, words: str) -> None:
    with pytest.raises(DataSourceError, match=None) as caught:
        parse_data_spec(spec)
    assert words in str(caught.value)


def test_an_unreadable_a_missing_or_a_short_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "missing.bin"
    with pytest.raises(DataSourceError, match=r"cannot read data file .*missing\.bin"):
        FileSource(str(missing), 10)
    with pytest.raises(DataSourceError, match="is not a regular file"):
        FileSource(str(tmp_path), 10)
    short = tmp_path / "short.bin"
    short.write_bytes(b"x" * 9)
    with pytest.raises(DataSourceError, match="holds 9 bytes, fewer than the 10 to send"):
        FileSource(str(short), 10)

    def denied(path: str, mode: str) -> None:  # a file the NIC may not read (root may)
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(datasource, "open", denied, raising=False)
    with pytest.raises(DataSourceError, match=r"cannot read data file .*: Permission denied"):
        FileSource(str(short), 5)
    long_path = "/" + "d" * 300 + "/data.bin"
    with pytest.raises(DataSourceError) as caught:
        FileSource(long_path, 5)
    message = str(caught.value)  # the path quoted head ... tail, bounded
    assert len(message) < 200 and "dd...dd" in message and "/data.bin'" in message


def test_a_file_that_shrinks_after_the_check_fails_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(b"y" * (PIECE_BYTES + 10))
    source = FileSource(str(path), PIECE_BYTES + 10)
    path.write_bytes(b"y" * 100)
    with pytest.raises(DataSourceError, match="ended after 100 bytes, before the 65546"):
        b"".join(source.pieces(0, source.size))


def test_a_range_outside_the_data_is_refused() -> None:
    with pytest.raises(DataSourceError, match=r"bytes \[5, 15\) are outside the data \(size 10\)"):
        RandomSource(1, 10).pieces(5, 10)


def test_the_data_argument_s_error_is_a_usage_error() -> None:
    """``--data``'s argparse type (argparse imported where it runs, not with the module):
    a bad spec is argparse's usage error, a relative file path made absolute."""
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        datasource.data_spec_argument("nonsense:1")
    assert datasource.data_spec_argument("file:x.bin") == "file:" + os.path.abspath("x.bin")
