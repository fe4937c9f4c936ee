"""The differential against uet-htsim's htsim_uec (docs/reference-htsim.md).

Each workload (a two-tier fat tree and its traffic, described once) is translated into
htsim's inputs and into a virtual-fabric run of the same shape; both run as child
processes and are compared per flow: completion (median, p99, max), retransmitted bytes,
trims and NACKs, the victim's slowdown beside an incast, and the cost of each side (wall
seconds, peak RSS, and the virtual fabric's switch traversals per second) with their
ratios. Each target of issue #23 is reported met or not, and whether that was expected
(``testbed/reference/not_reproduced.yaml``); ``surprises`` lists every target whose
outcome differs from that list; ``failed`` every workload whose run failed (the error names
the directory keeping its logs; the exit status is then 1). Prints one JSON document.

htsim_uec comes from ``$MRC_HTSIM`` or ``shared/htsim/bin/htsim_uec`` beside the
clone.

Usage: ``python benchmarks/htsim_diff.py [--ci | --full] [--workloads FILE.yaml]
[--only NAME ...] [--base-rtt-ns NS] [--per-flow] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testbed.reference import suites  # noqa: E402
from testbed.reference.compare import compare  # noqa: E402
from testbed.reference.exceptions import HtsimDiffError  # noqa: E402
from testbed.reference.htsim import find_htsim  # noqa: E402
from testbed.reference.results import rss_floor_mib  # noqa: E402
from testbed.reference.workload import Workload, load  # noqa: E402


def with_base_rtt(workload: Workload, base_rtt_ns: int) -> Workload:
    """The workload with our NICs' base RTT set (its name says so, as a suite's would)."""
    return replace(workload, base_rtt_ns=base_rtt_ns, name=f"{workload.name}-rtt{base_rtt_ns}")


def select(args: argparse.Namespace) -> list[Workload]:
    if args.workloads is not None:
        pool = load(args.workloads)
    elif args.full:
        pool = suites.full()
    elif args.ci:
        pool = list(suites.CI)
    else:
        pool = list(suites.DEFAULT)
    if args.base_rtt_ns is not None:
        pool = [with_base_rtt(w, args.base_rtt_ns) for w in pool]
    return suites.select(pool, args.only)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--ci", action="store_true", help="only the workloads the CI test runs")
    group.add_argument(
        "--full", action="store_true", help="8-128 hosts, seeds 1-3, incasts 4:1-31:1 (hours)"
    )
    group.add_argument("--workloads", type=Path, help="a YAML file of workloads")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run these workloads only")
    parser.add_argument(
        "--base-rtt-ns",
        type=int,
        metavar="NS",
        help="our NICs' base RTT (default: the fabric's, as htsim computes it)",
    )
    parser.add_argument("--per-flow", action="store_true", help="add every flow's figures")
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="work under DIR (failed runs leave logs there)"
    )
    args = parser.parse_args()
    try:
        workloads = select(args)
        binary = find_htsim()
    except HtsimDiffError as exc:
        print(f"htsim_diff: {exc}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    load_start = os.getloadavg()
    results: list[dict[str, Any]] = []
    surprises: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for workload in workloads:
        print(f"htsim_diff: {workload.name} ...", file=sys.stderr, flush=True)
        try:
            result = compare(workload, work_dir=args.keep, per_flow=args.per_flow)
        except HtsimDiffError as exc:  # reported, and the other workloads still run
            print(f"htsim_diff: {workload.name}: {exc}", file=sys.stderr)
            failed.append({"workload": workload.name, "error": str(exc)})
            continue
        results.append(result)
        surprises += [
            {"workload": workload.name, **check}
            for check in result["targets"]
            if not check["as_expected"]
        ]
    report = {
        "htsim": str(binary.name),
        "rss_floor_mib": rss_floor_mib(),
        "workloads": results,
        "surprises": surprises,
        "failed": failed,
        "load_average": {"start": load_start, "end": os.getloadavg()},
        "total_wall_s": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(report, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
