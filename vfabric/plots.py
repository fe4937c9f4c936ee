"""Plots of a virtual-fabric run (matplotlib, Agg): goodput over time with events marked,
and EV states over time. Reusable: each ``plot_*`` draws on a given axes, and
:func:`write_run_plot` puts the standard figure (the demo's) in a PNG.

Inputs are the plain data of :meth:`vfabric.VirtualFabric.goodput` and
:meth:`vfabric.VirtualFabric.ev_state_changes`, so a saved ``results.json`` can be
plotted again without re-running.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

EV_STATES = ("GOOD", "SKIP", "ASSUMED_BAD")
STATE_COLOURS = {"GOOD": "#4caf50", "SKIP": "#ffb300", "ASSUMED_BAD": "#e53935"}
Mark = tuple[int, str]  # (virtual ns, label), e.g. (300_000, "cut p0-t0-0 -- p0-t1-0")


def _us(values: Sequence[int]) -> list[float]:
    return [v / 1000 for v in values]


def _draw_marks(axes: Any, marks: Sequence[Mark], spans: Sequence[tuple[int, int, str]]) -> None:
    for start, end, label in spans:
        axes.axvspan(start / 1000, end / 1000, color="red", alpha=0.10, label=label)
    for t, label in marks:
        axes.axvline(t / 1000, color="black", linestyle="--", linewidth=0.9)
        axes.annotate(
            label,
            (t / 1000, 1.0),
            xycoords=("data", "axes fraction"),
            rotation=90,
            va="top",
            ha="right",
            fontsize=7,
        )


def plot_goodput(
    axes: Any,
    goodput: Mapping[str, Any],
    *,
    plane: int = 0,
    t1s: Sequence[str] | None = None,
    marks: Sequence[Mark] = (),
    spans: Sequence[tuple[int, int, str]] = (),
    line_rate_gbps: float | None = None,
) -> None:
    """Goodput (Gb/s) of ``plane`` split per T1 (dashed: data leaving each T1 of that
    plane) and the total delivered per plane (solid), µs on the x axis. Optional
    ``total`` / ``wire``: all planes' goodput and the data on the wire into the NICs."""
    t = _us(goodput["t_ns"])
    width = goodput["bin_ns"] / 1000
    centres = [x + width / 2 for x in t]
    per_t1 = goodput["per_t1"]
    names = list(t1s) if t1s is not None else [n for n in per_t1 if n.startswith(f"p{plane}-")]
    for name in names:
        axes.plot(centres, per_t1[name], linestyle="--", drawstyle="steps-mid", label=f"via {name}")
    planes = list(goodput["per_plane"].items())
    for rank, (p, series) in enumerate(planes):
        # the plotted plane widest and on top, so equal totals stay visible
        width = 3.2 if p == plane else 1.4
        axes.plot(
            centres,
            series,
            drawstyle="steps-mid",
            linewidth=width,
            alpha=0.75 if p == plane else 1.0,
            zorder=3 if p == plane else 2 + rank / (len(planes) + 1),
            label=f"plane {p} total",
        )
    # all planes together: the goodput (each byte once) and, when they differ, the data
    # on the wire into the receivers (duplicates and go-back-N resends included)
    total, wire = goodput.get("total"), goodput.get("wire")
    if total is not None and len(planes) > 1:
        axes.plot(centres, total, color="black", linewidth=1.0, label="all planes, goodput")
    if wire is not None and total is not None and wire != total:
        axes.plot(
            centres, wire, color="black", linewidth=0.8, linestyle=":", label="all, on the wire"
        )
    if line_rate_gbps:
        axes.axhline(line_rate_gbps, color="grey", linewidth=0.7, linestyle=":")
    _draw_marks(axes, marks, spans)
    axes.set_ylabel("goodput (Gb/s)")
    axes.set_xlabel("virtual time (µs)")
    axes.grid(True, alpha=0.3)
    axes.legend(loc="lower left", fontsize=7, ncol=2)


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
    _draw_marks(axes, marks, spans)
    axes.set_ylabel("EVs of the sender" if nic else "EVs")
    axes.set_xlabel("virtual time (µs)")
    axes.set_xlim(0, end_ns / 1000)
    axes.set_ylim(0, max(total_evs, 1))
    axes.legend(loc="lower left", fontsize=7)


def write_run_plot(
    path: Path,
    goodput: Mapping[str, Any],
    changes: Sequence[Mapping[str, Any]],
    *,
    total_evs: int,
    end_ns: int,
    title: str,
    plane: int = 0,
    nic: str | None = None,
    marks: Sequence[Mark] = (),
    spans: Sequence[tuple[int, int, str]] = (),
    line_rate_gbps: float | None = None,
    time_label: str = "virtual time (µs)",
) -> Path:
    """The standard figure: goodput (top) and EV states (bottom), sharing the µs axis
    (``time_label``: what the times are)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (top, bottom) = plt.subplots(
        2, 1, figsize=(9, 6.5), sharex=True, gridspec_kw={"height_ratios": [3, 1.4]}
    )
    plot_goodput(
        top,
        goodput,
        plane=plane,
        marks=marks,
        spans=spans,
        line_rate_gbps=line_rate_gbps,
    )
    top.set_xlabel("")
    top.set_title(title, fontsize=10)
    plot_ev_states(bottom, changes, total_evs, end_ns, nic=nic, marks=(), spans=spans)
    bottom.set_xlabel(time_label)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
