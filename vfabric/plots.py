"""The project's one plotting module (matplotlib, Agg): goodput over time with events
numbered, per plane and per T1, trims, and EV states over time. Reusable: each ``plot_*``
draws on a given axes, and :func:`write_scenario_plot` puts the standard figure (the
demo's and the scenarios', on either fabric) in a PNG, one run or several overlaid on
the same axes.

Inputs are plain data: that of :meth:`vfabric.VirtualFabric.goodput` and
:meth:`vfabric.VirtualFabric.ev_state_changes` (so a saved ``results.json`` can be
plotted again without re-running), or a process run's result (testbed.scenario.write).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EV_STATES = ("GOOD", "SKIP", "ASSUMED_BAD")
STATE_COLOURS = {"GOOD": "#4caf50", "SKIP": "#ffb300", "ASSUMED_BAD": "#e53935"}
Mark = tuple[int, str]  # (virtual ns, label), e.g. (300_000, "cut p0-t0-0 -- p0-t1-0")


def _us(values: Sequence[int]) -> list[float]:
    return [v / 1000 for v in values]


def ev_state_counts(
    changes: Sequence[Mapping[str, Any]], total_evs: int, *, nic: str | None = None
) -> tuple[list[int], dict[str, list[int]]]:
    """Step series: after each change (time ns), how many EVs are in each state. EVs
    start GOOD; ``nic`` keeps only that NIC's connections."""
    state: dict[tuple[Any, Any], str] = {}
    counts = {"GOOD": total_evs, "SKIP": 0, "ASSUMED_BAD": 0}
    times = [0]
    series = {s: [counts[s]] for s in EV_STATES}
    for change in changes:
        if nic is not None and change["nic"] != nic:
            continue
        key = (change["qpn"], change["ev"])
        old = state.get(key, change["from"])
        new = change["to"]
        state[key] = new
        if old in counts:
            counts[old] -= 1
        if new in counts:
            counts[new] += 1
        times.append(int(change["t_ns"]))
        for s in EV_STATES:
            series[s].append(counts[s])
    return times, series


def plot_ev_states(
    axes: Any,
    changes: Sequence[Mapping[str, Any]],
    total_evs: int,
    end_ns: int,
    *,
    nic: str | None = None,
    marks: Sequence[Mark] = (),
    spans: Sequence[tuple[int, int, str]] = (),
    time_label: str = "virtual time (µs)",
) -> None:
    """Stacked number of EVs that are GOOD / SKIP / ASSUMED_BAD over time."""
    times, series = ev_state_counts(changes, total_evs, nic=nic)
    times = [*times, end_ns]
    for s in EV_STATES:
        series[s] = [*series[s], series[s][-1]]
    axes.stackplot(
        _us(times),
        [series[s] for s in EV_STATES],
        labels=list(EV_STATES),
        colors=[STATE_COLOURS[s] for s in EV_STATES],
        step="post",
    )
    for start, end, label in spans:
        axes.axvspan(start / 1000, end / 1000, color="red", alpha=0.10, label=label)
    for t, _ in marks:
        axes.axvline(t / 1000, color="black", linestyle="--", linewidth=0.9)
    axes.set_ylabel(f"EVs of {nic}" if nic else "EVs")
    axes.set_xlabel(time_label)
    axes.set_xlim(0, end_ns / 1000)
    axes.set_ylim(0, max(total_evs, 1))
    axes.legend(loc="lower left", fontsize=7)


# ------------------------------------------------------------------ scenario figures

# a symlog time axis: the linear part's width in decades of the log part (2: about half
# the axis for a run 100x shorter than the other)
SYMLOG_LINSCALE = 2.0
# each traffic entry's goodput (never dotted: dotted is the data on the wire)
TRAFFIC_STYLES = ("--", "-.", (0, (6, 2, 1, 2, 1, 2)), (0, (10, 3)))
LEGEND_DROP_IN = 0.6  # the event list starts this many inches below the last panel
RUN_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")  # one per run overlaid
EventMark = tuple[int, str]  # (virtual ns, description): numbered from 0 in timeline order


@dataclass(frozen=True)
class PlotRun:
    """One run drawn on a scenario figure: its goodput (the shape of
    :meth:`vfabric.VirtualFabric.goodput`) and, per traffic entry whose receivers get
    nothing else, that traffic's goodput (Gb/s per bin)."""

    label: str
    goodput: Mapping[str, Any]
    traffic: Mapping[str, Sequence[float]] = field(default_factory=dict)
    trims: Mapping[str, int] = field(default_factory=dict)  # per link direction


def _edges(goodput: Mapping[str, Any]) -> list[float]:
    """Bin edges in µs (one more than bins): what ``_step`` draws against."""
    width = goodput["bin_ns"] / 1000
    starts = [t / 1000 for t in goodput["t_ns"]]
    return [*starts, (starts[-1] if starts else 0.0) + width]


def _step(axes: Any, edges: Sequence[float], series: Sequence[float], **style: Any) -> None:
    """One value per bin, held across the bin (from its start to the next edge)."""
    values = list(series)
    if values:
        axes.plot(edges[: len(values) + 1], [*values, values[-1]], drawstyle="steps-post", **style)


def _total(goodput: Mapping[str, Any]) -> list[float]:
    planes = list(goodput["per_plane"].values())
    return [sum(col) for col in zip(*planes)] if planes else []


def planes_differ(runs: Sequence[PlotRun], tolerance: float = 0.1) -> bool:
    """Whether some plane's goodput departs from the planes' mean by more than
    ``tolerance`` of the busiest bin (then each plane gets its own small panel)."""
    for run in runs:
        planes = list(run.goodput["per_plane"].values())
        if len(planes) < 2:
            continue
        peak = max((max(s, default=0.0) for s in planes), default=0.0)
        for column in zip(*planes):
            mean = sum(column) / len(column)
            if peak and max(abs(v - mean) for v in column) > tolerance * peak:
                return True
    return False


def plot_event_strip(
    axes: Any, events: Sequence[EventMark], spans: Sequence[tuple[int, int, str]]
) -> None:
    """A thin strip above the goodput: each event a numbered tick (its index in the
    timeline, as the checks name it: "after event 3"), staggered on rows so that the
    numbers never overlap; the list itself goes under the figure."""
    axes.set_ylim(0, 1)
    axes.set_yticks([])
    for side in ("left", "right", "top"):
        axes.spines[side].set_visible(False)
    for start, end, _ in spans:
        axes.axvspan(start / 1000, end / 1000, color="red", alpha=0.15)
    groups: dict[int, list[int]] = {}  # simultaneous events share one tick
    for number, (t, _) in enumerate(events):
        groups.setdefault(t, []).append(number)
    rows = 3
    for row, (t, numbers) in enumerate(sorted(groups.items())):
        x = t / 1000
        y = 0.2 + 0.3 * (row % rows)
        label = str(numbers[0]) if len(numbers) == 1 else f"{numbers[0]}-{numbers[-1]}"
        axes.plot([x, x], [0, y], color="black", linewidth=0.6)
        axes.annotate(label, (x, y), ha="center", va="bottom", fontsize=6.5)
    axes.set_ylabel("events", rotation=0, ha="right", va="center", fontsize=8)


def event_legend(events: Sequence[EventMark], spans: Sequence[tuple[int, int, str]]) -> str:
    """The numbered event list printed under a figure."""
    lines = [f"{n}: {t / 1000:g} µs {label}" for n, (t, label) in enumerate(events)]
    lines += [f"shaded: {label} ({s / 1000:g}-{e / 1000:g} µs)" for s, e, label in spans]
    return "\n".join(lines)


def _mark_events(axes: Any, events: Sequence[EventMark], spans: Sequence[Any]) -> None:
    for start, end, _ in spans:
        axes.axvspan(start / 1000, end / 1000, color="red", alpha=0.08)
    for t, _ in events:
        axes.axvline(t / 1000, color="black", linewidth=0.5, alpha=0.35)


def write_scenario_plot(
    path: Path,
    runs: Sequence[PlotRun],
    *,
    title: str,
    end_ns: int,
    events: Sequence[EventMark] = (),
    spans: Sequence[tuple[int, int, str]] = (),
    capacity_gbps: float | None = None,
    ev_changes: Sequence[Mapping[str, Any]] | None = None,
    total_evs: int = 0,
    ev_nic: str | None = None,
    focus_plane: int | None = None,
    time_label: str = "virtual time (µs)",
    linear_until_ns: int | None = None,
) -> Path:
    """A scenario's figure, every panel on the same µs axis ``[0, end_ns]`` (``time_label``
    says what the times are: virtual, or a process run's dilated wall clock):

    - the numbered event strip (the list itself under the figure);
    - total goodput of every run in ``runs`` (overlaid: MRC and RoCE), with each traffic
      entry's own goodput dashed, and the senders' capacity when given;
    - per plane: small multiples when the planes differ (each with the goodput leaving
      each T1 of the plane, dashed), else one panel of the planes together; the T1
      breakdown of ``focus_plane`` (the plane that failed) when the planes are shown
      together;
    - trims per link (top 8) when a run trimmed;
    - the EV states of ``ev_nic`` when ``ev_changes`` is given (MRC runs only).

    ``linear_until_ns``: the time axis is linear up to it and logarithmic beyond (for
    runs of very different lengths overlaid: the short one keeps half the width).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    planes = sorted({int(p) for run in runs for p in run.goodput["per_plane"]})
    multiples = planes_differ(runs) and len(planes) > 1
    rows: list[tuple[str, float]] = [("events", 0.45), ("total", 2.6)]
    if multiples:
        rows.append(("multiples", 1.5 * ((len(planes) + 3) // 4)))
    else:
        rows.append(("planes", 1.8))
    if ev_changes is not None:
        rows.append(("evs", 1.2))
    if any(sum(run.trims.values()) for run in runs):
        rows.append(("trims", 1.6))
    figure = plt.figure(figsize=(11, sum(h for _, h in rows) + 0.8))
    grid = figure.add_gridspec(len(rows), 1, height_ratios=[h for _, h in rows], hspace=0.55)
    panels = _Panels(figure, grid, end_ns, linear_until_ns, events, spans, time_label)
    for row, (kind, _) in enumerate(rows):
        if kind == "events":
            axes = panels.new(row)
            plot_event_strip(axes, events, spans)
            axes.set_title(title, fontsize=10)
            axes.tick_params(labelbottom=False)
        elif kind == "total":
            _plot_totals(panels.new(row), runs, capacity_gbps, panels)
        elif kind == "planes":
            _plot_planes(panels.new(row), runs, focus_plane, panels, last=ev_changes is None)
        elif kind == "multiples":
            _plot_multiples(panels, row, runs, planes, last=row == len(rows) - 1)
        elif kind == "trims":
            _plot_trims(figure.add_subplot(grid[row, 0]), runs)
        elif kind == "evs":
            axes = panels.new(row)
            plot_ev_states(
                axes,
                ev_changes or [],
                total_evs,
                end_ns,
                nic=ev_nic,  # no shaded spans: over the stacked states they read as colours
                time_label=time_label,
            )
            axes.set_xlim(0, end_ns / 1000)
            axes.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=7, frameon=False)
    _write_event_legend(figure, events, spans)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(figure)
    return path


class _Panels:
    """The panels of one scenario figure: each on the first one's µs axis ``[0, end]``
    (symlog beyond ``linear_until_ns``), with the run's events and spans to mark."""

    def __init__(
        self,
        figure: Any,
        grid: Any,
        end_ns: int,
        linear_until_ns: int | None,
        events: Sequence[EventMark],
        spans: Sequence[tuple[int, int, str]],
        time_label: str,
    ) -> None:
        self.figure = figure
        self.grid = grid
        self.end_ns = end_ns
        self.linear_until_ns = linear_until_ns
        self.events = events
        self.spans = spans
        self.time_label = time_label
        self.first: Any = None

    def new(self, row: int, sub: Any = None) -> Any:
        spec = sub if sub is not None else self.grid[row, 0]
        first = self.first
        axes = (
            self.figure.add_subplot(spec, sharex=first) if first else self.figure.add_subplot(spec)
        )
        linear = self.linear_until_ns
        if first is None and linear is not None and linear < self.end_ns:
            axes.set_xscale("symlog", linthresh=linear / 1000, linscale=SYMLOG_LINSCALE)
        axes.set_xlim(0, self.end_ns / 1000)
        if first is None:
            self.first = axes
        return axes

    def mark(self, axes: Any) -> None:
        _mark_events(axes, self.events, self.spans)


def _plot_totals(
    axes: Any, runs: Sequence[PlotRun], capacity_gbps: float | None, panels: _Panels
) -> None:
    """Total goodput of every run, what the wire carried, each traffic entry's own."""
    for colour, run in zip(RUN_COLOURS, runs):
        centres = _edges(run.goodput)
        total = _total(run.goodput)
        _step(axes, centres, total, color=colour, linewidth=2.0, label=f"{run.label}: total")
        wire = run.goodput.get("wire")
        if wire is not None and list(wire) != total:
            # the data on the wire into the receivers: duplicates and resends too
            _step(
                axes,
                centres,
                wire,
                color=colour,
                linestyle=(0, (1, 1)),
                linewidth=0.9,
                label=f"{run.label}: on the wire",
            )
        for style, (name, series) in zip(TRAFFIC_STYLES, run.traffic.items()):
            _step(
                axes,
                centres,
                series,
                color=colour,
                linestyle=style,
                linewidth=1.2,
                label=f"{run.label}: {name}",
            )
    if capacity_gbps:
        axes.axhline(
            capacity_gbps,
            color="grey",
            linewidth=0.8,
            linestyle="--",
            label=f"senders' ports ({capacity_gbps:g} Gb/s)",
        )
    panels.mark(axes)
    axes.set_ylabel("goodput (Gb/s)")
    axes.grid(True, alpha=0.3)
    axes.set_ylim(bottom=0)
    axes.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=7, frameon=False)
    axes.tick_params(labelbottom=False)


def _plot_planes(
    axes: Any, runs: Sequence[PlotRun], focus_plane: int | None, panels: _Panels, *, last: bool
) -> None:
    """Every plane on one panel (they are alike), the T1s of ``focus_plane`` dashed."""
    for colour, run in zip(RUN_COLOURS, runs):
        centres = _edges(run.goodput)
        for series in run.goodput["per_plane"].values():
            _step(axes, centres, series, color=colour, linewidth=0.9, alpha=0.6)
        if focus_plane is not None:
            for name, series in run.goodput["per_t1"].items():
                if name.startswith(f"p{focus_plane}-"):
                    _step(axes, centres, series, color=colour, linestyle="--", linewidth=0.9)
    axes.set_ylabel("per plane\n(Gb/s)", fontsize=8)
    note = "every plane alike" + (
        f"; dashed: via each T1 of plane {focus_plane}" if focus_plane is not None else ""
    )
    axes.text(0.01, 0.95, note, transform=axes.transAxes, fontsize=7, va="top")
    panels.mark(axes)
    axes.grid(True, alpha=0.3)
    axes.set_ylim(bottom=0)
    if last:
        axes.set_xlabel(panels.time_label)
    else:
        axes.tick_params(labelbottom=False)


def _plot_multiples(
    panels: _Panels, row: int, runs: Sequence[PlotRun], planes: list[int], *, last: bool
) -> None:
    """One small panel per plane, with the goodput leaving each of its T1s dashed."""
    cols = min(4, len(planes))
    sub = panels.grid[row, 0].subgridspec(
        (len(planes) + cols - 1) // cols, cols, hspace=0.5, wspace=0.15
    )
    peak = max(
        (max(s, default=0.0) for run in runs for s in run.goodput["per_plane"].values()),
        default=1.0,
    )
    for i, p in enumerate(planes):
        axes = panels.new(row, sub[i // cols, i % cols])
        for colour, run in zip(RUN_COLOURS, runs):
            centres = _edges(run.goodput)
            series = run.goodput["per_plane"].get(p, run.goodput["per_plane"].get(str(p)))
            if series is not None:
                _step(axes, centres, series, color=colour, linewidth=1.3)
            for name, t1 in run.goodput["per_t1"].items():
                if name.startswith(f"p{p}-"):
                    _step(axes, centres, t1, color=colour, linestyle="--", linewidth=0.7, alpha=0.8)
        panels.mark(axes)
        axes.set_ylim(0, peak * 1.1 or 1)
        axes.set_title(f"plane {p} (dashed: via each T1)", fontsize=7, pad=2)
        axes.tick_params(labelsize=6)
        axes.grid(True, alpha=0.3)
        if i % cols:
            axes.tick_params(labelleft=False)
        else:
            axes.set_ylabel("Gb/s", fontsize=7)
        last_row = i // cols == (len(planes) - 1) // cols
        if last and last_row and i % cols == 0:
            # once, from the left edge: the label is wider than one panel
            axes.set_xlabel(panels.time_label, fontsize=7, loc="left")


def _plot_trims(axes: Any, runs: Sequence[PlotRun]) -> None:
    """Trimmed packets of the 8 most trimmed link directions."""
    totals: dict[str, int] = {}
    for run in runs:
        prefix = f"{run.label}: " if len(runs) > 1 else ""
        for link, count in run.trims.items():
            if count:
                totals[prefix + link] = count
    top = sorted(totals.items(), key=lambda kv: -kv[1])[:8]
    axes.barh([k for k, _ in top][::-1], [v for _, v in top][::-1], color="#8e24aa")
    axes.set_xlabel("trimmed packets per link direction (the 8 most trimmed)", fontsize=8)
    axes.tick_params(labelsize=7)


def _write_event_legend(
    figure: Any, events: Sequence[EventMark], spans: Sequence[tuple[int, int, str]]
) -> None:
    """The numbered event list under the figure, in two columns."""
    bottom = figure.axes[-1].get_position().y0 if figure.axes else 0.0
    legend = event_legend(events, spans).splitlines()
    half = (len(legend) + 1) // 2
    for column, chunk in enumerate((legend[:half], legend[half:])):
        figure.text(
            0.125 + 0.4 * column,
            bottom - LEGEND_DROP_IN / figure.get_figheight(),  # below the axis labels
            "\n".join(chunk),
            va="top",
            ha="left",
            fontsize=7,
            family="monospace",
        )
