"""p4emu.limits: a compile is stopped when it crosses its CPU or memory bound or is
cancelled, and only then; the work's own result and errors pass through."""

from __future__ import annotations

import threading

import pytest

from p4emu.exceptions import P4SourceError
from p4emu.limits import CompileLimitError, CompileLimits, resident_bytes, run_bounded


def spin() -> None:
    while True:
        pass


def test_the_result_of_work_within_the_bounds_is_returned() -> None:
    assert run_bounded(lambda: sum(range(1000))) == 499500


def test_the_work_s_own_error_passes_through() -> None:
    def fail() -> None:
        raise P4SourceError("x.p4", 1, 2, "bad")

    with pytest.raises(P4SourceError, match="bad"):
        run_bounded(fail)


def test_a_compile_over_its_cpu_bound_is_stopped_naming_the_limit() -> None:
    with pytest.raises(CompileLimitError) as info:
        run_bounded(spin, CompileLimits(cpu_seconds=0.2))
    assert info.value.limit == "MAX_COMPILE_CPU_SECONDS"
    assert "MAX_COMPILE_CPU_SECONDS" in str(info.value)


def test_a_compile_over_its_memory_bound_is_stopped_naming_the_limit() -> None:
    hoard: list[bytes] = []

    def grow() -> None:
        while True:
            hoard.append(b"\x5a" * (1 << 20))  # 1 MiB, written (so resident)

    try:
        with pytest.raises(CompileLimitError) as info:
            run_bounded(grow, CompileLimits(cpu_seconds=600, memory_bytes=64 << 20))
        assert info.value.limit == "MAX_COMPILE_MEMORY_BYTES"
        assert len(hoard) < 1024  # stopped long before a GiB
    finally:
        hoard.clear()


def test_a_cancelled_compile_stops() -> None:
    cancelled = threading.Event()
    timer = threading.Timer(0.1, cancelled.set)
    timer.start()
    try:
        with pytest.raises(CompileLimitError) as info:
            run_bounded(spin, CompileLimits(cpu_seconds=600), cancelled)
    finally:
        timer.cancel()
    assert info.value.limit == "cancelled"


@pytest.mark.parametrize("seed", range(20))
def test_work_that_ends_as_the_bound_is_crossed_never_leaks_the_interrupt(seed: int) -> None:
    """Work ending around the moment the watcher fires: either its result or the limit
    error, and the thread is usable afterwards (no interrupt left pending)."""
    limit = 0.02 + seed * 0.002

    def work() -> int:
        total = 0
        for value in range(200_000):
            total += value
        return total

    try:
        assert run_bounded(work, CompileLimits(cpu_seconds=limit)) == sum(range(200_000))
    except CompileLimitError as exc:
        assert exc.limit == "MAX_COMPILE_CPU_SECONDS"
    for _ in range(100_000):  # an interrupt delivered late would land here
        pass


def test_resident_bytes_reads_the_current_size() -> None:
    assert resident_bytes() > 1 << 20
