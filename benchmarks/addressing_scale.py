"""Size the topology model and the uSID route plan at the paper's full scale.

Builds the 8-plane, 131,072-NIC fabric of 512-port switches (512 T0 + 256 T1 per plane,
6,144 switches), then every switch's ``usid_route`` entries, and prints JSON:
seconds and memory per phase, the route count, and whether the plan fits the budget
(<= 60 s, <= 8 GiB). Timings come from a run without tracemalloc; the Python-heap peaks
from a second run with it (tracemalloc slows allocation down several times).

    python benchmarks/addressing_scale.py [--planes 8] [--links] [--paths 100000]
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from topologies import AddressPlan, Topology, paper_scale

BUDGET_SECONDS = 60.0
BUDGET_BYTES = 8 << 30


def build_all_routes(plan: AddressPlan) -> list[list[Any]]:
    return [plan.routes_for(switch) for switch in plan.topology.switches]


def timed_run(planes: int, paths: int, iterate_links: bool) -> dict[str, Any]:
    start = time.perf_counter()
    topo = paper_scale(planes)
    built = time.perf_counter()
    plan = AddressPlan(topo)
    planned = time.perf_counter()
    routes = build_all_routes(plan)
    routed = time.perf_counter()
    result: dict[str, Any] = {
        "topology_build_seconds": round(built - start, 4),
        "address_plan_seconds": round(planned - built, 4),
        "routes_seconds": round(routed - planned, 3),
        "route_count": sum(len(r) for r in routes),
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    assert result["route_count"] == plan.route_count()
    del routes
    gc.collect()
    result["path_for_ev_microseconds"] = round(time_paths(plan, paths), 3)
    if iterate_links:
        start = time.perf_counter()
        count = sum(1 for _ in topo.links())
        result["iterate_all_links_seconds"] = round(time.perf_counter() - start, 3)
        assert count == topo.link_count
    return result


def time_paths(plan: AddressPlan, count: int) -> float:
    topo = plan.topology
    nics = topo.nic_count
    evs = plan.ev_set(256)
    start = time.perf_counter()
    for i in range(count):
        plan.path_for_ev(i % nics, (i * 7919 + 1) % nics, evs[i % len(evs)])
    return (time.perf_counter() - start) / count * 1e6


def heap_run(planes: int) -> dict[str, Any]:
    tracemalloc.start()
    topo: Topology = paper_scale(planes)
    topology_peak = tracemalloc.get_traced_memory()[1]
    plan = AddressPlan(topo)
    routes = build_all_routes(plan)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del routes
    return {
        "topology_heap_peak_bytes": topology_peak,
        "routes_held_heap_bytes": current,
        "routes_heap_peak_bytes": peak,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--planes", type=int, default=8)
    parser.add_argument("--paths", type=int, default=100_000, help="path_for_ev calls to time")
    parser.add_argument("--links", action="store_true", help="also iterate all ~2M links")
    args = parser.parse_args()
    topo = paper_scale(args.planes)
    result: dict[str, Any] = {
        "fabric": topo.summary(),
        "planes": topo.plane_count,
        "switches": topo.switch_count,
        "nics": topo.nic_count,
        "links": topo.link_count,
    }
    del topo
    result.update(timed_run(args.planes, args.paths, args.links))
    result.update(heap_run(args.planes))
    result["budget_seconds"] = BUDGET_SECONDS
    result["budget_bytes"] = BUDGET_BYTES
    result["within_budget"] = (
        result["routes_seconds"] + result["topology_build_seconds"] <= BUDGET_SECONDS
        and max(result["peak_rss_bytes"], result["routes_heap_peak_bytes"]) <= BUDGET_BYTES
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
