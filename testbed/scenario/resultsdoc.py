"""Runs every bundled scenario on the virtual fabric and writes docs/results.md: the
paper's statement beside our measured figures (``scripts/results-doc``).

``summarise`` is also what ``benchmarks/failover.py`` reports per scenario.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from testbed.scenario.checks import completion_ratio
from testbed.scenario.exceptions import ScenarioFileError
from testbed.scenario.load import BUNDLE_PACKAGE, bundled_names, load
from testbed.scenario.model import Scenario
from testbed.scenario.results import RunResult
from testbed.scenario.run_options import RunOptions
from testbed.scenario.runner import (
    control_caught,
    control_variant,
    execute,
    run_checked,
    run_sweep,
)
from testbed.scenario.seedruns import run_seeds
from testbed.scenario.seeds import (
    BUNDLED_SEEDS,
    HEAVY_NICS,
    HEAVY_SEEDS,
    default_jobs,
    format_value,
    is_heavy,
    parse_seeds,
)
from testbed.scenario.units import format_time_ns as fmt
from testbed.scenario.virtual import Variant
from topologies import yamlfile

DEFAULT_OUTPUT = Path("docs/results.md")
DEFAULT_VERDICTS = Path("docs/verdicts.md")  # scripts/verdicts-doc; included when present
JSON_NAME = "results.json"  # every summary, beside the page: --keep re-renders from it


def scenario_sha256(name: str) -> str:
    """The scenario file's text, hashed: a kept summary is refused once its file changed."""
    found = yamlfile.locate(name, BUNDLE_PACKAGE, "scenario", ScenarioFileError)
    return hashlib.sha256(found.text.encode()).hexdigest()


def compared(scenario: Scenario) -> bool:
    a = scenario.assertions
    return (
        scenario.roce is not None or a.roce_slower_by is not None or a.roce_goodput_min is not None
    )


def summarise(
    name: str,
    options: RunOptions | None = None,
    *,
    controls: bool = True,
    seeds: Sequence[int] | None = None,
    jobs: int = 1,
) -> dict[str, Any]:
    """One scenario: its checks over ``seeds`` (default: the file's seed) as distributions,
    its controls on the first seed (unless ``controls`` is false), RoCE where it says
    something about RoCE, and the figures benchmarks/failover.py prints (first seed)."""
    options = options or RunOptions()
    scenario = load(name)
    seeds = list(seeds) if seeds is not None else [scenario.seed]
    started = time.perf_counter()
    out: dict[str, Any] = {
        "scenario": name,
        "paper": scenario.paper,
        "expected": scenario.expected,
        "not_reproduced": dict(scenario.not_reproduced),
        "seeds": seeds,
        "scenario_sha256": scenario_sha256(name),
    }
    first = replace(options, seed=seeds[0])
    if scenario.sweep is not None:
        cases = run_sweep(scenario, first)
        failures = [
            t.failed_at_ns
            for case, run in cases
            if not case.path_left
            for t in run.transfers
            if t.failed_at_ns is not None
        ]
        out.update(
            ok=all(run.ok for _, run in cases),
            seeds=seeds[:1],
            cases=len(cases),
            cases_with_path=sum(1 for case, _ in cases if case.path_left),
            cases_ok=sum(1 for _, run in cases if run.ok),
            failure_ns=[min(failures), max(failures)] if failures else None,
            checks=[],
        )
    else:
        sweep = run_seeds(name, seeds, options, jobs, compared=compared(scenario))
        head = sweep.runs[0]
        if head.roce is not None:
            out["mrc_roce_completion_ratio"] = completion_ratio(head.mrc, head.roce)
            out["roce_completion_ns"] = head.roce.completion_ns()
        out.update(_figures(scenario, head.mrc, first))
        out["checks"] = [d.to_json() for d in sweep.distributions]
        out["ok"] = sweep.ok
    out["controls"] = _controls(scenario, first) if controls else []
    out["wall_seconds"] = round(time.perf_counter() - started, 2)
    return out


def _figures(scenario: Scenario, run: RunResult, options: RunOptions) -> dict[str, Any]:
    repaths = [v for e in run.events for v in e.repath_ns if v is not None]
    baseline = execute(scenario, Variant(name="baseline", timeline=()), options)
    kept = None
    mine, ref = run.completion_ns(), baseline.completion_ns()
    if mine and ref:
        kept = ref / mine  # same bytes: goodput ratio = inverse completion-time ratio
    return {
        "completion_ns": mine,
        "baseline_completion_ns": ref,
        "goodput_fraction_kept": kept,
        "repath_ns_max": max(repaths) if repaths else None,
        "repaths_measured": len(repaths),
        "retransmitted_bytes": run.retransmitted_bytes(),
        "event_log_sha256": run.event_log_sha256,
        "virtual_wall_seconds": round(run.wall_seconds, 2),
        "mrc_vs_baseline_ratio": completion_ratio(baseline, run),
    }


def _controls(scenario: Scenario, options: RunOptions) -> list[dict[str, Any]]:
    if scenario.sweep is not None:
        from testbed.scenario.runner import sweep_assertions, sweep_cases

        no_path = [c for c in sweep_cases(scenario) if not c.path_left]
        out = []
        for control in scenario.negative_controls:
            variant = control_variant(control)
            caught = sum(
                not run_checked(
                    scenario,
                    replace(variant, timeline=case.timeline),
                    options,
                    assertions=sweep_assertions(scenario, case),
                )[0].ok
                for case in no_path
            )
            out.append(
                {
                    "name": control.name,
                    "description": control.description,
                    "caught": caught > 0,
                    "detail": f"fails {caught} of the {len(no_path)} no-path cases",
                }
            )
        return out
    out = []
    for control in scenario.negative_controls:
        run = run_checked(scenario, control_variant(control), options)[0]
        caught, detail = control_caught(control, run)
        out.append(
            {
                "name": control.name,
                "description": control.description,
                "caught_by": list(control.caught_by),
                "caught": caught,
                "detail": detail,
            }
        )
    return out


# ------------------------------------------------------------------ the document


def verdicts_section(text: str) -> list[str]:
    """docs/verdicts.md (``scripts/verdicts-doc``) as the last section of results.md: its
    headings one level down."""
    return ["#" + line if line.startswith("#") else line for line in text.rstrip("\n").splitlines()]


def render(summaries: list[dict[str, Any]], verdicts: str | None = None) -> str:
    sets = sorted({tuple(s.get("seeds", [])) for s in summaries}, key=len, reverse=True)
    seed_text = "; ".join(
        _seed_text(list(seeds))
        + " ("
        + ", ".join(s["scenario"] for s in summaries if tuple(s.get("seeds", [])) == seeds)
        + ")"
        if len(sets) > 1
        else _seed_text(list(seeds))
        for seeds in sets
    )
    lines = [
        "# Results: the MRC paper's experiments on the virtual fabric",
        "",
        "Generated by `scripts/results-doc` (do not edit by hand): every bundled scenario",
        "(`scenarios/*.yaml`, format in [scenarios.md](scenarios.md)) run on the virtual-time",
        "fabric (the P4 program in p4emu, the emulated MRC NICs, virtual nanoseconds) on seeds "
        + seed_text
        + ".",
        "The paper is the MRC white paper's section 5 (see docs/sources.md). Every assertion",
        "states the paper's claim (or, beyond the paper, the design's); where the model does",
        "not reach a claim, the scenario marks it *not reproduced*, with what we measured and",
        "why, and the claim is shown so here. Every figure is deterministic for its seed: the",
        "same command gives the same numbers on any machine.",
        "",
        "| scenario | the paper says | claims | worst over the seeds |",
        "|---|---|---|---|",
    ]
    for s in summaries:
        lines.append(
            f"| [{s['scenario']}](#{s['scenario']}) | {s['paper'] or '(beyond the paper)'} | "
            f"{_verdict(s)} | {_headline(s)} |"
        )
    lines.append("")
    for s in summaries:
        scenario = load(s["scenario"])
        lines += [
            f"## {s['scenario']}",
            "",
            scenario.description[0].upper() + scenario.description[1:] + ".",
            "",
            f"- Paper: {scenario.paper or '(beyond the paper)'}",
            f"- Scaled down: {scenario.scale or '-'}",
        ]
        if scenario.notes:
            lines.append(f"- Notes: {scenario.notes}")
        marks = s.get("not_reproduced", {})
        lines.append(
            f"- Expected: {s.get('expected', 'reproduced')}"
            + (f" ({len(marks)} claim(s) marked)" if marks else "")
        )
        for path, note in marks.items():
            lines.append(f"- Not reproduced (`{path}`): {note}")
        if s["checks"]:
            lines += [
                "",
                f"Assertions (`tests/failover`) over seeds {_seed_text(s.get('seeds', []))}:",
                "",
                "| assertion | expected | median | worst | passes | verdict |",
                "|---|---|---|---|---|---|",
            ]
            for c in s["checks"]:
                lines.append(
                    f"| {c['name']} | {c['expected']} | {_figure(c, 'median')} | "
                    f"{_worst(c)} | {c['passes']}/{len(c['ok'])} | {_check_verdict(c)} |"
                )
            lines.append("")
        if "cases" in s:
            lines.append(
                f"- {s['cases_ok']} of {s['cases']} cases pass ({s['cases_with_path']} leave a "
                "path and deliver byte-exact; the others fail with a reason"
                + (
                    f", after {fmt(s['failure_ns'][0])} to {fmt(s['failure_ns'][1])})"
                    if s.get("failure_ns")
                    else ")"
                )
            )
        lines.append("- Negative controls (each must fail the assertion it names):")
        for c in s["controls"]:
            by = f" by {', '.join(c['caught_by'])}" if c.get("caught_by") else ""
            lines.append(
                f"  - {c['name']} ({c['description']}): "
                + (f"caught{by}" if c["caught"] else f"NOT CAUGHT{by}")
                + (f": {c['detail']}" if c["detail"] else "")
            )
        lines.append("")
    if verdicts:
        lines += verdicts_section(verdicts)
    return "\n".join(lines)


def _seed_text(seeds: Sequence[int]) -> str:
    if not seeds:
        return "(none)"
    if list(seeds) == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def _figure(c: dict[str, Any], key: str) -> str:
    value = c.get(key)
    return "-" if value is None else format_value(value, c.get("unit", ""))


def _worst(c: dict[str, Any]) -> str:
    if c.get("worst") is None:
        values = [v for v in c.get("values", []) if v is not None]
        if values and len(values) == len(c.get("values", [])) and not c.get("worse"):
            unit = c.get("unit", "")
            return f"{format_value(min(values), unit)} .. {format_value(max(values), unit)}"
        return "-"
    return _figure(c, "worst")


def _check_verdict(c: dict[str, Any]) -> str:
    held = c["passes"] == len(c["ok"])
    if c.get("not_reproduced") is not None:
        return "holds (marked not reproduced)" if held else "**not reproduced**"
    return "holds" if held else "**FAILS**"


def _verdict(s: dict[str, Any]) -> str:
    if not s["ok"]:
        return "**FAIL**"
    if "cases" in s:
        return "hold"
    unmet = [c for c in s["checks"] if c.get("not_reproduced") and c["passes"] < len(c["ok"])]
    if unmet:
        return f"{len(unmet)} not reproduced, the others hold"
    return "hold"


def _headline(s: dict[str, Any]) -> str:
    """Every check's worst figure over the seeds but byte-exact delivery (the claims column
    covers it), and RoCE's completion time against MRC's (first seed)."""
    if "cases" in s:
        return f"{s['cases_ok']} of {s['cases']} pair-failure cases as expected"
    parts = []
    for c in s["checks"]:
        if c["name"] == "byte-exact delivery" or c.get("unit") in (None, ""):
            continue
        mark = " (not reproduced)" if c.get("not_reproduced") and c["passes"] < len(c["ok"]) else ""
        parts.append(f"{c['name'].split(' (')[0]}: {_worst(c)}{mark}")
    ratio = s.get("mrc_roce_completion_ratio")
    if ratio is not None:
        parts.append(
            "RoCE did not complete" if ratio == float("inf") else f"RoCE took {ratio:.1f}x as long"
        )
    return "; ".join(parts) or "-"


def kept_summaries(path: Path, names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The summaries of ``path`` (a results.json) for ``names``; an error names any that is
    missing or whose scenario file changed since it ran (re-run it by name)."""
    try:
        data = json.loads(path.read_text("utf-8"))
        saved = data["scenarios"]
        if not isinstance(saved, dict):
            raise TypeError("'scenarios' is not a mapping")
    except FileNotFoundError:
        raise SystemExit(
            f"results-doc: --keep: {path} does not exist; run without --keep"
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"results-doc: --keep: {path} is not a results.json ({exc})") from None
    out, stale = {}, []
    for name in names:
        summary = saved.get(name)
        if not isinstance(summary, dict) or summary.get("scenario_sha256") != scenario_sha256(name):
            stale.append(name)
        else:
            out[name] = summary
    if stale:
        raise SystemExit(
            f"results-doc: --keep: no current summary in {path} for {', '.join(stale)} "
            "(missing, or the scenario file changed since): name them to re-run them"
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="results-doc",
        description="Regenerate docs/results.md (and results.json beside it) from the bundled "
        "scenarios.",
    )
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument(
        "--seeds",
        default=f"{BUNDLED_SEEDS[0]}-{BUNDLED_SEEDS[-1]}",
        help="seeds of every scenario but the heavy ones (default: the seeds the bundled "
        "assertions hold on)",
    )
    parser.add_argument(
        "--heavy-seeds",
        default=f"{HEAVY_SEEDS[0]}-{HEAVY_SEEDS[-1]}",
        help=f"seeds of the scenarios on more than {HEAVY_NICS} NICs (minutes per run)",
    )
    parser.add_argument("--jobs", type=int, default=None, help="processes (default: cores)")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="run only the named scenarios; take every other one from results.json beside "
        "the output (refused where its scenario file changed since)",
    )
    parser.add_argument("names", nargs="*", help="only these scenarios (default: all)")
    args = parser.parse_args(argv)
    seeds = parse_seeds(args.seeds)
    heavy_seeds = parse_seeds(args.heavy_seeds)
    everything = bundled_names()
    unknown = sorted(set(args.names) - set(everything))
    if unknown:
        parser.error(f"not bundled scenarios: {', '.join(unknown)}")
    json_path = args.output.with_name(JSON_NAME)
    kept = (
        kept_summaries(json_path, [n for n in everything if n not in args.names])
        if args.keep
        else {}
    )
    fresh: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()
    for name in args.names or ([] if args.keep else everything):
        mine = heavy_seeds if is_heavy(load(name)) else seeds
        jobs = args.jobs or default_jobs(len(mine), RunOptions())
        print(f"... {name}: seeds {_seed_text(mine)}", file=sys.stderr, flush=True)
        fresh[name] = summarise(name, seeds=mine, jobs=jobs)
        print(
            f"    {fresh[name]['wall_seconds']:.0f} s ({time.perf_counter() - started:.0f} s "
            "in all)",
            file=sys.stderr,
            flush=True,
        )
    by_name = kept | fresh
    summaries = [by_name[n] for n in everything if n in by_name]
    verdicts = args.output.parent / DEFAULT_VERDICTS.name
    text = verdicts.read_text("utf-8") if verdicts.is_file() else None
    args.output.write_text(render(summaries, text) + "\n", "utf-8")
    json_path.write_text(
        json.dumps({"scenarios": by_name}, indent=1, sort_keys=True) + "\n", "utf-8"
    )
    print(f"wrote {args.output} and {json_path} in {time.perf_counter() - started:.0f} s")
    return 0 if all(s["ok"] for s in summaries) else 1


if __name__ == "__main__":
    sys.exit(main())
