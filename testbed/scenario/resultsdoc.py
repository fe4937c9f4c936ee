"""Runs every bundled scenario on the virtual fabric and writes docs/results.md: the
paper's statement beside our measured figures (``scripts/results-doc``).

``summarise`` is also what ``benchmarks/failover.py`` reports per scenario.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from testbed.scenario.checks import completion_ratio
from testbed.scenario.load import bundled_names, load
from testbed.scenario.model import Scenario
from testbed.scenario.results import Check, RunResult
from testbed.scenario.run_options import RunOptions
from testbed.scenario.runner import (
    compare,
    control_variant,
    execute,
    run_checked,
    run_sweep,
)
from testbed.scenario.units import format_time_ns as fmt
from testbed.scenario.virtual import Variant

DEFAULT_OUTPUT = Path("docs/results.md")
DEFAULT_VERDICTS = Path("docs/verdicts.md")  # scripts/verdicts-doc; included when present


def compared(scenario: Scenario) -> bool:
    a = scenario.assertions
    return (
        scenario.roce is not None or a.roce_slower_by is not None or a.roce_goodput_min is not None
    )


def summarise(
    name: str, options: RunOptions | None = None, *, controls: bool = True
) -> dict[str, Any]:
    """One scenario: its checks, its controls (unless ``controls`` is false), RoCE where it
    says something about RoCE, and the figures benchmarks/failover.py prints."""
    options = options or RunOptions()
    scenario = load(name)
    started = time.perf_counter()
    out: dict[str, Any] = {"scenario": name, "paper": scenario.paper}
    if scenario.sweep is not None:
        cases = run_sweep(scenario, options)
        failures = [
            t.failed_at_ns
            for case, run in cases
            if not case.path_left
            for t in run.transfers
            if t.failed_at_ns is not None
        ]
        out.update(
            ok=all(run.ok for _, run in cases),
            cases=len(cases),
            cases_with_path=sum(1 for case, _ in cases if case.path_left),
            cases_ok=sum(1 for _, run in cases if run.ok),
            failure_ns=[min(failures), max(failures)] if failures else None,
            checks=[],
        )
    else:
        if compared(scenario):
            comparison = compare(scenario, options)
            run = comparison.mrc
            out["roce_checks"] = _checks(comparison.roce.checks + comparison.checks)
            out["mrc_roce_completion_ratio"] = comparison.completion_ratio
            out["roce_completion_ns"] = comparison.roce.completion_ns()
        else:
            run = run_checked(scenario, Variant(), options)[0]
        out.update(_figures(scenario, run, options))
        out["checks"] = _checks(run.checks)
        out["ok"] = run.ok and all(c["ok"] for c in out.get("roce_checks", []))
    out["controls"] = _controls(scenario, options) if controls else []
    out["wall_seconds"] = round(time.perf_counter() - started, 2)
    return out


def _checks(checks: Sequence[Check]) -> list[dict[str, Any]]:
    return [
        {"name": c.name, "ok": c.ok, "measured": c.measured, "expected": c.expected} for c in checks
    ]


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
        from dataclasses import replace

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
        failed = [c for c in run.checks if not c.ok]
        out.append(
            {
                "name": control.name,
                "description": control.description,
                "caught": bool(failed),
                "detail": "; ".join(f"{c.name}: {c.measured}" for c in failed),
            }
        )
    return out


# ------------------------------------------------------------------ the document


def verdicts_section(text: str) -> list[str]:
    """docs/verdicts.md (``scripts/verdicts-doc``) as the last section of results.md: its
    headings one level down."""
    return ["#" + line if line.startswith("#") else line for line in text.rstrip("\n").splitlines()]


def render(summaries: list[dict[str, Any]], verdicts: str | None = None) -> str:
    lines = [
        "# Results: the MRC paper's experiments on the virtual fabric",
        "",
        "Generated by `scripts/results-doc` (do not edit by hand): every bundled scenario",
        "(`scenarios/*.yaml`, format in [scenarios.md](scenarios.md)) run on the virtual-time",
        "fabric (the P4 program in p4emu, the emulated MRC NICs, virtual nanoseconds), seed as in",
        "the file. The paper is the MRC white paper's section 5 (see docs/sources.md). Every",
        "figure below is deterministic: the same command gives the same numbers on any machine.",
        "",
        "| scenario | the paper says | we measured | our assertions |",
        "|---|---|---|---|",
    ]
    for s in summaries:
        lines.append(
            f"| [{s['scenario']}](#{s['scenario']}) | {s['paper'] or '(beyond the paper)'} | "
            f"{_headline(s)} | {'hold' if s['ok'] else 'FAIL'} |"
        )
    differ = [s["scenario"] for s in summaries if load(s["scenario"]).notes]
    if differ:
        lines += [
            "",
            "Where our figures differ from the paper's (" + ", ".join(differ) + "), the "
            'scenario\'s section says how and why under "Where we differ". The assertions '
            "check what we measure, with the paper's claim where it holds.",
        ]
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
            lines.append(f"- Where we differ: {scenario.notes}")
        lines.append("- Assertions (`tests/failover`):")
        for c in s["checks"]:
            lines.append(
                f"  - {'holds' if c['ok'] else 'FAILS'}: {c['name']}: {c['measured']} "
                f"(expected {c['expected']})"
            )
        for c in s.get("roce_checks", []):
            lines.append(
                f"  - RoCE run, {'holds' if c['ok'] else 'FAILS'}: {c['name']}: {c['measured']} "
                f"(expected {c['expected']})"
            )
        if "cases" in s:
            lines.append(
                f"  - {s['cases_ok']} of {s['cases']} cases pass ({s['cases_with_path']} leave a "
                "path and deliver byte-exact; the others fail with a reason"
                + (
                    f", after {fmt(s['failure_ns'][0])} to {fmt(s['failure_ns'][1])})"
                    if s.get("failure_ns")
                    else ")"
                )
            )
        lines.append("- Negative controls (the same assertions must fail):")
        for c in s["controls"]:
            lines.append(
                f"  - {c['name']} ({c['description']}): "
                + ("caught" if c["caught"] else "NOT CAUGHT")
                + (f": {c['detail']}" if c["detail"] else "")
            )
        lines.append("")
    if verdicts:
        lines += verdicts_section(verdicts)
    return "\n".join(lines)


def _headline(s: dict[str, Any]) -> str:
    """Every check's measured figure but byte-exact delivery (which the last column covers),
    and RoCE's completion time against MRC's."""
    if "cases" in s:
        return f"{s['cases_ok']} of {s['cases']} pair-failure cases as expected"
    parts = [
        f"{c['name'].split(' (')[0]}: {c['measured']}"
        for c in s["checks"]
        if c["name"] != "byte-exact delivery"
    ]
    ratio = s.get("mrc_roce_completion_ratio")
    if ratio is not None:
        parts.append(
            "RoCE did not complete" if ratio == float("inf") else f"RoCE took {ratio:.1f}x as long"
        )
    return "; ".join(parts) or "-"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="results-doc", description="Regenerate docs/results.md from the bundled scenarios."
    )
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("names", nargs="*", help="only these scenarios (default: all)")
    args = parser.parse_args(argv)
    summaries = []
    for name in args.names or bundled_names():
        print(f"... {name}", file=sys.stderr, flush=True)
        summaries.append(summarise(name))
    verdicts = args.output.parent / DEFAULT_VERDICTS.name
    text = verdicts.read_text("utf-8") if verdicts.is_file() else None
    args.output.write_text(render(summaries, text) + "\n", "utf-8")
    print(f"wrote {args.output}")
    return 0 if all(s["ok"] for s in summaries) else 1


if __name__ == "__main__":
    sys.exit(main())
