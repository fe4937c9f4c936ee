"""Run one workload on both simulators and compare them per flow (one JSON-ready dict).

For each side: the completion times of the workload's main flows (median, p99, max,
mean), their retransmitted bytes, trims and NACKs, the run's wall seconds and peak RSS
(and the virtual fabric's switch traversals per second); the ratios ours / htsim's; for
an incast with a victim, each side's victim slowdown against the victim alone on the same
fabric; each target of :mod:`testbed.reference.targets` met or not, and whether that was
expected (``not_reproduced.yaml``).
"""

from __future__ import annotations

import contextlib
import math
import statistics
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from testbed.reference import htsim, vfside
from testbed.reference.exceptions import HtsimDiffError
from testbed.reference.results import FlowResult, SideRun
from testbed.reference.targets import load_not_reproduced, targets_for
from testbed.reference.workload import Flow, Workload, victim_only

SIDES = ("htsim", "vfabric")
Runner = Callable[[str, Workload, Sequence[Flow], Path], SideRun]


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (the smallest value with at least q % at or below it)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def summarize(flows: Sequence[FlowResult]) -> dict[str, Any]:
    fcts = [f.fct_us for f in flows]
    return {
        "flows": len(flows),
        "median_fct_us": round(statistics.median(fcts), 3),
        "p99_fct_us": round(percentile(fcts, 99), 3),
        "max_fct_us": round(max(fcts), 3),
        "mean_fct_us": round(statistics.fmean(fcts), 3),
        "retransmitted_packets": sum(f.retransmitted_packets for f in flows),
        "retransmitted_bytes": sum(f.retransmitted_bytes for f in flows),
        "trims": sum(f.trims for f in flows),
        "nacks": sum(f.nacks for f in flows),
    }


def ratio(ours: float, theirs: float) -> float | None:
    if theirs == 0:
        return 1.0 if ours == 0 else None
    return round(ours / theirs, 4)


def run_side(side: str, workload: Workload, flows: Sequence[Flow], directory: Path) -> SideRun:
    """The default runner: htsim or the virtual fabric in a child process."""
    if side == "htsim":
        return htsim.run(workload.shape, flows, workload.seed, directory)
    return vfside.run(workload.shape, flows, workload.seed, directory)


def cost(run: SideRun) -> dict[str, Any]:
    out: dict[str, Any] = {
        "wall_s": round(run.wall_s, 3),
        "peak_rss_mib": round(run.peak_rss_mib, 1),
    }
    if run.side == "vfabric":
        out["run_wall_s"] = round(run.extra["run_wall_s"], 3)
        out["switch_traversals"] = run.extra["switch_traversals"]
        out["traversals_per_s"] = run.extra["traversals_per_s"]
        out["event_log_sha256"] = run.extra["event_log_sha256"]
    else:
        out["summary"] = run.extra["summary"]
    return out


def compare(
    workload: Workload,
    *,
    work_dir: Path | None = None,
    runner: Runner = run_side,
    per_flow: bool = False,
    not_reproduced: dict[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Run ``workload`` on both sides (and its victim alone, if it has one) and compare.

    ``work_dir`` (``--keep``) is created if missing; one that cannot be is an error."""
    if work_dir is not None:
        try:
            work_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HtsimDiffError(
                f"work directory {work_dir}: cannot create it: {exc.strerror}"
            ) from None
    base = Path(tempfile.mkdtemp(prefix=f"{workload.name}-", dir=work_dir))
    flows = workload.flows()
    runs = {side: runner(side, workload, flows, base / side) for side in SIDES}
    main_role = "incast" if workload.traffic == "incast" else "flow"
    main_ids = [f.id for f in flows if f.role == main_role]
    out: dict[str, Any] = {
        "workload": {
            "name": workload.name,
            "hosts": workload.hosts,
            "traffic": workload.traffic,
            "size_bytes": workload.size_bytes,
            "seed": workload.seed,
            "fan_in": workload.fan_in,
            "victim_bytes": workload.victim_size if workload.victim else None,
            "flows": len(flows),
            "shape": asdict(workload.shape),
        }
    }
    stats = {s: summarize([runs[s].flows[i] for i in main_ids]) for s in SIDES}
    for side in SIDES:
        out[side] = {**stats[side], **cost(runs[side])}
    ours, theirs = stats["vfabric"], stats["htsim"]
    ratios: dict[str, Any] = {
        f"{key}_ratio": ratio(ours[f"{key}_us"], theirs[f"{key}_us"])
        for key in ("median_fct", "p99_fct", "max_fct", "mean_fct")
    }
    for key in ("retransmitted_bytes", "trims", "nacks"):
        ratios[f"{key}_ratio"] = ratio(ours[key], theirs[key])
    ratios["wall_s_ratio"] = ratio(runs["vfabric"].wall_s, runs["htsim"].wall_s)
    ratios["peak_rss_ratio"] = ratio(runs["vfabric"].peak_rss_mib, runs["htsim"].peak_rss_mib)
    out["ratios"] = ratios
    metrics: dict[str, float | None] = dict(ratios)
    if workload.victim:
        alone_flows = victim_only(workload)
        alone = {s: runner(s, workload, alone_flows, base / f"{s}-victim-alone") for s in SIDES}
        vid = alone_flows[0].id
        victim: dict[str, Any] = {}
        for side in SIDES:
            beside, by_itself = runs[side].flows[vid].fct_us, alone[side].flows[vid].fct_us
            victim[side] = {
                "fct_us": beside,
                "alone_fct_us": by_itself,
                "slowdown": round(beside / by_itself - 1, 4),
                "alone_wall_s": round(alone[side].wall_s, 3),
            }
        out["victim"] = victim
        metrics["victim_slowdown"] = victim["vfabric"]["slowdown"]
    listed = (load_not_reproduced() if not_reproduced is None else not_reproduced).get(
        workload.name, {}
    )
    checks = []
    for target in targets_for(workload.traffic, workload.victim):
        value = metrics.get(target.metric)
        met = target.met(value)
        expected = "not reproduced" if target.id in listed else "met"
        checks.append(
            {
                "id": target.id,
                "claim": target.claim,
                "metric": target.metric,
                "value": value,
                "met": met,
                "expected": expected,
                "as_expected": (met is False) == (expected == "not reproduced"),
            }
        )
    out["targets"] = checks
    if per_flow:
        out["per_flow"] = [
            {
                "id": f.id,
                "src": f.src,
                "dst": f.dst,
                "bytes": f.size,
                "role": f.role,
                **{side: runs[side].flows[f.id].as_dict() for side in SIDES},
            }
            for f in flows
        ]
    with contextlib.suppress(OSError):  # kept when a run left its logs there
        base.rmdir()
    return out
