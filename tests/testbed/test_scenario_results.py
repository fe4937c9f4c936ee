"""result.json's goodput block: long runs recorded at a plot's resolution, bytes exact."""

from __future__ import annotations

import json

import pytest

from testbed.scenario.results import RECORDED_BINS_MAX, RunResult, recorded_goodput


def _run(series: dict[str, list[float]], bin_ns: int = 10_000) -> RunResult:
    return RunResult(
        scenario="s",
        variant="roce",
        mode="virtual",
        transport="roce",
        seed=1,
        topology="small",
        end_ns=bin_ns * max(len(v) for v in series.values()),
        wall_seconds=0.1,
        transfers=[],
        events=[],
        bin_ns=bin_ns,
        goodput=series,
        counters={},
        ev_changes=[],
    )


def test_a_short_run_is_recorded_bin_for_bin() -> None:
    series = {"total": [1.0, 2.0, 3.0]}
    block = recorded_goodput(10_000, series)
    assert block == {"bin_ns": 10_000, "unit": "Gb/s", "series": series}


@pytest.mark.parametrize("bins", [RECORDED_BINS_MAX + 1, 13_421, 200_000])
def test_a_long_run_is_merged_to_the_cap_with_every_series_bytes_exact(bins: int) -> None:
    total = [float((i * 7) % 13) for i in range(bins)]
    plane = [float(i % 3) for i in range(bins // 2)]  # a shorter series (a link idle later)
    block = recorded_goodput(10_000, {"total": total, "plane:0": plane})
    factor = block["bin_ns"] // 10_000
    assert block["measured_bin_ns"] == 10_000 and factor >= 2
    assert len(block["series"]["total"]) <= RECORDED_BINS_MAX
    for key, measured in (("total", total), ("plane:0", plane)):
        recorded = block["series"][key]
        assert sum(recorded) * block["bin_ns"] == pytest.approx(sum(measured) * 10_000)
    # each recorded bin is the mean of its measured ones
    assert block["series"]["total"][1] == pytest.approx(sum(total[factor : 2 * factor]) / factor)


def test_the_json_of_a_long_run_reads_back_with_the_same_window_means() -> None:
    total = [0.0] * 5_000 + [100.0] * 8_421  # 134 ms of 10 us bins, as RoCE at 1 % loss
    run = _run({"total": total})
    back = RunResult.from_json(json.loads(json.dumps(run.to_json())))
    assert len(back.goodput["total"]) <= RECORDED_BINS_MAX
    span = len(back.goodput["total"]) * back.bin_ns  # the recorded bins cover the run
    assert span >= run.end_ns
    assert back.goodput_gbps(0, span) == pytest.approx(run.goodput_gbps(0, span))
    assert back.goodput_gbps(60_000_000, 120_000_000) == pytest.approx(100.0)


def test_a_figure_much_longer_than_a_run_s_bulk_gets_a_log_time_axis_beyond_it() -> None:
    from testbed.scenario.write import LOG_TIME_RATIO, bulk_end_ns, linear_until_ns

    # MRC: 12 bins of 10 us at full rate; RoCE: most of its bytes in 30 bins, then a tail
    # delivered after a 67 ms ACK timeout
    mrc = _run({"total": [100.0] * 12})
    roce = _run({"total": [50.0] * 30 + [0.0] * 6_700 + [10.0]})
    assert bulk_end_ns(mrc) == 60_000  # half its bytes by the end of bin 5
    assert bulk_end_ns(roce) == 160_000
    assert linear_until_ns([mrc, roce], roce.end_ns) == 80_000  # MRC's bulk and two bins
    assert linear_until_ns([roce], roce.end_ns) == 180_000  # RoCE alone: its own bulk
    assert linear_until_ns([mrc], mrc.end_ns) is None
    assert linear_until_ns([mrc], 80_000 * LOG_TIME_RATIO) is None
    assert bulk_end_ns(_run({"total": [0.0, 0.0]})) == 20_000  # nothing: the run's end


def test_the_ev_panel_shows_the_nic_a_fault_names() -> None:
    from testbed.scenario.load import load
    from testbed.scenario.results import TransferResult
    from testbed.scenario.write import ev_panel_nic

    run = _run({"total": [1.0]})
    run.transfers = [
        TransferResult(f"t{i}", "load", f"nic{i}", "nic0", "mrc", 1, 0, 1, 1, 1, None, [])
        for i in range(1, 12)
    ]
    # loaded-failures: a link, a T1, then nic5's port flapping, then nic9's EV drop
    assert ev_panel_nic(load("loaded-failures"), run) == "nic5"
    assert ev_panel_nic(load("loaded-ev-drop"), run) == "nic9"
    assert ev_panel_nic(load("t1-down"), run) == "nic1"  # no NIC named: the first sender
