"""``mrc-testbed run`` and ``mrc-testbed compare`` (registered by testbed/cli.py).

::

    mrc-testbed run SCENARIO [--mode virtual|local|mininet] [--target p4emu|bmv2] [--tdf N]
                    [--seed N | --seeds 1-16 [--jobs N]] [-o DIR] [--controls]
    mrc-testbed compare SCENARIO [--mode ...] [--tdf N] [--seed N | --seeds 1-16 [--jobs N]]
                    [-o DIR]

SCENARIO is a bundled name (``mrc-testbed run --list``) or a YAML file. Results go to
``DIR/<scenario>/`` (DIR defaults to ``results`` in the current directory). The exit
status is 0 when every assertion holds (claims the scenario marks ``not_reproduced`` may
fail), 1 otherwise. ``--seeds`` runs every seed (in parallel processes) and reports each
assertion as median / worst / passes over them (:mod:`testbed.scenario.seeds`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from testbed.modes import names as mode_names
from testbed.scenario.run_options import NIC_FRAMES_PER_S, RunOptions
from testbed.scenario.units import format_time_ns as fmt

if TYPE_CHECKING:  # the run machinery (vfabric, p4emu) loads only when a command runs
    from testbed.scenario.results import Check, RunResult

DEFAULT_RESULTS_ROOT = Path("results")


def register(sub: Any, common: argparse.ArgumentParser) -> dict[str, Callable[..., int]]:
    """Adds ``run`` and ``compare`` to the ``mrc-testbed`` parser; returns their handlers."""
    for name, what in (
        ("run", "run a failover scenario and check its assertions (docs/scenarios.md)"),
        ("compare", "run a scenario with MRC and with RoCE and write report.md"),
    ):
        parser = sub.add_parser(name, parents=[common], help=what)
        parser.add_argument(
            "scenario",
            metavar="SCENARIO",
            nargs="?" if name == "run" else None,
            help="bundled scenario name or YAML file",
        )
        parser.add_argument("--mode", choices=mode_names(), default="virtual")
        parser.add_argument(
            "--target",
            choices=("p4emu", "bmv2"),
            default="p4emu",
            help="mininet mode: the switch program (bmv2: simple_switch_grpc)",
        )
        parser.add_argument(
            "--tdf",
            type=_tdf,
            metavar="N",
            help="process fabric: time-dilation factor, a power of two (default: the "
            "smallest that slows the busiest NIC to "
            + ", ".join(f"{n} frames/s ({m}/{t})" for (m, t), n in NIC_FRAMES_PER_S.items())
            + "; docs/testbed.md)",
        )
        seeds = parser.add_mutually_exclusive_group()
        seeds.add_argument("--seed", type=int, help="override the scenario's seed")
        seeds.add_argument(
            "--seeds",
            metavar="SEEDS",
            help="run every seed of SEEDS (1-16, 1,3,5) and report each assertion over them",
        )
        parser.add_argument(
            "--jobs",
            type=int,
            metavar="N",
            help="--seeds: processes in parallel (default: one per core; 1 off the virtual fabric)",
        )
        parser.add_argument(
            "-o",
            "--output",
            type=Path,
            default=DEFAULT_RESULTS_ROOT,
            metavar="DIR",
            help="results root; the run writes DIR/<scenario>/ (default ./results)",
        )
        parser.add_argument("--json", action="store_true", help="print the result JSON")
        if name == "run":
            parser.add_argument(
                "--controls",
                action="store_true",
                help="also run the negative controls (each must fail the assertions)",
            )
            parser.add_argument("--list", action="store_true", help="list bundled scenarios")
    return {"run": cmd_run, "compare": cmd_compare}


def _options(args: argparse.Namespace) -> RunOptions:
    return RunOptions(
        mode=args.mode,
        seed=args.seed,
        progress=True,
        run_dir=args.run_dir,
        target=args.target,
        tdf=args.tdf,
    )


def _tdf(text: str) -> int:
    """``--tdf``: checked by the NICs' own rule while the command line is parsed, so a bad
    factor is a bad invocation (exit 2, docs/exit-codes.md) before anything starts."""
    from nic_emu.exceptions import ConfigError
    from nic_emu.serve_config import check_tdf

    try:
        return check_tdf(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _check_lines(checks: list[Check], indent: str = "  ") -> list[str]:
    lines = []
    for c in checks:
        verdict = {"ok": "ok  ", "FAIL": "FAIL"}.get(c.verdict, c.verdict.upper())
        lines.append(f"{indent}{verdict} {c.name}: {c.measured} (expected {c.expected})")
        if c.not_reproduced is not None:
            lines.append(f"{indent}     marked not reproduced: {c.not_reproduced}")
    return lines


def clock_name(run: RunResult) -> str:
    """What a run's times are: ``virtual``, or ``dilated (TDF N, wall clock / N)``."""
    if run.fabric.get("clock") == "wall":
        return f"dilated (wall clock / TDF {run.fabric.get('tdf')})"
    return "virtual"


def summary_lines(run: RunResult) -> list[str]:
    done = run.completion_ns()
    total = sum(t.nbytes for t in run.transfers)
    verified = sum(t.bytes_verified for t in run.transfers)
    unmet = sum(1 for c in run.checks if not c.ok and c.not_reproduced is not None)
    lines = [
        f"{run.scenario} [{run.variant}, {run.mode}, seed {run.seed}]: "
        + ("PASS" if run.ok else "FAIL")
        + (f" ({unmet} claim(s) of the paper not reproduced, as marked)" if unmet else ""),
        f"  {len(run.transfers)} transfer(s), {verified:,} of {total:,} bytes verified; "
        + (f"done at {fmt(done)} {clock_name(run)}" if done is not None else "not all completed")
        + f" ({run.wall_seconds:.1f} s wall)",
    ]
    if run.fabric.get("clock") == "wall":
        before = run.fabric.get("load_average_before") or ["?"]
        after = run.fabric.get("load_average_after") or ["?"]
        lines.append(
            f"  ran on: {run.mode}, {run.fabric.get('target_version')}, TDF "
            f"{run.fabric.get('tdf')}; load average {before[0]} before, {after[0]} after"
        )
    for event in run.events:
        repaths = [v for v in event.repath_ns if v is not None]
        extra = f"; repath max {fmt(max(repaths))}" if repaths else ""
        if len(repaths) < len(event.repath_ns):
            extra += f"; {len(event.repath_ns) - len(repaths)} path(s) never left"
        lines.append(f"  {fmt(event.at_ns)}: {event.description}{extra}")
    if run.event_log_sha256:
        lines.append(f"  event-log sha256: {run.event_log_sha256}")
    if run.fabric.get("hot_path"):
        lines.append(f"  hot path: {run.fabric['hot_path']}")
    return lines + _check_lines(run.checks)


def cmd_run(args: argparse.Namespace) -> int:
    from testbed.scenario.load import bundled_names, load
    from testbed.scenario.runner import control_caught, run_checked, run_controls
    from testbed.scenario.virtual import Variant
    from testbed.scenario.write import write_run

    if args.list or args.scenario is None:
        if not args.list:
            print("mrc-testbed run: give a SCENARIO (bundled: see --list)", file=sys.stderr)
            return 2
        for name in bundled_names():
            scenario = load(name)
            print(f"{name:24} {scenario.description}")
        return 0
    scenario = load(args.scenario)
    options = _options(args)
    out_dir = args.output / scenario.name
    if scenario.sweep is not None:
        if args.seeds is not None:
            print(
                f"mrc-testbed run: {scenario.name} is a sweep (one run per failure set): "
                "give --seed, not --seeds",
                file=sys.stderr,
            )
            return 2
        return _run_sweep(scenario, options, out_dir, args.json)
    if args.seeds is not None:
        return _over_seeds(args, scenario, options, out_dir, compared=False)
    run, _ = run_checked(scenario, Variant(), options, out_dir=out_dir)
    write_run(scenario, run, out_dir)
    ok = run.ok
    if args.json:
        print(json.dumps(run.to_json(), indent=1))
    else:
        for line in summary_lines(run):
            print(line)
        print(f"  results: {out_dir}/")
    if args.controls:
        for control, control_run in run_controls(scenario, options):
            caught, how = control_caught(control, control_run)
            ok = ok and caught
            by = f" by {', '.join(control.caught_by)}" if control.caught_by else ""
            print(
                f"negative control {control.name} ({control.description}): "
                + (f"caught{by}" if caught else f"NOT CAUGHT{by}: {how}")
            )
            for line in _check_lines([c for c in control_run.checks if not c.ok], "    "):
                print(line)
    return 0 if ok else 1


def _run_sweep(scenario: Any, options: RunOptions, out_dir: Path, as_json: bool) -> int:
    from testbed.scenario.runner import run_sweep

    def say(text: str) -> None:
        if not as_json:
            print(f"... {text}", file=sys.stderr, flush=True)

    options.progress = False
    cases = run_sweep(scenario, options, say)
    data = {
        "scenario": scenario.name,
        "ok": all(run.ok for _, run in cases),
        "cases": [
            {
                "case": case.name,
                "path_left": case.path_left,
                "ok": run.ok,
                "completion_ns": run.completion_ns(),
                "failures": [t.failure for t in run.transfers if t.failure],
                "checks": [vars(c) for c in run.checks],
            }
            for case, run in cases
        ],
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "result.json").write_text(json.dumps(data, indent=1) + "\n", "utf-8")
    if as_json:
        print(json.dumps(data, indent=1))
    else:
        passed = sum(1 for _, run in cases if run.ok)
        left = sum(1 for case, _ in cases if case.path_left)
        print(
            f"{scenario.name}: {passed} of {len(cases)} cases pass ({left} leave a path, "
            f"{len(cases) - left} leave none)"
        )
        for case, run in cases:
            if not run.ok:
                print(f"  FAIL {case.name}")
                for line in _check_lines([c for c in run.checks if not c.ok], "    "):
                    print(line)
        print(f"  results: {out_dir}/")
    return 0 if data["ok"] else 1


def _over_seeds(
    args: argparse.Namespace, scenario: Any, options: RunOptions, out_dir: Path, *, compared: bool
) -> int:
    """``--seeds``: every seed's run (or comparison), then each check over the seeds."""
    from testbed.scenario.seedruns import run_seeds, write_seeds
    from testbed.scenario.seeds import default_jobs, parse_seeds

    seeds = parse_seeds(args.seeds)
    jobs = args.jobs if args.jobs is not None else default_jobs(len(seeds), options)
    if jobs < 1:
        print("mrc-testbed: --jobs must be 1 or more", file=sys.stderr)
        return 2
    if not args.json:
        print(
            f"{scenario.name}: {len(seeds)} seed(s) in {jobs} process(es)",
            file=sys.stderr,
            flush=True,
        )
    sweep = run_seeds(args.scenario, seeds, options, jobs, compared=compared)
    data = write_seeds(scenario, sweep, out_dir)
    if args.json:
        print(json.dumps(data, indent=1))
        return 0 if sweep.ok else 1
    for seed, line in sweep.seed_lines():
        print(f"  seed {seed}: {line}")
    for d in sweep.distributions:
        verdict = (
            "ok  "
            if d.passes == len(d.oks)
            else "NOT REPRODUCED"
            if d.not_reproduced is not None
            else "FAIL"
        )
        print(f"  {verdict} {d.name}: {d.summary()} (expected {d.expected})")
        if d.not_reproduced is not None:
            print(f"       marked not reproduced: {d.not_reproduced}")
    print(f"{scenario.name} over seeds {args.seeds}: " + ("PASS" if sweep.ok else "FAIL"))
    print(f"  results: {out_dir}/")
    return 0 if sweep.ok else 1


def cmd_compare(args: argparse.Namespace) -> int:
    from testbed.scenario.load import load
    from testbed.scenario.runner import compare
    from testbed.scenario.write import write_comparison

    scenario = load(args.scenario)
    out_dir = args.output / scenario.name
    if args.seeds is not None:
        return _over_seeds(args, scenario, _options(args), out_dir, compared=True)
    comparison = compare(scenario, _options(args), out_dir)
    report = write_comparison(comparison, out_dir)
    if args.json:
        print((out_dir / "compare.json").read_text("utf-8"))
    else:
        for run in (comparison.mrc, comparison.roce):
            for line in summary_lines(run):
                print(line)
        ratio = comparison.completion_ratio
        if ratio is not None:
            print(
                "RoCE / MRC completion time: "
                + ("RoCE did not complete" if ratio == float("inf") else f"{ratio:.2f}")
            )
        for line in _check_lines(comparison.checks):
            print(line)
        print(f"report: {report}")
    return 0 if comparison.ok else 1
