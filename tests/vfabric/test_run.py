"""VirtualFabric.run pauses the cyclic garbage collector: it must leave none behind."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from topologies.events import LinkRef, LossEvent
from vfabric import VirtualFabric

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
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        assert fabric.run(until_ns=50_000_000)
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
