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


def test_runs_of_very_different_lengths_get_a_log_time_axis_beyond_the_short_one() -> None:
    from testbed.scenario.results import TransferResult
    from testbed.scenario.write import LOG_TIME_RATIO, linear_until_ns

    def ended(at_ns: int | None, end_ns: int) -> RunResult:
        run = _run({"total": [1.0]})
        run.end_ns = end_ns
        run.transfers = [
            TransferResult("m", "m", "nic0", "nic2", "mrc", 1, 0, at_ns, 1, 1, None, [])
        ]
        return run

    mrc, roce = ended(111_000, 111_000), ended(None, 20_000_000)  # RoCE never completed
    assert linear_until_ns([mrc, roce], 20_000_000) == 131_000  # MRC's end and two bins
    alike = ended(25_000 * LOG_TIME_RATIO // 2, 20_000_000)
    assert linear_until_ns([mrc, alike], 131_000 * LOG_TIME_RATIO) is None
    assert linear_until_ns([mrc], 131_000) is None
