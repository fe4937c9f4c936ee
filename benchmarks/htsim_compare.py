"""The cost of the same work on htsim_uec and on the virtual fabric, side by side (one JSON).

Each workload (``testbed.reference``: a one-plane fat tree and its flows, described once)
runs on uet-htsim's ``htsim_uec`` and on the virtual fabric, each in a child process
measured by the same launcher (``testbed.reference.results.run_child``), the sides
alternating ``--repeat`` times so that both see the same machine load. Per side it prints
wall seconds (the child, start to exit) and peak RSS (MiB); for the virtual fabric also
its simulation's wall seconds (``VirtualFabric.run`` alone), its switch traversals, and
traversals per wall second (the traversals over the child's wall time, and over the
simulation alone). htsim does the same work, so ``htsim.traversals_per_s`` is the virtual
fabric's traversal count over htsim's wall time. The ratios (ours / htsim's) are those of
the best run of each side; the targets of issue #27 are a wall ratio of at most 10 and a
virtual-fabric peak RSS of at most 100 MB. ``hot_path`` says which path the virtual
fabric ran (docs/virtual-fabric.md, "Compiled hot path"). Unlike
``benchmarks/htsim_diff.py`` it compares no transport figures and runs no victim alone.

By default the 32-host permutation runs at two flow sizes (``--flow-kib``, 1 and 4 MiB),
and ``rss_growth`` gives each side's peak RSS per size and the MiB of peak RSS per MiB
sent between the smallest and the largest: what grows with the bytes sent
(docs/virtual-fabric.md, "Memory in long runs").

htsim_uec comes from ``$MRC_HTSIM`` or ``shared/htsim/bin/htsim_uec`` beside the clone.

Usage: ``python benchmarks/htsim_compare.py [--ci] [--flow-kib KIB ...] [--only NAME ...]
[--repeat N]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clikit import hotpath  # noqa: E402
from testbed.reference import htsim, suites, vfside  # noqa: E402
from testbed.reference.exceptions import HtsimDiffError  # noqa: E402
from testbed.reference.results import SideRun, rss_floor_mib  # noqa: E402
from testbed.reference.workload import Workload  # noqa: E402

TARGET_WALL_RATIO = 10.0
TARGET_PEAK_RSS_MB = 100.0
MB_PER_MIB = 1.048576
MIB = 1 << 20
KIB = 1 << 10
DEFAULT_FLOW_KIB = (1024, 4096)  # the permutation's flow sizes: 1 and 4 MiB


def workloads(args: argparse.Namespace) -> list[Workload]:
    if args.ci:
        pool = list(suites.CI)
    else:
        pool = [suites.permutation(32, size=kib * KIB) for kib in args.flow_kib]
    return suites.select(pool, args.only)


def ratio(ours: float, theirs: float) -> float | None:
    return round(ours / theirs, 2) if theirs else None


def side_figures(run: SideRun, traversals: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "wall_s": round(run.wall_s, 3),
        "peak_rss_mib": round(run.peak_rss_mib, 1),
        "traversals_per_s": round(traversals / run.wall_s) if run.wall_s else None,
    }
    if run.side == "vfabric":
        run_wall = run.extra["run_wall_s"]
        out["run_wall_s"] = round(run_wall, 3)
        out["switch_traversals"] = traversals
        out["traversals_per_run_s"] = round(traversals / run_wall) if run_wall else None
        out["event_log_sha256"] = run.extra["event_log_sha256"]
    return out


def compare_cost(workload: Workload, repeat: int, work: Path) -> dict[str, Any]:
    flows = workload.flows()
    runs: dict[str, list[SideRun]] = {"htsim": [], "vfabric": []}
    for i in range(repeat):
        runs["htsim"].append(htsim.run(workload.shape, flows, workload.seed, work / f"h{i}"))
        runs["vfabric"].append(vfside.run(workload.shape, flows, workload.seed, work / f"v{i}"))
    hashes = {r.extra["event_log_sha256"] for r in runs["vfabric"]}
    if len(hashes) != 1:
        raise HtsimDiffError(f"{workload.name}: the virtual fabric's runs differ: {hashes}")
    traversals = runs["vfabric"][0].extra["switch_traversals"]
    best = {side: min(rs, key=lambda r: r.wall_s) for side, rs in runs.items()}
    ours, theirs = best["vfabric"], best["htsim"]
    rss_mb = ours.peak_rss_mib * MB_PER_MIB
    wall_ratio = ratio(ours.wall_s, theirs.wall_s)
    return {
        "workload": workload.name,
        "flows": len(flows),
        "bytes_sent": sum(f.size for f in flows),
        "htsim": side_figures(theirs, traversals),
        "vfabric": side_figures(ours, traversals),
        "wall_s_all": {side: [round(r.wall_s, 3) for r in rs] for side, rs in runs.items()},
        "ratios": {
            "wall_s": wall_ratio,
            "run_wall_s_vs_htsim_wall_s": ratio(ours.extra["run_wall_s"], theirs.wall_s),
            "peak_rss": ratio(ours.peak_rss_mib, theirs.peak_rss_mib),
        },
        "targets": {
            "wall_ratio_max": TARGET_WALL_RATIO,
            "wall_ratio_met": wall_ratio is not None and wall_ratio <= TARGET_WALL_RATIO,
            "peak_rss_mb_max": TARGET_PEAK_RSS_MB,
            "vfabric_peak_rss_mb": round(rss_mb, 1),
            "peak_rss_met": rss_mb <= TARGET_PEAK_RSS_MB,
        },
    }


def slope(rows: list[dict[str, Any]], side: str) -> float:
    """MiB of ``side``'s peak RSS per MiB sent, between the first and the last row."""
    first, last = rows[0], rows[-1]
    rss = last[side]["peak_rss_mib"] - first[side]["peak_rss_mib"]
    return round(rss / ((last["bytes_sent"] - first["bytes_sent"]) / MIB), 4)


def rss_growth(results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Peak RSS against the bytes sent, over the workloads that differ only in their flow
    size (the permutations of ``--flow-kib``); None with fewer than two sizes."""
    rows = sorted(
        (r for r in results if r["workload"].startswith("permutation-")),
        key=lambda r: r["bytes_sent"],
    )
    if len({r["bytes_sent"] for r in rows}) < 2:
        return None
    return {
        "workloads": [r["workload"] for r in rows],
        "bytes_sent_mib": [round(r["bytes_sent"] / MIB, 2) for r in rows],
        "vfabric_peak_rss_mib": [r["vfabric"]["peak_rss_mib"] for r in rows],
        "htsim_peak_rss_mib": [r["htsim"]["peak_rss_mib"] for r in rows],
        "vfabric_rss_mib_per_mib_sent": slope(rows, "vfabric"),
        "htsim_rss_mib_per_mib_sent": slope(rows, "htsim"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ci", action="store_true", help="the CI workloads (adds the incast)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run these workloads only")
    parser.add_argument("--repeat", type=int, default=1, help="runs per side (best of)")
    parser.add_argument(
        "--flow-kib",
        type=int,
        nargs="+",
        default=list(DEFAULT_FLOW_KIB),
        metavar="KIB",
        help="without --ci: the 32-host permutation's flow sizes, KiB (default: 1024 4096)",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        print(f"htsim_compare: --repeat {args.repeat}: must be at least 1", file=sys.stderr)
        return 2
    if any(kib < 1 for kib in args.flow_kib):
        print(f"htsim_compare: --flow-kib {args.flow_kib}: sizes must be >= 1", file=sys.stderr)
        return 2
    try:
        chosen = workloads(args)
        binary = htsim.find_htsim()
    except HtsimDiffError as exc:
        print(f"htsim_compare: {exc}", file=sys.stderr)
        return 2
    load_start = os.getloadavg()
    started = time.perf_counter()
    results, failed = [], []
    with tempfile.TemporaryDirectory(prefix="htsim-compare-") as tmp:
        for workload in chosen:
            print(f"htsim_compare: {workload.name} ...", file=sys.stderr, flush=True)
            try:
                results.append(compare_cost(workload, args.repeat, Path(tmp) / workload.name))
            except HtsimDiffError as exc:  # reported; the other workloads still run
                print(f"htsim_compare: {workload.name}: {exc}", file=sys.stderr)
                failed.append({"workload": workload.name, "error": str(exc)})
    report = {
        "htsim": binary.name,
        "hot_path": hotpath.describe(),
        "rss_floor_mib": rss_floor_mib(),
        "workloads": results,
        "rss_growth": rss_growth(results),
        "failed": failed,
        "load_average": {"start": load_start, "end": os.getloadavg()},
        "total_wall_s": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(report, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
