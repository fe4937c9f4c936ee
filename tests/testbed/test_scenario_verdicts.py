"""The verdict table's pure parts: cells, rendering, and its place in docs/results.md
(the runs themselves are what scripts/verdicts-doc does)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testbed.exceptions import TestbedError
from testbed.scenario import verdicts
from testbed.scenario.load import bundled_names, load
from testbed.scenario.results import Check, EventResult, RunResult
from testbed.scenario.resultsdoc import render as render_results
from testbed.scenario.verdicts import FABRICS, Cell, render, run_cell


def _run(mode: str, checks: list[Check], **fabric: object) -> RunResult:
    return RunResult(
        scenario="t1-down",
        variant="mrc",
        mode=mode,
        transport="as-written",
        seed=1,
        topology="small",
        end_ns=400_000,
        wall_seconds=1.0,
        transfers=[],
        events=[],
        bin_ns=10_000,
        goodput={},
        counters={},
        ev_changes=[],
        checks=checks,
        fabric={"clock": "virtual"} if mode == "virtual" else {"clock": "wall", **fabric},
    )


def test_the_table_puts_each_assertion_of_each_fabric_side_by_side() -> None:
    ok = Check("byte-exact delivery", True, "every byte", "16 of 16 bytes verified")
    good = Check("goodput 60 us..120 us after event 0", True, ">= 85%", "90.7%")
    bad = Check("goodput 60 us..120 us after event 0", False, ">= 85%", "80.0%")
    cells = {
        "t1-down": {
            "virtual": Cell(runs=[_run("virtual", [ok, good])]),
            "bmv2": Cell(
                runs=[
                    _run("mininet", [ok, good], tdf=65536, load_average_before=[12.0]),
                    _run("mininet", [ok, bad], tdf=65536, load_average_before=[15.5]),
                ]
            ),
            "local": Cell(refused="not run: Mininet needs root"),
        }
    }
    text = render(cells, FABRICS)
    lines = text.splitlines()
    assert "| | virtual | Mininet + BMv2 | local p4emu | why they differ |" in lines
    row = next(line for line in lines if line.startswith("| goodput"))
    assert "ok 90.7% | ok 90.7%<br>**FAIL** 80.0% | - |" in row
    assert "the processes, not the links, set the rate" in row  # the fabrics disagree: why
    same = next(line for line in lines if line.startswith("| byte-exact"))
    assert same.endswith("|  |")  # they agree: nothing to explain
    run_row = next(line for line in lines if line.startswith("| run |"))
    assert "TDF 65536, load 12.0" in run_row and "TDF 65536, load 15.5" in run_row
    assert "not run: Mininet needs root" in run_row


def test_what_a_fabric_cannot_run_is_a_cell_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = next(f for f in FABRICS if f.key == "local")
    loss = run_cell("random-loss", local, 1, tmp_path)  # refused before anything starts
    assert loss.refused is not None and "loss needs the virtual fabric" in loss.refused
    sweep = run_cell("pair-failures", local, 1, tmp_path)
    assert sweep.refused == "refused: sweeps run on the virtual fabric only"
    monkeypatch.setattr(verdicts.os, "geteuid", lambda: 1000)
    bmv2 = next(f for f in FABRICS if f.key == "bmv2")
    assert run_cell("t1-down", bmv2, 1, tmp_path).refused == "not run: Mininet needs root"


def test_the_results_document_ends_with_the_verdicts() -> None:
    text = render_results([], "# Verdicts\n\n## t1-down\n\n| a |\n")
    assert text.endswith("\n## Verdicts\n\n### t1-down\n\n| a |")
    assert "Verdicts" not in render_results([])


def test_a_claim_marked_not_reproduced_reads_so_in_the_table() -> None:
    note = "measured 93 % over seeds 1-16"
    fails = Check(
        "goodput 30 us..60 us after event 0", False, ">= 95%", "93.3%", not_reproduced=note
    )
    holds = Check(
        "goodput 30 us..60 us after event 0", True, ">= 95%", "96.0%", not_reproduced=note
    )
    cells = {
        "link-cuts": {
            "virtual": Cell(runs=[_run("virtual", [fails])]),
            "bmv2": Cell(runs=[_run("mininet", [holds], tdf=131072, load_average_before=[3.0])]),
            "local": Cell(refused="not run: Mininet needs root"),
        }
    }
    row = next(line for line in render(cells, FABRICS).splitlines() if line.startswith("| goodput"))
    assert "| not reproduced 93.3% | holds (marked not reproduced) 96.0% |" in row
    assert "**FAIL**" not in row


def test_the_process_fabric_runs_up_to_16_nics_and_says_why_not_beyond(tmp_path: Path) -> None:
    local = next(f for f in FABRICS if f.key == "local")
    assert verdicts.too_large(load("incast-victim").topology) is None  # 16 NICs: it runs
    cell = run_cell("write-latency", local, 1, tmp_path)  # refused before anything starts
    assert cell.refused == (
        "not run: 32 NICs and 96 switches, 128 processes on 2 cores "
        f"(the table runs the process fabric up to {verdicts.PROCESS_NICS_MAX} NICs)"
    )
    # what the process fabric cannot express is said first, whatever the fabric's size
    loss = run_cell("collective-loss", local, 1, tmp_path)
    assert loss.refused is not None and "loss needs the virtual fabric" in loss.refused


def test_the_target_scenarios_run_three_times_on_bmv2_the_others_once() -> None:
    virtual, bmv2, local = FABRICS
    assert [verdicts.runs_of(n, bmv2, None) for n in verdicts.TARGET_SCENARIOS] == [3, 3, 3]
    assert verdicts.runs_of("link-cuts", bmv2, None) == 1
    assert verdicts.runs_of("t1-down", local, None) == 1
    assert verdicts.runs_of("t1-down", virtual, 5) == 1  # deterministic: one run
    assert verdicts.runs_of("link-cuts", local, 2) == 2  # --repeat
    assert set(verdicts.TARGET_SCENARIOS) <= set(bundled_names())


def test_a_process_runs_worst_repath_is_given_against_the_virtual_runs() -> None:
    def with_repath(run: RunResult, repaths: list[int | None]) -> RunResult:
        run.events = [EventResult(0, "switch_down", 80_000, "switch p0-t1-0 down", "p0-t1-0")]
        run.events[0].repath_ns = repaths
        return run

    cells = {
        "t1-down": {
            "virtual": Cell(runs=[with_repath(_run("virtual", []), [17_914, 12_000])]),
            "bmv2": Cell(runs=[with_repath(_run("mininet", [], tdf=65536), [16_640, None])]),
            "local": Cell(runs=[_run("local", [], tdf=65536)]),
        }
    }
    row = next(line for line in render(cells, FABRICS).splitlines() if line.startswith("| run"))
    virtual, bmv2, local = row.split(" | ")[1:4]
    assert "repath max 17.914 us" in virtual and "x virtual" not in virtual
    assert "repath max 16.64 us (0.93x virtual)" in bmv2
    assert "no repath" in local


def test_a_scenario_no_process_fabric_runs_is_not_run_virtually_either(tmp_path: Path) -> None:
    virtual = FABRICS[0]
    for name in ("random-loss", "pair-failures", "write-latency"):
        assert run_cell(name, virtual, None, tmp_path).refused == verdicts.VIRTUAL_ELSEWHERE


def test_a_run_that_fails_is_said_beside_the_runs_that_did_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = _run("mininet", [], tdf=65536)
    outcomes: list[Exception | RunResult] = [done, TestbedError("s1 did not answer\nmore"), done]

    def fake(*_args: object, **_kwargs: object) -> tuple[RunResult, None]:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome, None

    monkeypatch.setattr(verdicts, "run_checked", fake)
    monkeypatch.setattr(verdicts, "unavailable", lambda fabric: None)
    bmv2 = FABRICS[1]
    seen: list[tuple[int, int]] = []
    cell = run_cell(
        "t1-down", bmv2, None, tmp_path, lambda c: seen.append((len(c.runs), len(c.failures)))
    )
    assert cell.runs == [done, done] and cell.failures == ["failed: s1 did not answer"]
    assert seen == [(1, 0), (1, 1), (2, 1)]  # the cell so far, after every run
    row = next(
        line
        for line in render({"t1-down": {"bmv2": cell}}, [bmv2]).splitlines()
        if line.startswith("| run")
    )
    assert row.count("TDF 65536") == 2 and "<br>failed: s1 did not answer |" in row


def test_a_saved_table_renders_again_without_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = Check("goodput 60 us..120 us after event 0", True, ">= 85%", "90.7%")
    done = _run("mininet", [good], tdf=65536, load_average_before=[9.5])

    def fake_cell(name: str, fabric: object, repeat: object, root: object, keep: Any) -> Cell:
        keep(Cell(runs=[done]))  # saved after each run
        assert saved.is_file()
        return Cell(runs=[done], failures=["failed: s1 did not answer"])

    monkeypatch.setattr(verdicts, "run_cell", fake_cell)
    saved, first, again = tmp_path / "v.json", tmp_path / "a.md", tmp_path / "b.md"
    assert verdicts.main(["-o", str(first), "--save", str(saved), "t1-down"]) == 0
    monkeypatch.setattr(verdicts, "run_cell", None)  # --render runs nothing
    assert verdicts.main(["-o", str(again), "--render", str(saved), "t1-down"]) == 0
    assert again.read_text() == first.read_text()
    assert "ok 90.7%" in first.read_text() and "failed: s1 did not answer" in first.read_text()
    # one fabric short (saved part-way): said, not a crash
    data = json.loads(saved.read_text())
    del data["t1-down"]["local"]
    saved.write_text(json.dumps(data))
    assert verdicts.main(["-o", str(again), "--render", str(saved)]) == 0
    text = again.read_text()
    local = text.split("## t1-down")[1].split("## ")[0].splitlines()[4].split(" | ")[3]
    assert local == verdicts.NOT_REACHED
    # every bundled scenario is in it: what the process fabric refuses says why
    assert all(f"## {name}\n" in text for name in bundled_names())
    assert "32 NICs and 96 switches" in text.split("## write-latency")[1]
    saved.write_text("{")
    with pytest.raises(SystemExit):
        verdicts.main(["-o", str(again), "--render", str(saved)])
