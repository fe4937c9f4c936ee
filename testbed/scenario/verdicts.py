"""The verdict table: every bundled scenario on the virtual fabric, on Mininet with BMv2 and
on local p4emu processes (time-dilated, docs/testbed.md), assertion by assertion, with the
measured figures side by side (``scripts/verdicts-doc``; it writes docs/verdicts.md, which
docs/results.md includes).

A fabric that cannot run here (no root for Mininet, no ``simple_switch_grpc``) and a
scenario a fabric refuses (random loss, EV drops, sweeps) get a cell saying why.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testbed.exceptions import TestbedError
from testbed.scenario.exceptions import ScenarioError
from testbed.scenario.load import bundled_names, load
from testbed.scenario.model import Scenario
from testbed.scenario.process import check_supported
from testbed.scenario.results import RunResult
from testbed.scenario.resultsdoc import DEFAULT_VERDICTS
from testbed.scenario.run_options import RunOptions
from testbed.scenario.runner import run_checked
from testbed.scenario.units import format_time_ns as fmt
from testbed.scenario.virtual import Variant
from topologies import Topology

DEFAULT_OUTPUT = DEFAULT_VERDICTS


@dataclass(frozen=True)
class Column:
    """One column of the table: a fabric (mode and switch target) to run every scenario on."""

    key: str
    title: str
    mode: str
    target: str = "p4emu"


FABRICS = (
    Column("virtual", "virtual", "virtual"),
    Column("bmv2", "Mininet + BMv2", "mininet", "bmv2"),
    Column("local", "local p4emu", "local", "p4emu"),
)

# Issue #30's target: these pass their own assertions on Mininet with BMv2 in 3 runs out of
# 3, so the table runs each of them that many times there (other cells: one run).
TARGET_SCENARIOS = ("t1-down", "link-restore", "port-flap")
TARGET_RUNS = 3
# The largest fabric the table runs as processes: every NIC is a Python process (the
# NICs set the load: docs/testbed.md, "Time dilation") and every switch one more. Up to
# 16 NICs covers every bundled scenario but the 8-plane 32- and 64-NIC ones, whose 96
# switches and 32 or 64 NICs are 128 and 160 processes on 2 cores.
PROCESS_NICS_MAX = 16
NOT_REACHED = "not run: the table's run stopped before it (out of time)"
VIRTUAL_ELSEWHERE = "not compared: see docs/results.md for its virtual run"

# Why a process-fabric verdict can differ from the virtual one, by the check's name (its
# first word): what the process fabric does not model or measures differently
# (docs/testbed.md, "Where the machine's jitter shows").
WHY = {
    "trims": "the process fabric reports no trims: tc's FIFO and p4emu's queue drop at "
    "their depth instead",
    "NACKs": "no trimming on the process fabric, so no NACKs",
    "timeouts": "no trimming on the process fabric: a packet a full queue drops is found by "
    "the NIC's retransmission timeout or reorder window, not NACKed",
    "goodput": "on a loaded machine the processes, not the links, set the rate and the "
    "changes lag (see the run's load; docs/testbed.md, time dilation)",
    "traffic": "EV revivals come from the NICs' event logs; a change reaches the fabric "
    "1-10 us (dilated) after it is due",
    "repath": "a change reaches the fabric 1-10 us (dilated) after it is due",
    "completion": "the process fabric runs below line rate on a loaded machine",
    "retransmissions": "a process that is not scheduled delays its packets",
}


@dataclass
class Cell:
    """One scenario on one fabric: its runs (one per repetition) or why there are none."""

    runs: list[RunResult] = field(default_factory=list)
    refused: str | None = None
    failures: list[str] = field(default_factory=list)  # runs that did not finish: why


def unavailable(fabric: Column) -> str | None:
    """Why ``fabric`` cannot run on this machine (None: it can)."""
    if fabric.mode == "mininet" and os.geteuid() != 0:
        return "not run: Mininet needs root"
    if fabric.target == "bmv2" and shutil.which("simple_switch_grpc") is None:
        return "not run: simple_switch_grpc is not on PATH ($MRC_P4LANG_BIN)"
    return None


def too_large(topology: Topology) -> str | None:
    """Why the table does not run ``topology`` as processes (None: it does)."""
    nics, switches = len(topology.nics), topology.switch_count
    if nics <= PROCESS_NICS_MAX:
        return None
    return (
        f"not run: {nics} NICs and {switches} switches, {nics + switches} processes on "
        f"2 cores (the table runs the process fabric up to {PROCESS_NICS_MAX} NICs)"
    )


def runs_of(name: str, fabric: Column, repeat: int | None) -> int:
    """How many runs the table makes of ``name`` on ``fabric``: one on the virtual fabric
    (it is deterministic), ``repeat`` when given, else :data:`TARGET_RUNS` for the target
    scenarios on BMv2 and one."""
    if fabric.mode == "virtual":
        return 1
    if repeat is not None:
        return repeat
    return TARGET_RUNS if fabric.key == "bmv2" and name in TARGET_SCENARIOS else 1


def cells_json(cells: dict[str, dict[str, Cell]]) -> dict[str, Any]:
    """The table's runs as JSON (``--save``), so it can be rendered again (``--render``)."""
    return {
        name: {
            key: {
                "refused": cell.refused,
                "failures": cell.failures,
                "runs": [run.to_json() for run in cell.runs],
            }
            for key, cell in row.items()
        }
        for name, row in cells.items()
    }


def cells_from_json(data: dict[str, Any]) -> dict[str, dict[str, Cell]]:
    return {
        name: {
            key: Cell(
                runs=[RunResult.from_json(run) for run in cell["runs"]],
                refused=cell["refused"],
                failures=list(cell["failures"]),
            )
            for key, cell in row.items()
        }
        for name, row in data.items()
    }


def process_refusal(scenario: Scenario) -> str | None:
    """Why the table runs ``scenario`` on no process fabric (None: it does): a sweep, an
    event the process fabric cannot express (said before the size), or too many NICs."""
    if scenario.sweep is not None:
        return "refused: sweeps run on the virtual fabric only"
    try:
        check_supported(scenario)
    except ScenarioError as exc:
        return f"refused: {exc}".replace("|", "/")
    return too_large(scenario.topology)


def unreached(name: str, fabric: Column) -> Cell:
    """The cell of a table saved part-way that its run did not reach: what is refused
    without running (it costs nothing) is said, the rest is marked as not run."""
    return refused_cell(load(name), fabric) or Cell(refused=NOT_REACHED)


def refused_cell(scenario: Scenario, fabric: Column) -> Cell | None:
    """The cell of a scenario ``fabric`` does not run here, saying why (None: it runs)."""
    why = unavailable(fabric)
    if why is not None:
        return Cell(refused=why)
    refusal = process_refusal(scenario)
    if refusal is not None:
        return Cell(refused=refusal if fabric.mode != "virtual" else VIRTUAL_ELSEWHERE)
    return None


def _open_fds() -> str:
    """The process's open descriptors, for the progress line (a leak across many process
    fabrics in one run shows here first)."""
    try:
        return f" ({len(os.listdir('/proc/self/fd'))} open descriptors)"
    except OSError:
        return ""


def run_cell(
    name: str,
    fabric: Column,
    repeat: int | None,
    root: Path,
    progress: Callable[[Cell], None] | None = None,
) -> Cell:
    """``name`` on ``fabric``: its runs, or why there are none. A scenario no process
    fabric runs is not run on the virtual fabric either (nothing to compare with: its
    virtual run is in docs/results.md)."""
    scenario = load(name)
    refused = refused_cell(scenario, fabric)
    if refused is not None:
        return refused
    runs: list[RunResult] = []
    failures: list[str] = []
    for _ in range(runs_of(name, fabric, repeat)):
        options = RunOptions(mode=fabric.mode, target=fabric.target, run_dir=root)
        try:
            run, _ = run_checked(scenario, Variant(), options)
        except ScenarioError as exc:
            failures.append(f"refused: {exc}".replace("|", "/").splitlines()[0])
        except TestbedError as exc:  # the fabric did not come up or broke: say so, go on
            failures.append(f"failed: {exc}".replace("|", "/").splitlines()[0])
        else:
            runs.append(run)
        if progress is not None:  # the cell so far, after every run
            progress(Cell(runs=list(runs), failures=list(failures)))
    return Cell(runs=runs, failures=failures)


def _measured(run: RunResult, check: str) -> str:
    for c in run.checks:
        if c.name == check:
            return f"{'**FAIL**' if c.verdict == 'FAIL' else c.verdict} {c.measured}"
    return "-"


def worst_repath(run: RunResult) -> int | None:
    """The longest repath measured in ``run`` (dilated ns on the process fabric)."""
    return max((v for e in run.events for v in e.repath_ns if v is not None), default=None)


def _headline(run: RunResult, virtual: RunResult | None) -> str:
    worst = worst_repath(run)
    reference = worst_repath(virtual) if virtual is not None and virtual is not run else None
    done = run.completion_ns()
    parts = [
        "done " + (fmt(done) if done is not None else "no"),
        "no repath"
        if worst is None
        else f"repath max {fmt(worst)}"
        + (f" ({worst / reference:.2f}x virtual)" if reference else ""),
    ]
    if run.fabric.get("clock") == "wall":
        load_avg = (run.fabric.get("load_average_before") or ["?"])[0]
        parts.append(f"TDF {run.fabric.get('tdf')}, load {load_avg}")
    return "; ".join(parts)


def render(cells: dict[str, dict[str, Cell]], fabrics: Sequence[Column]) -> str:
    targets = ", ".join(f"`{n}`" for n in TARGET_SCENARIOS)
    intro = (
        "Generated by `scripts/verdicts-doc` (do not edit by hand): every bundled scenario "
        "with its own assertions on the virtual fabric and, time-dilated (docs/testbed.md, "
        '"Time dilation"), on Mininet with BMv2 and on local p4emu processes. Process-fabric '
        "figures are in dilated units (wall clock / TDF), one line per run, each with its "
        f"machine load. By default {targets} are run {TARGET_RUNS} times on BMv2 (issue #30's "
        f"target: their own assertions in {TARGET_RUNS} runs out of {TARGET_RUNS}), the "
        "others once (`--repeat N`: N times each). "
        f"The process fabric is run up to {PROCESS_NICS_MAX} NICs (a process per NIC and per "
        'switch, on 2 cores). A claim the scenario marks as not reproduced reads "not '
        'reproduced" where it fails. A scenario no process fabric runs says why, and is not '
        "run on the virtual fabric here either (docs/results.md has it). Where the fabrics "
        "disagree, the last column says why."
    )
    lines = [
        "# Verdicts: the virtual fabric beside the process fabrics",
        "",
        *textwrap.wrap(intro, width=88, break_on_hyphens=False),
        "",
    ]
    for name, row in cells.items():
        lines += [f"## {name}", ""]
        header = "| | " + " | ".join(f.title for f in fabrics) + " | why they differ |"
        lines += [header, "|---" * (len(fabrics) + 2) + "|"]
        virtual = row["virtual"].runs[0] if "virtual" in row and row["virtual"].runs else None
        lines.append(
            "| run | "
            + " | ".join(
                row[f.key].refused
                or "<br>".join(
                    [_headline(r, virtual) for r in row[f.key].runs] + row[f.key].failures
                )
                for f in fabrics
            )
            + " | |"
        )
        names: list[str] = []
        for f in fabrics:
            for run in row[f.key].runs:
                names += [c.name for c in run.checks if c.name not in names]
        for check in names:
            verdicts = {
                f.key: [
                    next((c.ok for c in r.checks if c.name == check), None) for r in row[f.key].runs
                ]
                for f in fabrics
            }
            seen = {v for vs in verdicts.values() for v in vs if v is not None}
            why = WHY.get(check.split()[0], "") if len(seen) > 1 else ""
            lines.append(
                f"| {check} | "
                + " | ".join(
                    "<br>".join(_measured(r, check) for r in row[f.key].runs) or "-"
                    for f in fabrics
                )
                + f" | {why} |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="verdicts-doc",
        description="Regenerate docs/verdicts.md: every bundled scenario on every fabric.",
    )
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument(
        "--repeat",
        type=int,
        help=f"runs per process fabric (default: {TARGET_RUNS} of "
        f"{', '.join(TARGET_SCENARIOS)} on BMv2, 1 otherwise)",
    )
    parser.add_argument(
        "--fabrics",
        default=",".join(f.key for f in FABRICS),
        help="columns (default: " + ",".join(f.key for f in FABRICS) + ")",
    )
    parser.add_argument(
        "--save", type=Path, help="also write every run's result as JSON to this file"
    )
    parser.add_argument(
        "--render",
        type=Path,
        metavar="JSON",
        help="run nothing: render the table again from a file --save wrote",
    )
    parser.add_argument("names", nargs="*", help="only these scenarios (default: all)")
    args = parser.parse_args(argv)
    known = {f.key: f for f in FABRICS}
    keys = [k for k in args.fabrics.split(",") if k]
    bad = [k for k in keys if k not in known]
    if bad or (args.repeat is not None and args.repeat < 1):
        parser.error(
            f"unknown fabric {bad[0]!r} (known: {', '.join(known)})"
            if bad
            else "--repeat must be at least 1"
        )
    fabrics = [known[k] for k in keys]
    cells: dict[str, dict[str, Cell]] = {}
    if args.render is not None:
        try:
            cells = cells_from_json(json.loads(args.render.read_text("utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            parser.error(f"--render {args.render}: not a table --save wrote ({exc})")
        for name in args.names or bundled_names():  # saved part-way: what it did not reach
            row = cells.setdefault(name, {})
            for fabric in fabrics:
                if fabric.key not in row:
                    row[fabric.key] = unreached(name, fabric)
        args.output.write_text(render(cells, fabrics) + "\n", "utf-8")
        print(f"wrote {args.output}")
        return 0
    with tempfile.TemporaryDirectory(prefix="mrv-", dir="/tmp") as root:  # short socket paths
        for name in args.names or bundled_names():
            cells[name] = {}
            for fabric in fabrics:
                print(f"... {name} on {fabric.title}{_open_fds()}", file=sys.stderr, flush=True)

                def keep(cell: Cell, name: str = name, key: str = fabric.key) -> None:
                    cells[name][key] = cell
                    if args.save is not None:  # after every run: a stop keeps what ran
                        args.save.write_text(json.dumps(cells_json(cells)), "utf-8")

                keep(run_cell(name, fabric, args.repeat, Path(root), keep))
    args.output.write_text(render(cells, fabrics) + "\n", "utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
