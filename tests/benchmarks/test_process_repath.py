"""The record analysis of benchmarks/process_repath.py, on made-up sender event records."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from topologies import AddressPlan, load

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(ROOT))
    try:
        spec = importlib.util.spec_from_file_location(
            "process_repath_bench", ROOT / "benchmarks" / "process_repath.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT))


@pytest.fixture(scope="module")
def evs(bench: ModuleType) -> tuple[int, int]:
    """An EV on the cut path and one on another path, as the address plan makes them."""
    plan = AddressPlan(load(bench.DEMO_TOPOLOGY))
    on = off = None
    for plane in (0, 1):
        for t1 in range(4):
            try:
                ev = plan.make_ev(plane, t1, 1)
                path = plan.path_for_ev(bench.SRC, bench.DST, ev)
            except Exception:  # no such T1 in this topology
                continue
            if [plane, path.t1] == bench.CUT_PATH:
                on = ev
            elif off is None:
                off = ev
    assert on is not None and off is not None
    return on, off


def _loss(ev: int, t: int, sent: int) -> dict[str, object]:
    return {"kind": "loss", "nic": "nic0", "ev": ev, "t_ns": t, "sent_ns": sent}


def test_held_counts_from_the_first_lost_packet_to_the_first_hold(
    bench: ModuleType, evs: tuple[int, int]
) -> None:
    on, off = evs
    records = [
        {"kind": "path_suspect", "nic": "nic0", "ev": on, "t_ns": 500, "sent_ns": 100},
        _loss(on, 9_000_000, 2_000_000),  # first lost packet, sent at 2 ms
        _loss(on, 9_500_000, 3_000_000),
        {"kind": "path_suspect", "nic": "nic0", "ev": off, "t_ns": 5_000_000, "sent_ns": 1},
        {"kind": "path_suspect", "nic": "nic0", "ev": on, "t_ns": 7_500_000, "sent_ns": 1},
        {"kind": "ev_state", "nic": "nic0", "ev": on, "t_ns": 9_000_000, "new": "ASSUMED_BAD"},
    ]
    # the hold before the loss and the other path's hold do not count
    assert bench.held_after_loss(records, cut_ns=1_000_000) == 5.5


def test_held_falls_back_to_the_retirement_and_needs_a_loss(
    bench: ModuleType, evs: tuple[int, int]
) -> None:
    on, off = evs
    retired = {"kind": "ev_state", "nic": "nic0", "ev": on, "t_ns": 8_250_000}
    records = [_loss(on, 8_000_000, 2_000_000), {**retired, "new": "ASSUMED_BAD"}]
    assert bench.held_after_loss(records, cut_ns=1_000_000) == 6.25
    assert bench.held_after_loss([_loss(off, 8_000_000, 2_000_000)], cut_ns=0) is None
    # a loss declared before the cut is not the cut's
    assert bench.held_after_loss(records[:1], cut_ns=9_000_000) is None


def test_send_gaps_cover_the_second_before_the_cut(bench: ModuleType, evs: tuple[int, int]) -> None:
    on, off = evs
    cut = 2_000_000_000
    times = [
        (cut - 1_500_000_000, on),  # more than a second before: left out
        (cut - 900_000_000, on),
        (cut - 899_000_000, off),
        (cut - 897_000_000, on),
        (cut - 896_500_000, off),
        (cut - 890_000_000, on),
        (cut + 1, on),  # after the cut: left out
    ]
    records = [{"kind": "tx", "nic": "nic0", "ev": ev, "t_ns": t} for t, ev in times]
    gaps = bench.send_gaps(records, cut)
    assert gaps["packets"] == 5
    # nearest-rank percentiles of the gaps 3 and 7 ms (cut path), 1, 2, 0.5, 6.5 ms (all)
    assert gaps["cut_path"] == {"median": 3.0, "p90": 7.0, "p99": 7.0, "max": 7.0}
    assert gaps["all_paths"]["max"] == 6.5
    assert gaps["all_paths"]["median"] == 1.0
    assert bench.send_gaps(records[:2], cut) is None  # too few packets to say
