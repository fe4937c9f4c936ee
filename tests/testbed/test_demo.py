"""The demo's one driver (testbed.demo): its phases, its scenario and its summary, the
same on every mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from testbed.demo import (
    CUT_FRACTION,
    DEMO_BIN_NS,
    RESTORE_FRACTION,
    DemoOptions,
    DemoResult,
    demo_phases,
    demo_scenario,
    phase_bounds,
    phase_fractions,
)
from testbed.exceptions import DemoError
from testbed.local import LocalMode
from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.fabric import Variant
from testbed.scenario.process import ProcessRun
from testbed.scenario.virtual import VirtualRun
from topologies import load
from topologies.events import LinkDownEvent, LinkRef, LinkUpEvent


def test_the_phases_are_a_third_and_two_thirds_of_the_line_rate_time() -> None:
    phases = demo_phases(32 << 20, 200.0)
    assert phases.nominal_ns == int((32 << 20) * 8 / 200.0)
    assert phases.cut_ns == round(phases.nominal_ns * CUT_FRACTION, -4) == 450_000
    assert phases.restore_ns == round(phases.nominal_ns * RESTORE_FRACTION, -4) == 890_000
    assert phases.duration_ns > 10 * phases.nominal_ns


@pytest.mark.parametrize("size", [4096, 20_000])
def test_a_transfer_too_short_to_cut_mid_way_is_refused_before_anything_starts(size: int) -> None:
    with pytest.raises(DemoError, match="too little to cut the link mid-way"):
        demo_phases(size, 200.0)


def test_the_demo_is_one_scenario_for_every_fabric() -> None:
    """The same scenario (one transfer, the cut and the restore in the fault vocabulary)
    is what the virtual and the process fabric are given."""
    options = DemoOptions(size=3 << 20)
    topology = load("tiny")
    phases = demo_phases(3 << 20, 200.0)
    scenario = demo_scenario(options, topology, phases, 3 << 20)
    link = LinkRef("p0-t0-0", "p0-t1-0")
    assert scenario.timeline == (
        LinkDownEvent(at_ns=phases.cut_ns, link=link),
        LinkUpEvent(at_ns=phases.restore_ns, link=link),
    )
    assert [(f.src, f.dst, f.nbytes, f.transport) for f in scenario.flows()] == [
        ("nic0", "nic3", 3 << 20, "mrc")
    ]
    assert scenario.plot_bin_ns == DEMO_BIN_NS and scenario.duration_ns == phases.duration_ns
    virtual = VirtualRun(scenario, Variant(name="demo"), options.run_options())
    virtual.schedule(scenario.timeline)
    assert [event for _, event in virtual.pending] == list(scenario.timeline)
    local = DemoOptions(mode="local").run_options()
    process = ProcessRun(scenario, Variant(name="demo"), local, launcher=LocalMode)
    process.schedule(scenario.timeline)
    assert [(a.at_ns, a.event) for a in process.pending] == [
        (e.at_ns, e) for e in scenario.timeline
    ]


def test_pcaps_are_for_the_virtual_fabric() -> None:
    scenario = demo_scenario(DemoOptions(), load("tiny"), demo_phases(1 << 20, 200.0), 1 << 20)
    options = DemoOptions(mode="local", pcap=True).run_options()
    with pytest.raises(ScenarioRunError, match="pcaps are for the virtual fabric"):
        ProcessRun(scenario, Variant(), options, launcher=LocalMode)
    with pytest.raises(ScenarioRunError, match="output directory"):
        VirtualRun(scenario, Variant(), DemoOptions(pcap=True).run_options())


def test_both_fabrics_cut_their_time_into_the_same_phases() -> None:
    assert phase_bounds(10, 20, 35) == [("before", 0, 10), ("during", 10, 20), ("after", 20, 35)]
    assert phase_bounds(1.0, 2.0, 3.0)[0] == ("before", 0.0, 1.0)
    fractions = phase_fractions([100.0, 50.0, 25.0, 25.0], 10, phase_bounds(10, 20, 40), 100.0)
    assert fractions == {"before": 1.0, "during": 0.5, "after": 0.25}


def _result(clock: str, **changes: object) -> DemoResult:
    fields: dict[str, object] = {
        "mode": "virtual" if clock == "virtual" else "local",
        "clock": clock,
        "topology": "tiny",
        "src": "nic0",
        "dst": "nic3",
        "size": 3000,
        "link": ("p0-t0-0", "p0-t1-0"),
        "seed": 1,
        "line_rate_gbps": 200.0,
        "planes": 2,
        "intact": True,
        "bytes_delivered_intact": 3000,
        "cut_ns": 10_000,
        "restore_ns": 20_000,
        "completion_ns": 30_500,
        "repath_us": [12.5, 3.0],
        "goodput_fraction": {"before": 0.96, "during": 0.5, "after": 0.94},
        "retransmitted_bytes": 4096,
        "event_log_sha256": "ab" * 32 if clock == "virtual" else None,
        "out_dir": Path("out"),
        "plot": Path("out/demo.png"),
        "wall_s": 3.0,
        "run_wall_s": 2.0,
        "tdf": None if clock == "virtual" else 32768,
    }
    fields.update(changes)
    return DemoResult(**fields)  # type: ignore[arg-type]


def test_summary_lines_report_every_number_on_both_clocks() -> None:
    text = "\n".join(_result("virtual").lines())
    assert text.startswith("demo (virtual time): tiny, nic0 -> nic3, 3,000 bytes, 2 planes x")
    assert "delivered intact: 3,000 of 3,000 bytes (byte-exact)" in text
    assert "cut at 10.0 us, restored at 20.0 us; transfer done at 30.5 us" in text
    assert "repath time: 12.5 us" in text and "2 event(s)" in text
    assert "goodput (fraction of 200 Gb/s line rate): before 0.96, during 0.50" in text
    assert f"event-log sha256: {'ab' * 32}" in text
    wall = "\n".join(_result("wall").lines())
    assert "local process fabric, TDF 32768: wall-clock times / TDF" in wall
    assert "event-log sha256" not in wall and "hot path" not in wall
    failed = "\n".join(_result("wall", completion_ns=None, failure="late").lines())
    assert "TRANSFER NOT DONE (late)" in failed
    assert _result("wall").to_json()["tdf"] == 32768
