"""The verdict table's pure parts: cells, rendering, and its place in docs/results.md
(the runs themselves are what scripts/verdicts-doc does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testbed.scenario import verdicts
from testbed.scenario.results import Check, RunResult
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
    assert "counted at acknowledgement" in row  # the fabrics disagree: why
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
