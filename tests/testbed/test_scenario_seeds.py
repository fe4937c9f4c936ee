"""--seeds: parsing seed lists and the per-check distributions over seeds."""

from __future__ import annotations

import pytest

from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.results import Check
from testbed.scenario.run_options import RunOptions
from testbed.scenario.seeds import (
    default_jobs,
    distributions,
    format_value,
    map_seeds,
    parse_seeds,
)


def test_parse_seeds() -> None:
    assert parse_seeds("1-4") == [1, 2, 3, 4]
    assert parse_seeds("3") == [3]
    assert parse_seeds("1,4,7-9,4") == [1, 4, 7, 8, 9]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1-x", "expected seeds like '1-16'"),
        ("", "expected seeds like"),
        ("5-2", "'5-2' is not a range of seeds"),
        ("0-5000", "more than 1000 seeds"),
    ],
)
def test_bad_seed_lists_are_refused(text: str, message: str) -> None:
    with pytest.raises(ScenarioRunError, match=message):
        parse_seeds(text)


def test_jobs_follow_cores_on_the_virtual_fabric_only() -> None:
    assert default_jobs(16, RunOptions(mode="local")) == 1
    assert 1 <= default_jobs(16, RunOptions()) <= 16
    assert default_jobs(1, RunOptions()) == 1


def test_map_seeds_keeps_the_order_in_processes() -> None:
    assert map_seeds(abs, [-3, -1, -2], 2) == [3, 1, 2]
    assert map_seeds(abs, [-3], 4) == [3]


def _repath(value: int | None, ok: bool) -> Check:
    return Check(
        "repath after event 0",
        ok,
        "<= 50 us",
        "m",
        "assertions.repath_max",
        value=value,
        unit="ns",
        worse="high",
    )


def test_distribution_median_worst_and_passes() -> None:
    (d,) = distributions(
        [(1, [_repath(20_000, True)]), (2, [_repath(60_000, False)]), (3, [_repath(10_000, True)])]
    )
    assert (d.median, d.worst, d.worst_seed, d.passes) == (20_000, 60_000, 2, 2)
    assert d.summary() == "median 20 us, worst 60 us (seed 2), 2/3 pass"
    assert not d.accepted
    (missing,) = distributions([(1, [_repath(20_000, True)]), (2, [_repath(None, False)])])
    assert missing.worst is None and missing.worst_seed == 2
    assert "worst nothing measured on some seed (seed 2)" in missing.summary()


def test_a_claim_marked_not_reproduced_is_accepted_over_seeds() -> None:
    check = Check(
        "g", False, ">= 95%", "90%", "assertions.goodput[0]", "why", 0.9, "fraction", "low"
    )
    (d,) = distributions([(1, [check]), (2, [check])])
    assert d.accepted and d.passes == 0
    assert d.to_json()["not_reproduced"] == "why"
    assert format_value(0.9, "fraction") == "90.0%" and format_value(float("inf"), "x") == "inf"
