from __future__ import annotations

from pathlib import Path

import pytest

from testbed.demo import DemoResult, PhaseGoodput, phase_bounds, phase_fractions, phase_goodput


def test_phases_split_the_timeline_at_cut_and_restore() -> None:
    timeline = [[0.1, 0, 1000], [0.5, 1, 1000], [1.2, 1, 500], [2.5, 0, 2000]]
    before, during, after = phase_goodput(timeline, cut_s=1.0, restore_s=2.0, end_s=3.0)
    assert (before.bytes, during.bytes, after.bytes) == (2000, 500, 2000)
    assert before.gbps == pytest.approx(2000 * 8 / 1.0 / 1e9)
    assert after.gbps == pytest.approx(2000 * 8 / 1.0 / 1e9)


def test_empty_phase_has_zero_goodput() -> None:
    assert PhaseGoodput("during", 1.0, 1.0, 0).gbps == 0.0


def test_both_demos_cut_their_time_into_the_same_phases() -> None:
    assert phase_bounds(10, 20, 35) == [("before", 0, 10), ("during", 10, 20), ("after", 20, 35)]
    assert phase_bounds(1.0, 2.0, 3.0)[0] == ("before", 0.0, 1.0)
    fractions = phase_fractions([100.0, 50.0, 25.0, 25.0], 10, phase_bounds(10, 20, 40), 100.0)
    assert fractions == {"before": 1.0, "during": 0.5, "after": 0.25}


def test_summary_lines_report_every_number() -> None:
    result = DemoResult(
        topology="tiny",
        src="nic0",
        dst="nic3",
        size=3000,
        link=("p0-t0-0", "p0-t1-0"),
        intact=True,
        bytes_delivered_intact=3000,
        cut_s=1.0,
        restore_s=2.0,
        elapsed_s=3.0,
        up_seconds=1.5,
        repath_us=[100.0, 300.0, 200.0],
        phases=[
            PhaseGoodput("before", 0, 1, 1000),
            PhaseGoodput("during", 1, 2, 1000),
            PhaseGoodput("after", 2, 3, 1000),
        ],
        per_plane_bytes={"0": 1000, "1": 2000},
        retransmissions=4,
        plot=Path("x.png"),
        deadline_s=45.0,
    )
    text = "\n".join(result.lines())
    assert "transfer done at 3.000 s (deadline 45 s)" in text
    assert result.to_json()["deadline_s"] == 45.0
    assert "delivered intact: 3,000 of 3,000 bytes (SHA-256 matches)" in text
    assert "repath: 3 events, median 200 us, max 300 us" in text
    assert "goodput: before 0.000 Gb/s, during 0.000 Gb/s, after 0.000 Gb/s" in text
    assert "plane 1: 2,000" in text and "4 retransmissions" in text
    assert result.to_json()["goodput_gbps"]["during"] == pytest.approx(8e-6)
