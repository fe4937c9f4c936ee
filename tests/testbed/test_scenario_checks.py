"""Assertions evaluated on hand-made results: each check passes and fails where it should."""

from __future__ import annotations

import pytest

from testbed.scenario.checks import compare_checks, evaluate, line_rate_gbps
from testbed.scenario.load import loads
from testbed.scenario.model import Assertions
from testbed.scenario.results import EventResult, RunResult, TransferResult

SCENARIO = """
name: c
topology: tiny
duration: 1ms
traffic: [{name: main, src: nic0, dst: nic3, bytes: 1000, messages: 2}]
timeline:
  - {at: 100us, link_down: [p0-t0-0, p0-t1-0]}
  - {at: 200us, link_up: [p0-t0-0, p0-t1-0]}
  - {at: 300us, ev_drop: {nic: nic0, plane: 0, t1: 1, fraction: 0.2}}
"""


@pytest.fixture
def scenario():
    return loads(SCENARIO, source="c.yaml")


def make_run(**changes) -> RunResult:
    transfer = TransferResult(
        name="main:nic0->nic3",
        traffic="main",
        src="nic0",
        dst="nic3",
        transport="mrc",
        nbytes=1000,
        start_ns=0,
        completion_ns=500_000,
        bytes_delivered=1000,
        bytes_verified=1000,
        failure=None,
        message_completion_ns=[250_000, 500_000],
        retransmitted_bytes=10,
    )
    run = RunResult(
        scenario="c",
        variant="mrc",
        mode="virtual",
        transport="mrc",
        seed=1,
        topology="tiny",
        end_ns=600_000,
        wall_seconds=0.1,
        transfers=[transfer],
        events=[EventResult(0, "link_down", 100_000, "cut", ["a", "b"], {}, [20_000])],
        bin_ns=50_000,
        goodput={"total": [100.0] * 2 + [90.0] * 10, "link:p0-t0-0--p0-t1-0": [5.0] * 12},
        counters={"trims": 3, "nacks": 2, "timeouts": 0},
        ev_changes=[
            {"t_ns": 310_000, "nic": "nic0", "ev": 0x10000, "from": "GOOD", "to": "ASSUMED_BAD"},
            {"t_ns": 250_000, "nic": "nic0", "ev": 5, "from": "ASSUMED_BAD", "to": "GOOD"},
        ],
    )
    for key, value in changes.items():
        setattr(run, key, value)
    return run


def names(checks) -> dict[str, bool]:
    return {c.name.split(" (")[0]: c.ok for c in checks}


def test_passing_assertions(scenario) -> None:
    a = Assertions(
        completion_max_ns=600_000,
        repath_max_ns=30_000,
        retransmit_max_fraction=0.05,
        ev_retired_within_ns=20_000,
        revived_within_ns=100_000,
        trims_min=1,
        nacks_min=1,
        timeouts_max=0,
    )
    checks = evaluate(scenario, a, make_run())
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]
    assert len(checks) == 9


def test_failing_assertions(scenario) -> None:
    a = Assertions(
        completion_max_ns=400_000,
        repath_max_ns=10_000,
        retransmit_max_fraction=0.001,
        ev_retired_within_ns=5_000,
        trims_min=5,
        nacks_min=3,
        timeouts_max=0,
    )
    run = make_run(counters={"trims": 0, "nacks": 0, "timeouts": 4})
    checks = evaluate(scenario, a, run)
    assert not any(c.ok for c in checks[1:]), checks
    assert "after 10 us" in next(c.measured for c in checks if "retired" in c.name)


def test_ev_retirement_is_timed_from_the_first_packet_the_drop_took(scenario) -> None:
    events = [
        EventResult(0, "link_down", 100_000, "cut", None, {}, [20_000]),
        EventResult(1, "link_up", 200_000, "restore", None, {}, []),
        EventResult(2, "ev_drop", 300_000, "drop", None, {"first_loss_sent_ns": 306_000}, []),
    ]
    (_, check) = evaluate(scenario, Assertions(ev_retired_within_ns=5_000), make_run(events=events))
    assert check.ok and check.value == 4_000
    assert check.measured == "after 4 us (first packet lost 6 us after the drop started)"
    # no packet on it lost: timed from the drop's start
    events[2] = EventResult(2, "ev_drop", 300_000, "drop", None, {"first_loss_sent_ns": None}, [])
    (_, check) = evaluate(scenario, Assertions(ev_retired_within_ns=5_000), make_run(events=events))
    assert not check.ok and check.measured == "after 10 us (no packet on it lost)"


def test_byte_exact_names_the_broken_transfer(scenario) -> None:
    run = make_run()
    run.transfers[0].bytes_verified = 900
    run.transfers[0].failure = "message 1 arrived damaged"
    (check,) = evaluate(scenario, Assertions(), run)
    assert not check.ok
    assert (
        "900 of 1,000 bytes verified; main:nic0->nic3: message 1 arrived damaged" in check.measured
    )


def test_expected_failure(scenario) -> None:
    run = make_run()
    a = Assertions(expect_failure_within_ns=1_000_000)
    assert not evaluate(scenario, a, run)[0].ok  # it completed
    t = run.transfers[0]
    t.completion_ns, t.failure, t.failed_at_ns = None, "no_usable_ev", 900_000
    assert evaluate(scenario, a, run)[0].ok
    t.failed_at_ns = 2_000_000
    assert not evaluate(scenario, a, run)[0].ok


def test_repath_never_measured_fails(scenario) -> None:
    run = make_run(events=[EventResult(0, "link_down", 100_000, "cut", None, {}, [])])
    (_, check) = evaluate(scenario, Assertions(repath_max_ns=50_000), run)
    assert not check.ok and check.measured == "no repath measured for it"
    assert check.assertion == "assertions.repath_max"


def test_repath_is_checked_per_path_cutting_event(scenario) -> None:
    """One event measured is not enough: every cut needs its own repath, within the bound."""
    events = [
        EventResult(0, "link_down", 100_000, "cut 0", None, {"affected_evs": 4}, [20_000]),
        EventResult(1, "link_down", 110_000, "cut 1", None, {"affected_evs": 4}, []),
        EventResult(2, "switch_down", 120_000, "T1", None, {"affected_evs": 4}, [5_000, None]),
        EventResult(3, "link_down", 130_000, "elsewhere", None, {"affected_evs": 0}, []),
        EventResult(4, "link_up", 140_000, "back", None, {}, []),
    ]
    checks = evaluate(scenario, Assertions(repath_max_ns=50_000), make_run(events=events))[1:]
    assert [c.name.split(" (")[0] for c in checks] == [
        "repath after event 0",
        "repath after event 1",
        "repath after event 2",
        "repath after event 3",
    ]
    assert [c.ok for c in checks] == [True, False, False, True]
    assert checks[1].measured == "no repath measured for it"
    assert "1 path(s) never left" in checks[2].measured
    assert checks[0].value == 20_000 and checks[0].worse == "high"


def test_repath_median_over_every_cutting_event(scenario) -> None:
    """The median over every measured repath of every cut; a path that never left counts
    as the longest, and a run with no repath measured fails."""
    events = [
        EventResult(0, "link_down", 100_000, "cut 0", None, {}, [10_000, 30_000]),
        EventResult(1, "switch_down", 120_000, "T1", None, {}, [20_000, 40_000, None]),
        EventResult(2, "link_up", 140_000, "back", None, {}, [1_000]),
    ]
    run = make_run(events=events)
    (_, check) = evaluate(scenario, Assertions(repath_median_ns=30_000), run)
    assert check.ok and check.value == 30_000  # 10, 20, 30, 40, never: the middle is 30
    assert check.assertion == "assertions.repath_median"
    assert check.measured == "median 30 us over 5 path(s); 1 never left"
    (_, check) = evaluate(scenario, Assertions(repath_median_ns=29_999), run)
    assert not check.ok
    events[0] = EventResult(0, "link_down", 100_000, "cut 0", None, {}, [None, None])
    (_, check) = evaluate(scenario, Assertions(repath_median_ns=50_000), make_run(events=events))
    assert not check.ok and "never left" in check.measured
    empty = [EventResult(0, "link_down", 100_000, "cut", None, {}, [])]
    (_, check) = evaluate(scenario, Assertions(repath_median_ns=50_000), make_run(events=empty))
    assert not check.ok and check.measured == "no repath measured"


def test_no_stall_and_completion_against_the_ideal(scenario) -> None:
    run = make_run(goodput={"total": [100.0, 0.0, 0.0, 50.0] + [90.0] * 8})
    a = Assertions(stall_max_ns=100_000, ideal_factor_max=1.5)
    _, ideal, stall = evaluate(scenario, a, run)
    assert stall.ok and stall.value == 100_000
    a = Assertions(stall_max_ns=50_000, ideal_factor_max=1.5)
    assert not evaluate(scenario, a, run)[2].ok
    # 1000 bytes over nic0's 2 x 100 Gb/s: 40 ns ideal; done at 500 us
    assert not ideal.ok and ideal.value is not None and ideal.value > 1000
    run.transfers[0].completion_ns = 50
    assert evaluate(scenario, a, run)[1].ok


def test_not_reproduced_claims_are_reported_not_failed() -> None:
    s = loads(
        SCENARIO
        + "assertions: {completion_max: 100us, timeouts_max: 0}\n"
        + "not_reproduced: {assertions.completion_max: 'measured 500 us: why'}\n"
    )
    run = make_run()
    run.checks = evaluate(s, s.assertions, run)
    done, timeouts = run.checks[1:]
    assert not done.ok and done.not_reproduced == "measured 500 us: why"
    assert done.accepted and done.verdict == "not reproduced"
    assert timeouts.ok and timeouts.not_reproduced is None
    assert run.ok and s.expected == "not reproduced"
    run.counters["timeouts"] = 1
    run.checks = evaluate(s, s.assertions, run)
    assert not run.ok and run.failed("assertions.timeouts_max")


def test_goodput_windows(scenario) -> None:
    good = loads(
        SCENARIO + "assertions: {goodput: [{event: 0, min_fraction: 0.85, window: 50us}]}",
        source="c",
    )
    run = make_run()
    checks = evaluate(good, good.assertions, run)
    assert checks[-1].ok and "90.0 of 100.0 Gb/s (90.0%)" in checks[-1].measured
    strict = loads(
        SCENARIO + "assertions: {goodput: [{event: 0, min_fraction: 0.95, window: 50us}]}",
        source="c",
    )
    assert not evaluate(strict, strict.assertions, run)[-1].ok


def test_baseline_and_traffic_goodput(scenario) -> None:
    s = loads(
        SCENARIO + "assertions: {traffic_goodput: [{traffic: main, min_fraction: 0.9}],"
        " goodput: [{event: 0, of: baseline, min_fraction: 0.5}]}",
        source="c",
    )
    run, baseline = make_run(), make_run()
    baseline.transfers[0].completion_ns = 400_000
    checks = evaluate(s, s.assertions, run, baseline)
    by_name = names(checks)
    assert by_name["goodput of main"] is False  # 0.8 of the baseline's
    assert "goodput 0 ns..50 us after event 0" in by_name
    missing = evaluate(s, s.assertions, run, None)
    assert not any(c.ok for c in missing[1:])


def test_compare_checks_and_line_rate(scenario) -> None:
    mrc, roce = make_run(), make_run()
    roce.transfers[0].completion_ns = 1_500_000
    (check,) = compare_checks(Assertions(roce_slower_by=2.5), mrc, roce)
    assert check.ok and check.measured == "3.00 x"
    roce.transfers[0].completion_ns = None
    (check,) = compare_checks(Assertions(roce_slower_by=2.5), mrc, roce)
    assert check.ok and check.measured == "RoCE did not complete"
    assert compare_checks(Assertions(), mrc, roce) == []
    assert line_rate_gbps(scenario) == 200.0


def test_result_json_round_trip() -> None:
    run = make_run()
    data = run.to_json()
    assert data["summary"]["message_p50_ns"] == 375_000
    assert data["summary"]["message_p99_ns"] == 500_000
    again = RunResult.from_json(data)
    assert again.to_json() == data
    assert run.goodput_gbps(0, 100_000) == 100.0
    assert run.goodput_gbps(75_000, 125_000) == pytest.approx(95.0)


def test_roce_goodput_min_compares_goodputs() -> None:
    mrc, roce = make_run(), make_run()  # MRC completes at 500 us
    roce.transfers[0].completion_ns = 600_000  # 83 % of MRC's goodput
    (check,) = compare_checks(Assertions(roce_goodput_min=0.8), mrc, roce)
    assert check.ok and check.measured == "83.3%"
    roce.transfers[0].completion_ns = 1_000_000  # 50 %
    (check,) = compare_checks(Assertions(roce_goodput_min=0.8), mrc, roce)
    assert not check.ok and check.measured == "50.0%"
    roce.transfers[0].completion_ns = None
    (check,) = compare_checks(Assertions(roce_goodput_min=0.8), mrc, roce)
    assert not check.ok and check.measured == "0.0%"
