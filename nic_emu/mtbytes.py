"""The bytes of ``random.Random.randbytes``, made in pieces, from a generator state.

:class:`RandomSource` (``nic_emu.datasource``) makes a transfer's data as the bytes of
``random.Random(seed).randbytes(size)``, a piece at a time: every piece but the last a
multiple of 4 bytes, so the stream is the generator's 32-bit words in order, little
endian (Python's ``randbytes(n)`` is ``getrandbits(8 * n).to_bytes(n, "little")``,
whose words are the generator's in order; a last partial word of ``k`` bits is the top
``k`` bits of the next word).

:class:`WordStream` makes those bytes from a ``Random.getstate()`` state:

- pure Python: on a ``random.Random`` set to that state (``randbytes``, ``getrandbits``);
- the native build (``cython.compiled``): the Mersenne Twister MT19937 (Matsumoto and
  Nishimura, 1998; the generator of Python's ``random`` module) on its own copy of the
  624-word state, writing the words straight into the piece, where CPython's
  ``randbytes`` builds a Python integer of the piece's bits and converts it back to
  bytes (most of its time). The tempering and the twist are C in ``mtbytes.pxd``, eight
  words at a time where AVX2 runs, else four where SSE2 is there (:func:`step_words`),
  and a whole 624-word block wanted at once is twisted and tempered in one pass;
  :func:`seeded` seeds in C as ``random.Random(seed)`` does. Same bytes, same states
  (``tests/nic_emu/test_mtbytes.py`` checks both against ``random.Random`` on the path
  that runs, on every vector step).
"""

from __future__ import annotations

import random
from typing import Any

import cython

if cython.compiled:
    from cython.cimports.cpython.bytes import PyBytes_AS_STRING, PyBytes_FromStringAndSize
    from cython.cimports.libc.string import memcpy
    from cython.cimports.nic_emu.mtbytes import (
        nic_mt_limit_step,
        nic_mt_seed,
        nic_mt_step_words,
        nic_mt_temper,
        nic_mt_temper1,
        nic_mt_twist,
        nic_mt_twist_temper,
    )

#: MT19937's state size (its twist and tempering are the C of mtbytes.pxd)
N = 624
#: the version ``random.Random.getstate()`` puts first in a state
STATE_VERSION = 3
#: seeds of magnitude below this are seeded in C on the native build (two key words)
SEED_LIMIT = 1 << 64


class WordStream:
    """The words of a Mersenne Twister from ``state`` (a ``random.Random.getstate()``):
    :meth:`take` makes the next bytes, :meth:`skip` passes words, :meth:`state` is the
    state reached (for ``random.Random.setstate`` or another stream)."""

    __slots__ = ("_gauss", "_rng")

    def __init__(self, state: tuple[Any, ...]) -> None:
        version, internal, gauss = state
        if version != STATE_VERSION or len(internal) != N + 1:
            raise ValueError(f"not a random.Random state of version {STATE_VERSION}")
        index = internal[N]
        if not isinstance(index, int) or not 0 <= index <= N:
            raise ValueError(f"state index {index!r} outside [0, {N}]")
        if not all(isinstance(word, int) and 0 <= word <= 0xFFFFFFFF for word in internal[:N]):
            raise ValueError("a state word is not a 32-bit unsigned integer")
        self._gauss = gauss
        if cython.compiled:
            for i in range(N):
                self._mt[i] = internal[i]
            self._index = index
        else:
            self._rng = random.Random()
            self._rng.setstate(state)

    def take(self, n: int) -> bytes:
        """The next ``n`` bytes (``randbytes(n)``): whole words, then the top bytes of
        one more word when ``n`` is not a multiple of 4."""
        if n < 0:
            raise ValueError(f"cannot take {n} bytes")
        if not cython.compiled:
            return self._rng.randbytes(n)
        return self._take(n)

    def _take(self, n: int) -> bytes:
        """The native build's :meth:`take`: the words written into the bytes object."""
        out = PyBytes_FromStringAndSize(cython.NULL, n)
        buf = cython.cast(cython.p_uchar, PyBytes_AS_STRING(out))
        words = n >> 2
        i = 0
        while i < words:
            if self._index >= N:
                if words - i >= N:  # a whole block: twisted and tempered in one pass
                    nic_mt_twist_temper(self._mt, buf + 4 * i)
                    i += N
                    continue
                self._twist()
            # the words left in this state, tempered in one C loop (mtbytes.pxd)
            run = min(words - i, N - self._index)
            nic_mt_temper(cython.address(self._mt[self._index]), buf + 4 * i, run)
            self._index += run
            i += run
        rest = n & 3
        if rest:
            y = self._next() >> (32 - 8 * rest)  # the word's top 8 * rest bits
            for i in range(rest):
                buf[4 * words + i] = (y >> (8 * i)) & 0xFF
        return out

    def skip(self, words: int) -> None:
        """Pass ``words`` words (``getrandbits(32 * words)``)."""
        if words < 0:
            raise ValueError(f"cannot skip {words} words")
        if not cython.compiled:
            if words:
                self._rng.getrandbits(32 * words)
            return
        while words:  # the words are passed untempered: only the state moves
            if self._index >= N:
                self._twist()
            run = min(words, N - self._index)
            self._index += run
            words -= run

    def copy(self) -> WordStream:
        """Another stream at this one's state (each then goes on alone): ``WordStream(
        self.state())``, the native build's a copy of the C state (no tuple of 625 ints
        made and read back)."""
        if not cython.compiled:
            return WordStream(self.state())
        clone = WordStream.__new__(WordStream)
        memcpy(clone._mt, self._mt, N * 4)
        clone._index = self._index
        clone._gauss = self._gauss
        return clone

    def state(self) -> tuple[Any, ...]:
        """The state reached, as ``random.Random.getstate()`` gives it."""
        if not cython.compiled:
            return self._rng.getstate()
        internal = [self._mt[i] for i in range(N)]
        internal.append(self._index)
        return (STATE_VERSION, tuple(internal), self._gauss)

    def _next(self) -> int:
        """The native build's next tempered word (see the module docstring)."""
        if self._index >= N:
            self._twist()
        y = self._mt[self._index]
        self._index += 1
        return nic_mt_temper1(y)

    def _twist(self) -> None:
        """The native build's next 624 words of state."""
        nic_mt_twist(self._mt)  # in C (mtbytes.pxd), as in the module docstring
        self._index = 0

    def _seed(self, key: int) -> None:
        """The native build's state of ``random.Random(key)`` (0 <= key < SEED_LIMIT)."""
        nic_mt_seed(self._mt, key)  # CPython's init_by_array, in C (mtbytes.pxd)
        self._index = N
        self._gauss = None


def seeded(seed: int) -> WordStream:
    """The words of ``random.Random(seed)`` from its start: ``WordStream(random.Random(seed)
    .getstate())``, an int seed of magnitude below :data:`SEED_LIMIT` seeded in C on the
    native build (no ``random.Random``, no state tuple of 625 ints)."""
    if cython.compiled and type(seed) is int and -SEED_LIMIT < seed < SEED_LIMIT:
        stream = WordStream.__new__(WordStream)
        stream._seed(abs(seed))  # random.seed(n) seeds from abs(n)
        return stream
    return WordStream(random.Random(seed).getstate())


def step_words(limit: int = 0) -> int:
    """Words per vector step of the native build's twist and tempering: 8 (AVX2), 4 (SSE2)
    or 1. ``limit`` > 0 lowers it to at most ``limit`` for the rest of the process (so
    that tests run each path; 8 or more restores the machine's). The pure path: 1."""
    if not cython.compiled:
        return 1
    if limit > 0:
        return nic_mt_limit_step(min(limit, 8))
    return nic_mt_step_words()
