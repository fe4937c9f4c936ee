"""Where a ``send``'s bytes come from (docs/nic-emu-process.md, "Data sources").

A source makes any range of a transfer's data lazily, a piece at a time
(:meth:`DataSource.pieces`); nothing holds the whole. The spec a user writes:

- ``random`` (the default): pseudo-random bytes seeded by the send's ``seed``, the same
  bytes ``nic-emu`` has always sent (``random.Random(seed).randbytes``, in order);
- ``random:SEED``: the same with an explicit seed;
- ``pattern`` or ``pattern:HEX``: a byte pattern repeated (default the 256 byte values
  00 01 .. ff);
- ``file:PATH``: the first ``bytes`` bytes of a file (an absolute path, read by the NIC
  process; it must hold at least that many bytes).
"""

from __future__ import annotations

import os
import stat
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from nic_emu.exceptions import DataSourceError
from nic_emu.mtbytes import WordStream, seeded

PIECE_BYTES = 64 << 10  # [P] a source makes (and a reader holds) this much at a time
DEFAULT_PATTERN = bytes(range(256))
MAX_PATTERN_BYTES = 4096  # [P] a longer pattern is refused (it is a pattern, not data)
MAX_SPEC_CHARS = 16384  # a spec longer than this is refused before it is parsed
QUOTE_CHARS = 120  # errors quote at most this much of a spec or path (head ... tail)
KINDS = ("random", "pattern", "file")


@dataclass(frozen=True, slots=True)
class DataSpec:
    """A parsed ``--data`` value: ``kind`` and its argument (None: the default)."""

    kind: str
    seed: int | None = None
    pattern: bytes = DEFAULT_PATTERN
    path: str = ""

    def __str__(self) -> str:
        if self.kind == "random":
            return "random" if self.seed is None else f"random:{self.seed}"
        if self.kind == "pattern":
            return "pattern" if self.pattern == DEFAULT_PATTERN else f"pattern:{self.pattern.hex()}"
        return f"file:{self.path}"


def _quote(text: str) -> str:
    if len(text) <= QUOTE_CHARS:
        return repr(text)
    half = QUOTE_CHARS // 2
    return repr(text[:half] + "..." + text[-half:])


def parse_data_spec(text: Any) -> DataSpec:
    """``random``, ``random:SEED``, ``pattern``, ``pattern:HEX`` or ``file:PATH``;
    DataSourceError naming what is wrong otherwise."""
    if not isinstance(text, str):
        raise DataSourceError(f"a data source is a string, got {type(text).__name__}")
    if len(text) > MAX_SPEC_CHARS:
        raise DataSourceError(f"a data source spec is at most {MAX_SPEC_CHARS} characters")
    kind, colon, arg = text.partition(":")
    if kind not in KINDS:
        raise DataSourceError(
            f"unknown data source {_quote(text)}: use random, random:SEED, pattern, "
            "pattern:HEX or file:PATH"
        )
    if kind == "random":
        if not colon:
            return DataSpec("random")
        if not arg.isdigit() or len(arg) > 20:
            raise DataSourceError(
                f"random:SEED needs a non-negative integer seed, got {_quote(arg)}"
            )
        return DataSpec("random", seed=int(arg))
    if kind == "pattern":
        if not colon:
            return DataSpec("pattern")
        try:
            pattern = bytes.fromhex(arg)
        except ValueError:
            raise DataSourceError(
                f"pattern:HEX needs hexadecimal bytes (e.g. pattern:deadbeef), got {_quote(arg)}"
            ) from None
        if not pattern:
            raise DataSourceError("pattern:HEX needs at least one byte")
        if len(pattern) > MAX_PATTERN_BYTES:
            raise DataSourceError(
                f"a pattern is at most {MAX_PATTERN_BYTES} bytes, got {len(pattern)}"
            )
        return DataSpec("pattern", pattern=pattern)
    if not arg:
        raise DataSourceError("file:PATH needs a path")
    if not os.path.isabs(arg):
        raise DataSourceError(
            f"file:PATH needs an absolute path (the NIC process reads it), got {_quote(arg)}"
        )
    return DataSpec("file", path=arg)


def command_line_spec(text: str) -> str:
    """A spec as typed on a command line, checked, with a relative ``file:`` path made
    absolute (the NIC process, which reads the file, has its own working directory)."""
    kind, colon, arg = text.partition(":")
    if kind == "file" and colon and arg and not os.path.isabs(arg):
        text = "file:" + os.path.abspath(arg)
    parse_data_spec(text)
    return text


def data_spec_argument(text: str) -> str:
    """argparse type of ``--data``: :func:`command_line_spec`, its error as a usage error."""
    # imported here, where argparse already runs: a virtual fabric imports this module
    # for its data sources and never parses a command line (argparse and gettext, about
    # 1 % of its start-up in instructions)
    import argparse

    try:
        return command_line_spec(text)
    except DataSourceError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


DATA_HELP = (
    "where the bytes come from: random (default, seeded), random:SEED, pattern, pattern:HEX "
    "or file:PATH (docs/nic-emu-process.md)"
)


class DataSource(ABC):
    """``size`` bytes, made lazily. :meth:`pieces` may be called any number of times
    (each call is an independent reader)."""

    size: int

    @abstractmethod
    def pieces(self, start: int, length: int) -> Iterator[bytes]:
        """The bytes [start, start+length), in pieces of at most :data:`PIECE_BYTES`."""

    def _check_range(self, start: int, length: int) -> None:
        if start < 0 or length < 0 or start + length > self.size:
            raise DataSourceError(
                f"bytes [{start}, {start + length}) are outside the data (size {self.size})"
            )


class RandomSource(DataSource):
    """``random.Random(seed).randbytes`` output: every call but the last asks for a
    multiple of 4 bytes, so the stream is the generator's 32-bit words in order whatever
    the piece size (the last, partial word included), i.e. the bytes of one
    ``randbytes(size)`` call made in chunks.

    A reader that starts past 0 regenerates from a copy of the nearest saved generator
    (else from the seed): :meth:`mark` asks every reader that passes some offsets to save
    a copy of its generator there (the start of each connection's share, or of each
    message of a virtual-fabric transfer) so that the readers starting there start at
    once. A piece the range cuts is made from the word holding the range's start to the
    word holding its end only.
    """

    def __init__(self, seed: int, size: int) -> None:
        self.seed = seed
        self.size = size
        # offset -> a generator at that offset, never advanced itself: a reader starting
        # there goes on from a copy (offset 0: the seed itself, none kept)
        self._states: dict[int, WordStream] = {}
        self._wanted: set[int] = set()

    def mark(self, offsets: list[int]) -> None:
        self._wanted.update(o // PIECE_BYTES * PIECE_BYTES for o in offsets)

    def pieces(self, start: int, length: int) -> Iterator[bytes]:
        self._check_range(start, length)
        if not length:
            return iter(())  # nothing to make (no fast-forward to ``start``)
        return self._pieces(start, length)

    def _pieces(self, start: int, length: int) -> Iterator[bytes]:
        end = start + length
        base = max((p for p in self._states if p <= start), default=0)
        rng = self._states[base].copy() if base else seeded(self.seed)
        pos = base
        aligned = start // PIECE_BYTES * PIECE_BYTES
        wanted, states = self._wanted, self._states
        # A marked offset's state is saved as soon as the generator reaches it (before a
        # piece is yielded): a reader that ends exactly there, and is never resumed after
        # its last piece, still saves it for the reader that starts there.
        while pos < aligned:  # fast-forward (whole pieces: multiples of 4 bytes)
            rng.skip(PIECE_BYTES // 4)
            pos += PIECE_BYTES
            if pos in wanted and pos not in states:
                states[pos] = rng.copy()
        # A piece the range cuts is made only from the word that holds ``start`` (the
        # words before it passed untempered) and up to the word that holds ``end``,
        # unless the piece's end is a marked offset not yet saved (then the generator
        # goes on to it); the last piece of a size not a multiple of 4 is made to its
        # end (its partial word is the top bytes of a word: randbytes of the whole).
        size = self.size
        while pos < end:
            nxt = pos + PIECE_BYTES if pos + PIECE_BYTES < size else size
            save = nxt in wanted and nxt not in states
            first = pos
            if start > pos:
                skipped = (start - pos) >> 2
                rng.skip(skipped)
                first = pos + 4 * skipped
            stop = nxt if save or end >= nxt else min((end + 3) & -4, nxt)
            block = rng.take(stop - first)
            if save:
                states[nxt] = rng.copy()
            if first < start or end < stop:  # the range's bytes of the words made
                block = block[start - first if start > first else 0 : end - first]
            yield block
            pos = nxt


class PatternSource(DataSource):
    """``pattern`` repeated: byte i is ``pattern[i % len(pattern)]``."""

    def __init__(self, pattern: bytes, size: int) -> None:
        self.pattern = pattern
        self.size = size
        reps = -(-(PIECE_BYTES + len(pattern)) // len(pattern))
        self._block = pattern * reps  # any window of PIECE_BYTES starts inside it

    def pieces(self, start: int, length: int) -> Iterator[bytes]:
        self._check_range(start, length)
        return self._pieces(start, length)

    def _pieces(self, start: int, length: int) -> Iterator[bytes]:
        plen = len(self.pattern)
        pos, end = start, start + length
        while pos < end:
            n = min(PIECE_BYTES, end - pos)
            phase = pos % plen
            yield self._block[phase : phase + n]
            pos += n


class FileSource(DataSource):
    """The first ``size`` bytes of the regular file ``path``, read a piece at a time.
    Checked when made (readable, a regular file, at least ``size`` bytes); a file that
    shrinks or fails later makes the reader raise DataSourceError."""

    def __init__(self, path: str, size: int) -> None:
        self.path = path
        self.size = size
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise DataSourceError(f"data file {_quote(path)} is not a regular file")
            with open(path, "rb") as handle:
                info = os.fstat(handle.fileno())
        except OSError as exc:
            raise DataSourceError(
                f"cannot read data file {_quote(path)}: {exc.strerror or exc}"
            ) from None
        if info.st_size < size:
            raise DataSourceError(
                f"data file {_quote(path)} holds {info.st_size} bytes, fewer than the "
                f"{size} to send"
            )

    def pieces(self, start: int, length: int) -> Iterator[bytes]:
        self._check_range(start, length)
        return self._pieces(start, length)

    def _pieces(self, start: int, length: int) -> Iterator[bytes]:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(start)
                left = length
                while left:
                    piece = handle.read(min(PIECE_BYTES, left))
                    if not piece:
                        raise DataSourceError(
                            f"data file {_quote(self.path)} ended after "
                            f"{start + length - left} bytes, before the {self.size} being sent "
                            "(did it shrink during the transfer?)"
                        )
                    left -= len(piece)
                    yield piece
        except OSError as exc:
            raise DataSourceError(
                f"cannot read data file {_quote(self.path)}: {exc.strerror or exc}"
            ) from None


def open_source(spec: DataSpec, size: int, default_seed: int) -> DataSource:
    """The source ``spec`` names, for ``size`` bytes (``random`` without a seed uses
    ``default_seed``, the send's ``seed``)."""
    if spec.kind == "random":
        return RandomSource(default_seed if spec.seed is None else spec.seed, size)
    if spec.kind == "pattern":
        return PatternSource(spec.pattern, size)
    return FileSource(spec.path, size)
