"""nic_emu.mtbytes: the bytes and states of ``random.Random`` on the path that runs
(pure: a ``random.Random``; native: MT19937 in C, run by tests/clikit/test_hotpath.py)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from nic_emu.mtbytes import WordStream, seeded, step_words


@pytest.mark.parametrize("seed", [0, 1, 7, 2**32 + 5, 123456789012345678901234567890])
@pytest.mark.parametrize(
    "sizes", [[1], [4], [5, 0], [4096], [2500 * 4, 3], [623 * 4, 8, 4 * 700, 2]]
)
def test_pieces_are_randbytes_of_the_whole(seed: int, sizes: list[int]) -> None:
    """Pieces of multiples of 4 bytes then one of any size: the bytes of one
    ``randbytes`` call, and the state after them that of the generator after it (across
    the 624-word twists too)."""
    stream = WordStream(random.Random(seed).getstate())
    got = b"".join(stream.take(n) for n in sizes)
    reference = random.Random(seed)
    assert got == reference.randbytes(sum(sizes))
    assert stream.state() == reference.getstate()


@pytest.mark.parametrize("seed", range(6))
def test_skip_and_state_resume_where_the_generator_is(seed: int) -> None:
    rng = random.Random(seed)
    words = rng.randrange(1, 3000)
    stream = WordStream(random.Random(seed).getstate())
    stream.skip(words)
    reference = random.Random(seed)
    reference.getrandbits(32 * words)
    assert stream.state() == reference.getstate()
    again = WordStream(stream.state())  # a stream from a saved state goes on the same
    assert again.take(4 * 700 + 3) == reference.randbytes(4 * 700 + 3)
    assert again.state() == reference.getstate()
    before = stream.state()
    stream.skip(0)
    assert stream.take(0) == b"" and stream.state() == before  # nothing passes


def test_a_state_from_a_random_that_made_other_draws_is_followed() -> None:
    """Any state: one mid-way through a twist block (index not 0 or 624)."""
    reference = random.Random(42)
    reference.random()
    reference.getrandbits(7)
    stream = WordStream(reference.getstate())
    assert stream.take(1001) == reference.randbytes(1001)


@pytest.mark.parametrize(
    ("state", "error"),
    [
        ((2, tuple([0] * 625), None), ValueError),
        ((3, tuple([0] * 624), None), ValueError),
        ((3, (*[1] * 624, 625), None), ValueError),
        ((3, (*[-1] * 624, 624), None), ValueError),
        ((3, (*[2**32] * 624, 624), None), ValueError),
        ((3, (*[0] * 623, 1.5, 624), None), ValueError),
    ],
)
def test_a_state_that_is_not_a_generator_state_is_refused(
    state: tuple[object, ...], error: type[Exception]
) -> None:
    with pytest.raises(error):
        WordStream(state)


def test_negative_counts_are_refused() -> None:
    stream = WordStream(random.Random(1).getstate())
    with pytest.raises((ValueError, OverflowError)):
        stream.take(-1)
    with pytest.raises((ValueError, OverflowError)):
        stream.skip(-1)


@pytest.mark.parametrize("seed", [2, 11])
def test_pieces_of_every_word_count_around_the_wide_steps(seed: int) -> None:
    """Pieces of 1 to 40 words (then a partial word), so that the tempering's runs of
    eight and four words and their remainders fall on every alignment, across many
    twists (whose two runs are made eight, four and one word at a time): the bytes and
    states of ``randbytes``, whichever of the AVX2, SSE2 or scalar loops the machine
    runs."""
    stream = WordStream(random.Random(seed).getstate())
    reference = random.Random(seed)
    for _ in range(3):
        for words in range(1, 41):
            assert stream.take(4 * words) == reference.randbytes(4 * words)
        assert stream.take(4 * 1871 + 3) == reference.randbytes(4 * 1871 + 3)
        assert stream.state() == reference.getstate()
        stream = WordStream(reference.getstate())  # a state mid-block, tempered from there


@pytest.fixture(params=[8, 4, 1], ids=["step8", "step4", "step1"])
def step(request: pytest.FixtureRequest) -> Iterator[int]:
    """Each vector step the machine has (8: AVX2, 4: SSE2, 1: scalar) in turn, then the
    machine's again; on the pure path (a ``random.Random``) always 1."""
    got = step_words(request.param)
    assert got in (1, 4, 8) and got <= request.param
    yield got
    step_words(8)


@pytest.mark.parametrize(
    "seed",
    [0, 1, 2**32 - 1, 2**32, 2**63 + 7, 2**64 - 1, -1, -(2**64) + 1, 2**64, -(2**64), 10**30],
)
def test_a_seeded_stream_is_random_random_of_the_seed(seed: int, step: int) -> None:
    """``seeded(seed)``: the state and the words of ``random.Random(seed)`` (CPython's
    seeding in C below 2**64 in magnitude, one key word below 2**32, a negative seed's
    absolute value; ``random.Random`` itself from 2**64), on every vector step."""
    stream = seeded(seed)
    reference = random.Random(seed)
    assert stream.state() == reference.getstate()
    for n in (4 * 624 * 3, 4 * 5, 4 * 624 * 2, 4 * 1000 + 1):
        assert stream.take(n) == reference.randbytes(n)
        assert stream.state() == reference.getstate()


def test_a_seed_that_is_an_int_subclass_seeds_as_random_does() -> None:
    assert seeded(True).state() == random.Random(True).getstate() == random.Random(1).getstate()


@pytest.mark.parametrize("skip", [0, 1, 623, 624, 625, 1000])
@pytest.mark.parametrize("words", [624, 625, 1247, 1248, 624 * 5 + 17, 16384])
def test_whole_blocks_twisted_and_tempered_in_one_pass(skip: int, words: int, step: int) -> None:
    """Pieces that take whole 624-word blocks (twisted and tempered in one pass where AVX2
    runs) after any start within a block, then a partial block: the bytes and states of
    ``randbytes``."""
    stream = seeded(3)
    reference = random.Random(3)
    stream.skip(skip)
    if skip:
        reference.getrandbits(32 * skip)
    for _ in range(2):
        assert stream.take(4 * words) == reference.randbytes(4 * words)
        assert stream.state() == reference.getstate()


def test_pieces_of_every_word_count_on_every_step(step: int) -> None:
    """Pieces of 1 to 40 words across many twists, on each vector step (the steps'
    remainders fall on every alignment)."""
    stream = seeded(13)
    reference = random.Random(13)
    for _ in range(2):
        for words in range(1, 41):
            assert stream.take(4 * words) == reference.randbytes(4 * words)
        stream.skip(611)
        reference.getrandbits(32 * 611)
        assert stream.take(4 * 1871 + 3) == reference.randbytes(4 * 1871 + 3)
        assert stream.state() == reference.getstate()


def test_the_step_is_the_machines_unless_lowered() -> None:
    machine = step_words()
    assert machine in (1, 4, 8)
    assert step_words(1) == 1
    assert step_words() == 1
    assert step_words(8) == machine
    assert step_words(100) == machine


@pytest.mark.parametrize("words", [0, 1, 623, 624, 625, 5000])
def test_a_copy_goes_on_alone_from_the_same_state(words: int) -> None:
    """``copy()``: a stream at the same state (mid-block or at a block's end), which
    makes the same words as the original from there while neither moves the other."""
    stream = seeded(21)
    stream.skip(words)
    before = stream.state()
    clone = stream.copy()
    assert clone is not stream and clone.state() == before
    ahead = stream.take(4 * 1300 + 2)
    assert clone.state() == before  # the original's words left the copy where it was
    reference = random.Random(21)
    if words:
        reference.getrandbits(32 * words)
    assert clone.take(4 * 1300 + 2) == ahead == reference.randbytes(4 * 1300 + 2)
    assert clone.state() == stream.state() == reference.getstate()


def test_seeded_states_of_seeds_of_every_length() -> None:
    """Seeds of 0 to 66 bits (one and two key words, and past the C seeding), either
    sign: the state of ``random.Random(seed)``."""
    draw = random.Random(99)
    for bits in range(67):
        for _ in range(4):
            seed = draw.getrandbits(bits) * draw.choice((1, -1))
            assert seeded(seed).state() == random.Random(seed).getstate(), seed
