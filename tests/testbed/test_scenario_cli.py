"""``mrc-testbed run`` and ``compare`` on a small scenario on the virtual fabric."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testbed import cli

SCENARIO = """
name: small-cut
description: a T0-T1 link cut under a short transfer
topology: tiny
duration: 2ms
traffic: [{name: main, src: nic0, dst: nic3, bytes: 512KiB, messages: 4}]
timeline:
  - {at: 10us, link_down: [p0-t0-0, p0-t1-0]}
assertions:
  repath_max: 150us
  roce_slower_by: 1.0
negative_controls:
  - {name: probes-off, description: no probes, nic: {probe_interval_ns: 10s}}
"""


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "small-cut.yaml"
    path.write_text(SCENARIO)
    return path


def test_run_writes_results(scenario_file: Path, tmp_path: Path, capsys) -> None:
    code, out, err = run(["run", str(scenario_file), "-o", str(tmp_path / "res")], capsys)
    assert code == 0, out + err
    assert "small-cut [mrc, virtual, seed 1]: PASS" in out
    assert "event-log sha256: " in out
    folder = tmp_path / "res" / "small-cut"
    data = json.loads((folder / "result.json").read_text())
    assert data["schema"] == "mrc-testbed/scenario-result/1"
    assert data["ok"] is True
    assert data["summary"]["bytes_verified"] == 512 * 1024
    assert data["events"][0]["repath_ns"]
    assert (folder / "run.png").stat().st_size > 10_000
    assert (folder / "events.jsonl").is_file()
    assert data["files"] == {
        "plot": "run.png",
        "event_log": "events.jsonl",
        "result": "result.json",
    }


def test_run_fails_with_exit_1_when_an_assertion_fails(tmp_path: Path, capsys) -> None:
    path = tmp_path / "strict.yaml"
    path.write_text(SCENARIO.replace("repath_max: 150us", "repath_max: 1ns"))
    code, out, _ = run(["run", str(path), "-o", str(tmp_path)], capsys)
    assert code == 1
    assert "FAIL repath after event 0 (link p0-t0-0 -- p0-t1-0 down): worst" in out


@pytest.mark.scenario  # runs the scenario two or more times (CI, not -m unit)
def test_seed_changes_the_hash(scenario_file: Path, tmp_path: Path, capsys) -> None:
    hashes = []
    for seed in ("1", "1", "2"):
        code, out, _ = run(
            ["run", str(scenario_file), "--seed", seed, "-o", str(tmp_path), "--json"], capsys
        )
        assert code == 0
        hashes.append(json.loads(out)["event_log_sha256"])
    assert hashes[0] == hashes[1] != hashes[2]


@pytest.mark.scenario  # runs the scenario two or more times (CI, not -m unit)
def test_compare_writes_a_report(scenario_file: Path, tmp_path: Path, capsys) -> None:
    code, out, err = run(["compare", str(scenario_file), "-o", str(tmp_path)], capsys)
    assert code == 0, out + err
    folder = tmp_path / "small-cut"
    report = (folder / "report.md").read_text()
    assert report.startswith("# small-cut: MRC vs RoCE")
    for row in (
        "completion time",
        "goodput during 10 us: link",
        "goodput after 10 us: link",
        "message completion p50",
        "message completion p99",
        "bytes retransmitted",
    ):
        assert f"| {row}" in report
    assert "![MRC](mrc/run.png)" in report and "![RoCE](roce/run.png)" in report
    assert "![MRC and RoCE](compare.png)" in report and (folder / "compare.png").is_file()
    assert "RoCE did not complete within the run (2 ms); MRC completed at " in report
    assert (folder / "mrc" / "run.png").is_file() and (folder / "roce" / "result.json").is_file()
    assert json.loads((folder / "compare.json").read_text())["completion_ratio"] > 0


@pytest.mark.scenario  # runs the scenario two or more times (CI, not -m unit)
def test_controls_are_reported(scenario_file: Path, tmp_path: Path, capsys) -> None:
    code, out, _ = run(["run", str(scenario_file), "-o", str(tmp_path), "--controls"], capsys)
    # probes do not matter to a cut that is never repaired: the control is not caught
    assert code == 1
    assert "negative control probes-off (no probes): NOT CAUGHT" in out
    named = scenario_file.read_text().replace(
        "nic: {probe_interval_ns: 10s}}",
        "nic: {probe_interval_ns: 10s}, caught_by: [assertions.repath_max]}",
    )
    scenario_file.write_text(named)
    code, out, _ = run(["run", str(scenario_file), "-o", str(tmp_path), "--controls"], capsys)
    assert code == 1
    assert (
        "negative control probes-off (no probes): NOT CAUGHT by assertions.repath_max: "
        "still hold: assertions.repath_max" in out
    )


def test_seeds_report_each_check_over_the_seeds(
    scenario_file: Path, tmp_path: Path, capsys
) -> None:
    argv = ["run", str(scenario_file), "-o", str(tmp_path), "--seeds", "1-2", "--jobs", "2"]
    code, out, err = run(argv, capsys)
    assert code == 0, out + err
    assert "  seed 1: PASS; done at " in out and "  seed 2: PASS; done at " in out
    assert "ok   repath after event 0 (link p0-t0-0 -- p0-t1-0 down): median " in out
    assert ", 2/2 pass (expected <= 150 us)" in out
    assert "small-cut over seeds 1-2: PASS" in out
    folder = tmp_path / "small-cut"
    data = json.loads((folder / "seeds.json").read_text())
    assert data["seeds"] == [1, 2] and data["ok"] is True
    assert [c["passes"] for c in data["checks"]] == [2, 2]
    assert (folder / "run.png").is_file()
    assert (folder / "seeds" / "seed-2-mrc-result.json").is_file()
    code, _, err = run(["run", str(scenario_file), "--seeds", "2-1"], capsys)
    assert code == 1 and "'2-1' is not a range of seeds" in err
    code, _, err = run(["run", str(scenario_file), "--seeds", "1", "--seed", "2"], capsys)
    assert code == 2 and "not allowed with argument" in err


def test_a_claim_marked_not_reproduced_does_not_fail_the_run(
    scenario_file: Path, tmp_path: Path, capsys
) -> None:
    path = tmp_path / "strict.yaml"
    path.write_text(
        SCENARIO.replace("repath_max: 150us", "repath_max: 1ns")
        + "not_reproduced: {assertions.repath_max: 'measured 20 us: the model is slower'}\n"
    )
    code, out, _ = run(["run", str(path), "-o", str(tmp_path)], capsys)
    assert code == 0, out
    assert "PASS (1 claim(s) of the paper not reproduced, as marked)" in out
    assert "NOT REPRODUCED repath after event 0" in out
    assert "marked not reproduced: measured 20 us: the model is slower" in out


def test_list_and_errors(tmp_path: Path, capsys) -> None:
    code, out, _ = run(["run", "--list"], capsys)
    assert code == 0 and "t1-down" in out and "pair-failures" in out
    code, _, err = run(["run", "no-such-scenario"], capsys)
    assert code == 2  # a bad input file (docs/exit-codes.md)
    assert err.startswith("mrc-testbed run: no-such-scenario: no such scenario file")
    bad = tmp_path / "bad.yaml"
    bad.write_text(SCENARIO.replace("at: 10us", "at: soon"))
    code, _, err = run(["compare", str(bad)], capsys)
    assert code == 2
    assert "timeline[0].at: expected a time like '150us' or '2ms', got 'soon'" in err
    assert "Traceback" not in err
    code, _, err = run(["run"], capsys)
    assert code == 2
    code, _, err = run(["compare", "pair-failures"], capsys)
    assert code == 1 and "compare takes a scenario with a timeline" in err
    code, _, err = run(["run", "pair-failures", "--seeds", "1-2"], capsys)
    assert code == 2 and "pair-failures is a sweep (one run per failure set)" in err


@pytest.mark.scenario  # runs the scenario two or more times (CI, not -m unit)
def test_a_sweep_writes_one_verdict_per_case(tmp_path: Path, capsys) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(
        "name: one-switch\ntopology: tiny\nduration: 20ms\n"
        "traffic: [{src: nic0, dst: nic3, bytes: 64KiB}]\n"
        "sweep: {of: [switches], size: 1, at: 5us}\n"
        "assertions: {expect_failure_within: 15ms}\n"
        "negative_controls: [{name: n, description: d, nic: {max_retries: 30}}]\n"
    )
    code, out, err = run(["run", str(path), "-o", str(tmp_path)], capsys)
    assert code == 0, out + err
    assert "one-switch: 8 of 8 cases pass (8 leave a path, 0 leave none)" in out
    data = json.loads((tmp_path / "one-switch" / "result.json").read_text())
    assert [c["path_left"] for c in data["cases"]] == [True] * 8
    assert data["cases"][0]["case"] == "switch p0-t0-0 down"


@pytest.mark.parametrize(
    ("tdf", "why"), [("3", "power of two"), ("0", "power of two"), ("x", "not an integer")]
)
def test_a_bad_time_dilation_factor_is_a_bad_invocation(
    scenario_file: Path, capsys: pytest.CaptureFixture[str], tdf: str, why: str
) -> None:
    code, _out, err = run(["run", str(scenario_file), "--mode", "local", "--tdf", tdf], capsys)
    assert code == 2 and "--tdf" in err and why in err  # refused before anything starts
