"""What ``mrc-testbed run`` and ``compare`` leave in ``results/<scenario>/``.

- ``result.json``: :meth:`RunResult.to_json` (schema in docs/scenarios.md);
- ``run.png``: numbered events, total and per-traffic goodput, the planes (small
  multiples with their T1s when they differ), trims, and the first sender's EV states
  (MRC) over time (:mod:`vfabric.plots`);
- ``events.jsonl``: the fabric's event log (virtual mode);
- compare: ``mrc/`` and ``roce/`` as above, ``compare.png`` (both runs on the same axes),
  ``compare.json`` and ``report.md``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from testbed.scenario.checks import line_rate_gbps
from testbed.scenario.model import Scenario
from testbed.scenario.results import RunResult
from testbed.scenario.runner import Comparison
from testbed.scenario.units import format_size
from testbed.scenario.units import format_time_ns as fmt
from topologies.events import EvDropEvent, FlapEvent, LinkRef, LossEvent, PortRef

LOG_TIME_RATIO = 10  # a figure this many times longer than a run's bulk: log time axis
BULK_FRACTION = 0.5  # a run's bulk: until it had delivered this share of its bytes
# (RoCE at 1 % loss delivers 79 % before its first 67 ms ACK timeout, the rest after)
RESULT_JSON = "result.json"
RUN_PNG = "run.png"
REPORT_MD = "report.md"
COMPARE_JSON = "compare.json"
COMPARE_PNG = "compare.png"


def write_run(scenario: Scenario, run: RunResult, out_dir: Path) -> RunResult:
    """Writes the run's JSON and plot into ``out_dir``; records them in ``run.files``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    plot = write_plot(scenario, run, out_dir / RUN_PNG)
    run.files["plot"] = plot.name
    if (out_dir / "events.jsonl").is_file():
        run.files["event_log"] = "events.jsonl"
    run.files["result"] = RESULT_JSON
    (out_dir / RESULT_JSON).write_text(json.dumps(run.to_json(), indent=1) + "\n", "utf-8")
    return run


def plot_marks(
    scenario: Scenario, run: RunResult
) -> tuple[list[tuple[int, str]], list[tuple[int, int, str]]]:
    """Every timeline event in order (numbered by its index, as the checks name it), and
    shaded spans for flapping and loss."""
    marks: list[tuple[int, str]] = []
    spans: dict[tuple[int, int], list[str]] = {}  # one shaded span per interval
    for event in run_events(scenario, run):
        marks.append((event.at_ns, event.describe()))
        if isinstance(event, FlapEvent):
            spans.setdefault((event.at_ns, event.until_ns), []).append(event.describe())
        elif isinstance(event, LossEvent):
            end = event.until_ns or run.end_ns
            spans.setdefault((event.at_ns, end), []).append(event.describe())
    return marks, [
        (start, end, labels[0] + (f" (+{len(labels) - 1} more)" if len(labels) > 1 else ""))
        for (start, end), labels in spans.items()
    ]


def run_events(scenario: Scenario, run: RunResult) -> list[Any]:
    """The timeline the run had (a sweep case has its own)."""
    by_index = {e.index: e for e in run.events}
    if len(by_index) == len(scenario.timeline) and all(
        by_index[i].at_ns == ev.at_ns for i, ev in enumerate(scenario.timeline)
    ):
        return list(scenario.timeline)
    return []


def fabric_goodput(run: RunResult) -> dict[str, Any]:
    """The run's series in the shape :mod:`vfabric.plots` draws."""
    count = len(run.goodput.get("total", []))
    return {
        "bin_ns": run.bin_ns,
        "t_ns": [i * run.bin_ns for i in range(count)],
        "per_plane": {
            int(k.split(":", 1)[1]): v for k, v in run.goodput.items() if k.startswith("plane:")
        },
        "per_t1": {k.split(":", 1)[1]: v for k, v in run.goodput.items() if k.startswith("t1:")},
        "total": run.goodput.get("total"),
        "wire": run.goodput.get("wire"),
    }


def write_plot(scenario: Scenario, run: RunResult, path: Path) -> Path:
    return write_figure(scenario, [run], path)


def write_figure(scenario: Scenario, runs: list[RunResult], path: Path) -> Path:
    """One figure of ``runs`` (one run, or MRC and RoCE overlaid) on the same µs axis:
    events numbered, total and per-traffic goodput, the planes (small multiples when they
    differ), trims where there were any, and the first sender's EVs when one run of MRC
    is drawn (:func:`vfabric.plots.write_scenario_plot`)."""
    from vfabric.plots import PlotRun, write_scenario_plot

    head = runs[0]
    marks, spans = plot_marks(scenario, max(runs, key=lambda r: r.end_ns))
    nic = ev_panel_nic(scenario, head)
    mrc = len(runs) == 1 and head.transport != "roce"
    ev_changes = None
    total_evs = 0
    if mrc and nic is not None:
        evs = sum(scenario.nic.get(key, _default(key)) for key in _EV_COUNTS)  # backups too
        senders = sum(1 for t in head.transfers if t.src == nic and t.transport == "mrc")
        total_evs = evs * max(senders, 1)
        ev_changes = head.ev_changes
    end = max(max(r.completion_ns() or r.end_ns for r in runs), 1)
    end = min(max(end + 2 * head.bin_ns, 1), max(r.end_ns for r in runs))
    variants = ", ".join(r.variant for r in runs)
    linear_until = linear_until_ns(runs, end)
    label = time_label(head)
    if linear_until is not None:
        label += f"; linear to {fmt(linear_until)}, logarithmic beyond"
    return write_scenario_plot(
        path,
        [
            PlotRun(
                label=r.variant if len(runs) > 1 else "goodput",
                goodput=fabric_goodput(r),
                traffic=traffic_series(scenario, r),
                trims={
                    name: int(row.get("trims", 0))
                    for name, row in r.counters.get("per_link", {}).items()
                },
            )
            for r in runs
        ],
        title=f"{scenario.name} ({variants}, {fabric_name(head)}, seed {head.seed})"
        + "".join(_pfc_note(r) for r in runs),
        end_ns=end,
        events=marks,
        spans=spans,
        capacity_gbps=line_rate_gbps(scenario),
        ev_changes=ev_changes,
        total_evs=total_evs,
        ev_nic=nic,
        focus_plane=failed_plane(scenario),
        time_label=label,
        linear_until_ns=linear_until,
    )


def ev_panel_nic(scenario: Scenario, run: RunResult) -> str | None:
    """The NIC whose EVs the figure shows: the first one a timeline event names (an EV
    drop's sender, a downed or flapping port's NIC) that sends MRC traffic, else the
    first sender."""
    senders = [t.src for t in run.transfers if t.transport == "mrc"]
    for event in scenario.timeline:
        target = event.target
        nic = event.nic if isinstance(event, EvDropEvent) else None
        if nic is None and isinstance(target, PortRef):
            nic = target.nic
        if nic in senders:
            return nic
    return run.transfers[0].src if run.transfers else None


def linear_until_ns(runs: list[RunResult], end_ns: int) -> int | None:
    """Where the time axis turns logarithmic: when the figure lasts more than
    :data:`LOG_TIME_RATIO` times as long as the run that delivered its bulk soonest (RoCE
    waiting out 67 ms ACK timeouts, beside MRC or alone), the axis is linear over that
    bulk and logarithmic beyond, so both the bulk and the tail read; None: linear."""
    shortest = min(bulk_end_ns(r) for r in runs) + 2 * runs[0].bin_ns
    return shortest if end_ns > LOG_TIME_RATIO * shortest else None


def bulk_end_ns(run: RunResult) -> int:
    """When the run had delivered :data:`BULK_FRACTION` of its bytes (the end of that
    goodput bin; the run's end when it delivered nothing)."""
    total = run.goodput.get("total") or []
    whole = sum(total)
    if whole <= 0:
        return run.completion_ns() or run.end_ns
    running = 0.0
    for index, value in enumerate(total):
        running += value
        if running >= BULK_FRACTION * whole:
            return (index + 1) * run.bin_ns
    return len(total) * run.bin_ns


def fabric_name(run: RunResult) -> str:
    """``virtual fabric``, or ``mininet fabric, bmv2, TDF 65536``: what ran."""
    if run.fabric.get("clock") != "wall":
        return f"{run.mode} fabric"
    return f"{run.mode} fabric, {run.fabric.get('target')}, TDF {run.fabric.get('tdf')}"


def time_label(run: RunResult) -> str:
    """The time axis: virtual µs, or a process run's dilated µs (wall clock / TDF)."""
    if run.fabric.get("clock") != "wall":
        return "virtual time (µs)"
    return f"dilated time (µs: wall clock / {run.fabric.get('tdf')})"


def traffic_series(scenario: Scenario, run: RunResult) -> dict[str, list[float]]:
    """Each traffic entry's goodput, as the data into its receivers, when there are
    several entries and an entry's receivers get data from nothing else."""
    by_traffic: dict[str, set[str]] = {}
    for t in run.transfers:
        by_traffic.setdefault(t.traffic, set()).add(t.dst)
    if len(by_traffic) < 2:
        return {}
    senders = {t.src for t in run.transfers}
    count = len(run.goodput.get("total", []))
    out = {}
    for traffic, dsts in by_traffic.items():
        others = set().union(*(d for name, d in by_traffic.items() if name != traffic))
        if dsts & others or dsts & senders:
            continue
        series = [0.0] * count
        for key, values in run.goodput.items():
            ends = key.removeprefix("link:").split("--")
            if key.startswith("link:") and ends[0] in dsts:
                series = [a + b for a, b in zip(series, values)]
        out[traffic] = series
    return out


def failed_plane(scenario: Scenario) -> int | None:
    """The plane of the first fault on one plane (a link, port, T1 or EV), if any."""
    planes = {sw.name: sw.plane for sw in scenario.topology.switches}
    for event in scenario.timeline:
        if isinstance(event, EvDropEvent):
            return event.plane
        target = event.target
        if isinstance(target, PortRef):
            return target.plane
        if isinstance(target, LinkRef):
            for end in (target.a, target.b):
                if end in planes:
                    return planes[end]
        if isinstance(target, str) and target in planes:
            return planes[target]
    return None


_EV_COUNTS = ("evs_per_connection", "backup_evs_per_connection")


def _pfc_note(run: RunResult) -> str:
    """The run's PFC counters for the plot's title ('' without PFC)."""
    pfc = run.counters.get("pfc")
    if not pfc:
        return ""
    return (
        f"\nPFC: {pfc['pauses_sent']} pauses, {pfc['paused_ns'] / 1000:,.0f} us paused "
        f"(all ports), {pfc['headroom_drops']} headroom drops"
    )


def _default(key: str) -> int:
    from nic_emu import NicConfig

    return int(getattr(NicConfig(), key))


# ------------------------------------------------------------------ compare report


def write_comparison(comparison: Comparison, out_dir: Path) -> Path:
    scenario = comparison.scenario
    for run in (comparison.mrc, comparison.roce):
        write_run(scenario, run, out_dir / run.variant)
    write_figure(scenario, [comparison.mrc, comparison.roce], out_dir / COMPARE_PNG)
    data = {
        "scenario": scenario.name,
        "ok": comparison.ok,
        "completion_ratio": comparison.completion_ratio,
        "checks": [vars(c) for c in comparison.checks],
        "mrc": f"mrc/{RESULT_JSON}",
        "roce": f"roce/{RESULT_JSON}",
    }
    (out_dir / COMPARE_JSON).write_text(json.dumps(data, indent=1) + "\n", "utf-8")
    path = out_dir / REPORT_MD
    path.write_text(report_markdown(comparison), "utf-8")
    return path


def phase_rows(scenario: Scenario, run: RunResult) -> list[tuple[str, float, float | None]]:
    """Per timeline event: goodput (Gb/s) while it lasts (until the next event, its own end,
    or the end of the traffic) and after it (as long again, within the traffic; None when
    the traffic ended first)."""
    rows: list[tuple[str, float, float | None]] = []
    timeline = list(scenario.timeline)
    end = run.completion_ns() or run.end_ns
    for i, event in enumerate(timeline):
        stop = timeline[i + 1].at_ns if i + 1 < len(timeline) else end
        if isinstance(event, FlapEvent) or (
            isinstance(event, LossEvent) and event.until_ns is not None
        ):
            stop = event.until_ns
        stop = min(max(stop, event.at_ns + run.bin_ns), max(end, event.at_ns + run.bin_ns))
        after_end = min(stop + (stop - event.at_ns), end)
        rows.append(
            (
                f"{fmt(event.at_ns)}: {event.describe()}",
                run.goodput_gbps(event.at_ns, stop),
                run.goodput_gbps(stop, after_end) if after_end > stop else None,
            )
        )
    return rows


def report_markdown(comparison: Comparison) -> str:
    scenario, mrc, roce = comparison.scenario, comparison.mrc, comparison.roce
    lines = [
        f"# {scenario.name}: MRC vs RoCE",
        "",
        scenario.description,
        "",
        f"Topology `{scenario.topology.name}` ({scenario.topology.summary()}), seed "
        f"{mrc.seed}, {mrc.mode} fabric. Traffic: "
        + "; ".join(
            f"{t.name}: {t.pattern} ({len(t.pairs)} pair{'s' if len(t.pairs) != 1 else ''}), "
            f"{format_size(t.nbytes)} each"
            for t in scenario.traffic
        )
        + f". Senders' line rate {line_rate_gbps(scenario):g} Gb/s.",
        "",
    ]
    if scenario.paper:
        lines += [f"Paper: {scenario.paper}", ""]
    if scenario.not_reproduced:
        lines += [
            f"Expected: not reproduced ({len(scenario.not_reproduced)} claim(s) of the paper "
            "the model does not reach; their checks below say `not reproduced`).",
            "",
        ]
    lines += [
        "| | MRC | RoCE |",
        "|---|---|---|",
        f"| completion time | {_done(mrc)} | {_done(roce)} |",
        f"| bytes delivered intact | {_intact(mrc)} | {_intact(roce)} |",
    ]
    for (label, m_during, m_after), (_, r_during, r_after) in zip(
        phase_rows(scenario, mrc), phase_rows(scenario, roce)
    ):
        lines.append(f"| goodput during {label} | {m_during:.1f} Gb/s | {r_during:.1f} Gb/s |")
        lines.append(f"| goodput after {label} | {_gbps(m_after)} | {_gbps(r_after)} |")
    m50, m99 = mrc.message_percentiles_ns()
    r50, r99 = roce.message_percentiles_ns()
    lines += [
        f"| message completion p50 | {_opt(m50)} | {_opt(r50)} |",
        f"| message completion p99 | {_opt(m99)} | {_opt(r99)} |",
        f"| bytes retransmitted | {mrc.retransmitted_bytes():,} | {roce.retransmitted_bytes():,} |",
        f"| goodput bytes / data bytes on the wire into the receivers | {_wire(mrc)} "
        f"| {_wire(roce)} |",
        f"| trims / NACKs / timeouts | {_tnt(mrc)} | {_tnt(roce)} |",
        f"| PFC pauses / time paused (all ports) | {_pfc(mrc)} | {_pfc(roce)} |",
        "",
        "Goodput counts each byte once, as the application got it; the data on the wire "
        "into the receivers also counts duplicates and go-back-N resends.",
        "",
    ]
    lines += [completion_sentence(mrc, roce), ""]
    lines += ["## Checks", ""]
    for label, checks in (
        ("MRC", mrc.checks),
        ("RoCE", roce.checks),
        ("MRC vs RoCE", comparison.checks),
    ):
        for c in checks:
            verdict = {"ok": "pass"}.get(c.verdict, c.verdict)
            lines.append(f"- {label}: {c.name}: {verdict} (expected {c.expected}; {c.measured})")
            if c.not_reproduced is not None:
                lines.append(f"  - marked not reproduced: {c.not_reproduced}")
    lines += [
        "",
        "## Plots",
        "",
        f"MRC and RoCE on the same axes: ![MRC and RoCE]({COMPARE_PNG})",
        "",
        f"MRC alone, with its EV states: ![MRC](mrc/{RUN_PNG})",
        "",
        f"RoCE alone: ![RoCE](roce/{RUN_PNG})",
        "",
    ]
    return "\n".join(lines)


def _wire(run: RunResult) -> str:
    c = run.counters
    if "delivered_bytes" not in c:
        return "-"
    return f"{int(c['delivered_bytes']):,} / {int(c['wire_data_bytes']):,}"


def _pfc(run: RunResult) -> str:
    pfc = run.counters.get("pfc")
    if not pfc:
        return "no PFC (lossy)"
    return f"{pfc['pauses_sent']:,} / {fmt(int(pfc['paused_ns']))}"


def completion_sentence(mrc: RunResult, roce: RunResult) -> str:
    """How the two completion times compare, in words that fit runs that did not finish."""
    m, r = mrc.completion_ns(), roce.completion_ns()
    if m is None and r is None:
        return f"Neither MRC nor RoCE completed within the run ({fmt(mrc.end_ns)})."
    if m is None:
        return f"MRC did not complete within the run ({fmt(mrc.end_ns)}); RoCE did, at {fmt(r)}."
    if r is None:
        return (
            f"RoCE did not complete within the run ({fmt(roce.end_ns)}); MRC completed at {fmt(m)}."
        )
    return f"RoCE took {r / m:.2f} x as long as MRC ({fmt(r)} against {fmt(m)})."


def _gbps(value: float | None) -> str:
    return "- (traffic over)" if value is None else f"{value:.1f} Gb/s"


def _done(run: RunResult) -> str:
    done = run.completion_ns()
    if done is not None:
        return fmt(done)
    failed = [t for t in run.transfers if t.failure]
    return f"did not complete ({len(failed)} failed)" if failed else "did not complete"


def _intact(run: RunResult) -> str:
    total = sum(t.nbytes for t in run.transfers)
    return f"{sum(t.bytes_verified for t in run.transfers):,} of {total:,}"


def _opt(ns: float | None) -> str:
    return "-" if ns is None else fmt(ns)


def _tnt(run: RunResult) -> str:
    c = run.counters
    return f"{c.get('trims', 0):,} / {c.get('nacks', 0):,} / {c.get('timeouts', 0):,}"
