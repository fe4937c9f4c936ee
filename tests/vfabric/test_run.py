"""VirtualFabric's build and its run freeze what exists out of the cyclic garbage
collector and collect its youngest generation less often (vfabric.fabric.long_lived):
the run makes no cycles itself, any cycle made during it is still freed, and the
collector's state is restored after."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from topologies.events import LinkRef, LossEvent
from vfabric import VirtualFabric
from vfabric import fabric as fabric_module
from vfabric.exceptions import FabricSetupError
from vfabric.fabric import RUN_GC_THRESHOLD0, age_survivors

from .conftest import CUT, SIZE


@contextmanager
def _saving_garbage() -> Iterator[list[object]]:
    """From now on, unreachable cycles are kept in gc.garbage (DEBUG_SAVEALL) instead of
    freed; what was garbage before is freed first."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.collect()


def test_a_run_with_faults_leaves_no_reference_cycles() -> None:
    fabric = VirtualFabric("tiny", seed=3)
    t = fabric.transfer("nic0", "nic3", SIZE)
    fabric.schedule(LinkRef(*CUT).change(20_000, up=False))
    fabric.schedule(LinkRef(*CUT).change(60_000, up=True))
    fabric.schedule(
        LossEvent(at_ns=10_000, links=(LinkRef("p1-t0-1", "p1-t1-1"),), rate=0.05, until_ns=80_000)
    )
    with _saving_garbage() as garbage:
        assert fabric.run(until_ns=50_000_000)
        gc.collect()
        kinds = sorted({type(o).__name__ for o in garbage})
        assert not garbage, f"the run left {len(garbage)} objects in cycles: {kinds}"
    assert t.intact


@pytest.mark.parametrize("enabled", [True, False])
def test_run_restores_the_collector_state(enabled: bool) -> None:
    fabric = VirtualFabric("tiny")
    fabric.transfer("nic0", "nic3", 64 << 10)
    seen: list[tuple[tuple[int, int, int], int]] = []
    fabric.events.push(
        1_000, lambda _: seen.append((gc.get_threshold(), gc.get_freeze_count())), None
    )
    was, thresholds = gc.isenabled(), gc.get_threshold()
    (gc.enable if enabled else gc.disable)()
    gc.set_threshold(123, 4, 5)
    try:
        assert fabric.run(until_ns=50_000_000)
        assert gc.isenabled() is enabled
        assert gc.get_threshold() == (123, 4, 5)
        assert gc.get_freeze_count() == 0
    finally:
        (gc.enable if was else gc.disable)()
        gc.set_threshold(*thresholds)
    ((during, frozen),) = seen  # in the run: the fabric frozen, gen0 collected less often
    assert during == (RUN_GC_THRESHOLD0, 4, 5) and frozen > 0


def test_the_build_runs_under_the_same_collector_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[tuple[int, int, int], int]] = []
    real = fabric_module.shared_program

    def shared_program(path: object = None) -> object:  # called while the fabric is built
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(fabric_module, "shared_program", shared_program)
    thresholds = gc.get_threshold()
    gc.set_threshold(321, 6, 7)
    try:
        VirtualFabric("tiny")
        assert gc.get_threshold() == (321, 6, 7) and gc.get_freeze_count() == 0
    finally:
        gc.set_threshold(*thresholds)
    ((during, frozen),) = seen
    assert during == (RUN_GC_THRESHOLD0, 6, 7) and frozen > 0


def test_a_failed_build_restores_the_collector() -> None:
    thresholds = gc.get_threshold()
    with pytest.raises(FabricSetupError, match="no such topology"):  # inside the build
        VirtualFabric("no-such-topology-here")
    assert gc.get_threshold() == thresholds and gc.get_freeze_count() == 0


def test_objects_the_caller_froze_stay_frozen() -> None:
    fabric = VirtualFabric("tiny")
    fabric.transfer("nic0", "nic3", 64 << 10)
    mine = ["frozen by the caller"]
    gc.freeze()
    try:
        assert not any(o is mine for o in gc.get_objects())  # frozen: in no generation
        assert fabric.run(until_ns=50_000_000)
        assert not any(o is mine for o in gc.get_objects())
    finally:
        gc.unfreeze()
    assert any(o is mine for o in gc.get_objects())


class _Cycle:
    """An object in a reference cycle with itself; counts the live ones."""

    alive = 0

    def __init__(self) -> None:
        self.me = self
        _Cycle.alive += 1

    def __del__(self) -> None:
        _Cycle.alive -= 1


def test_cycles_made_during_a_run_are_freed_during_it() -> None:
    """An event that leaves cyclic garbage behind every time it runs (200,000 cycles in
    all): the collector frees them as the run goes, so they never pile up."""
    fabric = VirtualFabric("tiny")
    made, peak = 200_000, [0]

    def churn(left: int) -> None:
        for _ in range(100):
            _Cycle()
        peak[0] = max(peak[0], _Cycle.alive)
        if left > 1:
            fabric.events.push(fabric.now + 100, churn, left - 1)

    fabric.events.push(0, churn, made // 100)
    was = gc.isenabled()
    gc.enable()
    try:
        fabric.run(until_ns=10_000_000)
    finally:
        (gc.enable if was else gc.disable)()
    gc.collect()
    assert _Cycle.alive == 0
    assert 0 < peak[0] <= 2 * RUN_GC_THRESHOLD0 + 100, f"{peak[0]} of {made} alive at once"


def test_the_run_ends_when_its_last_foreground_transfer_finishes() -> None:
    """stop() asks from the first transfer still running on: transfers that finish out of
    their order in the list end the run at the first stop() after the last one finished."""
    fabric = VirtualFabric("tiny", seed=0)
    big = fabric.transfer("nic0", "nic3", 1 << 20)
    small = fabric.transfer("nic1", "nic2", 16 << 10)
    calls: list[tuple[bool, bool]] = []  # (small, big) finished, at each stop()

    def progress(now_ns: int) -> None:  # called from stop(), before it asks the transfers
        calls.append((small.finished, big.finished))

    fabric_module.PROGRESS_EVERY_EVENTS, every = 64, fabric_module.PROGRESS_EVERY_EVENTS
    try:
        assert fabric.run(until_ns=50_000_000, progress=progress)
    finally:
        fabric_module.PROGRESS_EVERY_EVENTS = every
    assert big.done and small.done
    assert small.completion_ns is not None and big.completion_ns is not None
    assert small.completion_ns < big.completion_ns  # the second in the list finished first
    assert (True, False) in calls  # stop() saw small finished and big running: no stop
    assert calls[-1] == (True, True) and calls[-2] != (True, True)  # the first after big
    assert fabric.now < 50_000_000


class _Node:
    """A cycle's member (lists are not weakly referenceable)."""

    def __init__(self) -> None:
        self.other: _Node | None = None


def test_the_survivors_go_unscanned_to_the_oldest_generation() -> None:
    collecting = gc.isenabled()
    gc.disable()
    try:
        made = [[] for _ in range(5000)]  # what a child's start-up leaves, the collector off
        cycle = _Node()
        cycle.other = _Node()
        cycle.other.other = cycle
        gone = weakref.ref(cycle)
        assert gc.get_count()[0] >= 5000
        age_survivors()
        assert gc.get_count()[0] < 10 and gc.get_freeze_count() == 0
        del cycle
        gc.collect()  # a full collection still frees their cycles
        assert gone() is None and len(made) == 5000
        # objects the caller froze stay frozen, and the count stays for the next collection
        gc.freeze()
        frozen = gc.get_freeze_count()
        more = [[] for _ in range(100)]
        age_survivors()
        # (a frozen object may still be freed meanwhile, so the count may only fall a little)
        assert 0 < frozen - 100 < gc.get_freeze_count() <= frozen
        assert gc.get_count()[0] >= len(more)
    finally:
        gc.unfreeze()
        if collecting:
            gc.enable()
