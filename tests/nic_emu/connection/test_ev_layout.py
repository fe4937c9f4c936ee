"""nic_emu.connection.ev_layout: which EVs a connection uses, on its own."""

from __future__ import annotations

from dataclasses import replace

import pytest

from nic_emu.config import NicConfig
from nic_emu.connection.ev_layout import mrc_entries, plane_evs, roce_entry
from nic_emu.core import NicCore
from topologies import AddressingError, AddressPlan, encode_ev, load


def _core() -> NicCore:
    return NicCore("nic0", AddressPlan(load("small")))


def test_mrc_evs_split_across_planes_and_spread_over_t1s() -> None:
    core = _core()
    cfg = replace(NicConfig(), evs_per_connection=9, backup_evs_per_connection=5)
    active, backup = mrc_entries(core, cfg, "nic5")
    planes = core.plane_count
    assert sum(map(len, active.values())) == 9 and sum(map(len, backup.values())) == 5
    assert [len(active[p]) for p in range(planes)] == [
        9 // planes + (p < 9 % planes) for p in range(planes)
    ]
    for p in range(planes):
        entries = active[p] + backup[p]
        t1s = core.plan.topology.planes[p].t1_count
        assert all(e.plane == p and core.plan_ev_plane(e.ev) == p for e in entries)
        assert len({e.ev for e in entries}) == len(entries)  # every EV once
        used = {e.path for e in entries}
        assert len(used) == min(t1s, len(entries))  # T1s in turn
        for e in entries:
            assert e.wire == core.path("nic5", e.ev).carrier_bytes


def test_a_roce_qp_takes_its_port_by_qpn_and_a_t1_by_hash() -> None:
    core = _core()
    seen = set()
    for qpn in range(0x100, 0x140):
        e = roce_entry(core, "nic5", qpn, 0x200)
        assert e.plane == qpn % core.plane_count
        assert roce_entry(core, "nic5", qpn, 0x200).ev == e.ev  # a function of the 5-tuple
        seen.add(e.path)
    assert len(seen) > core.plane_count  # the hash spreads QPs over the T1s


@pytest.mark.parametrize(("plane", "count", "t1s"), [(0, 0, 4), (1, 7, 3), (3, 80, 8), (15, 5, 1)])
def test_plane_evs_take_the_t1s_in_turn_with_growing_salts(
    plane: int, count: int, t1s: int
) -> None:
    evs = plane_evs(plane, count, t1s)
    assert evs == tuple(encode_ev(plane, j % t1s, j // t1s) for j in range(count))
    assert plane_evs(plane, count, t1s) is evs  # made once


def test_plane_evs_refuse_a_field_that_does_not_fit() -> None:
    with pytest.raises(AddressingError, match="plane 16"):
        plane_evs(16, 1, 4)
    with pytest.raises(AddressingError, match="t1_index 4096"):
        plane_evs(0, 4097, 4097)


def test_the_entries_of_two_connections_share_their_evs_not_their_state() -> None:
    core = _core()
    cfg = NicConfig()
    first, _ = mrc_entries(core, cfg, "nic5")
    second, _ = mrc_entries(core, cfg, "nic5")
    assert [e.ev for e in first[0]] == [e.ev for e in second[0]]
    assert all(a is not b for a, b in zip(first[0], second[0], strict=True))
