"""The differential's workload sets, and choosing among them by name."""

from __future__ import annotations

import pytest

from testbed.reference import suites
from testbed.reference.exceptions import HtsimDiffError
from testbed.reference.results import rss_floor_mib


def test_select_keeps_the_named_workloads_in_the_pool_order() -> None:
    pool = list(suites.CI)
    names = [w.name for w in pool]
    assert suites.select(pool, None) == pool and suites.select(pool, []) == pool
    chosen = suites.select(pool, [names[-1], names[0]])
    assert [w.name for w in chosen] == [names[0], names[-1]]


def test_select_refuses_a_name_not_in_the_pool_and_lists_the_pool() -> None:
    pool = [suites.permutation(32)]
    with pytest.raises(HtsimDiffError, match="--only nope: not in the chosen set") as info:
        suites.select(pool, ["nope"])
    assert pool[0].name in str(info.value)


def test_the_rss_floor_is_a_small_positive_figure() -> None:
    floor = rss_floor_mib()
    assert 0 < floor < 64  # the launcher's own peak RSS for `true`, in MiB
