"""Size the controller's plan at the paper's full scale and print JSON.

Computes the full plan (every table entry of every switch, ``controller.plan``) of the
8-plane, 131,072-NIC fabric of 512-port switches (512 T0 + 256 T1 per plane, 6,144
switches; ``topologies.paper_scale()``), then encodes the P4Runtime entities of a sample of
switches (default: all of plane 0) to measure what a push costs per entity.

Budget: plan <= 60 s and <= 8 GiB. ``plan_seconds`` is wall-clock time, ``plan_cpu_seconds``
the CPU time the process used (they differ when other work shares the machine). ``peak_rss_bytes`` is the whole process's peak resident
set (interpreter and libraries included); ``--heap`` adds a second, slower run under
tracemalloc for the Python heap alone.

The paper's T0s have 512 data ports (1..512), which do not fit v1model's ``bit<9>`` port
numbers next to the CPU and drop ports, so this fabric uses 10-bit ports. The plan itself
is target-neutral; for the encoding sample the port fields of the P4Info are widened to
10 bits (``controller.entities.widen_port_fields``). This benchmark is about sizing: no
switch runs such a P4Info.

    python benchmarks/controller_plan.py [--planes 8] [--encode-planes 1] [--heap]
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

from controller.artifacts import p4emu_pipeline
from controller.entities import EntityCodec, widen_port_fields
from controller.plan import plan_fabric
from topologies import paper_scale

BUDGET_SECONDS = 60.0
BUDGET_BYTES = 8 << 30
PORT_BITS = 10


def rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def timed_run(planes: int, encode_planes: int) -> dict[str, Any]:
    codec = EntityCodec(widen_port_fields(p4emu_pipeline().p4info, PORT_BITS))
    gc.collect()
    baseline = rss_bytes()
    start, cpu_start = time.perf_counter(), time.process_time()
    topo = paper_scale(planes)
    plan = plan_fabric(topo)
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    peak = rss_bytes()
    entries = plan.entry_count()
    result: dict[str, Any] = {
        "topology": topo.name,
        "planes": topo.plane_count,
        "switches": len(plan),
        "nics": topo.nic_count,
        "port_bits": topo.switch_settings.port_bits,
        "entries": entries,
        "entries_by_table": plan.count_by_table(),
        "usid_routes": plan.addresses.route_count(),
        "plan_seconds": round(seconds, 3),
        "plan_cpu_seconds": round(cpu_seconds, 3),  # wall time minus waiting for a busy CPU
        "entries_per_second": round(entries / seconds),
        "baseline_rss_bytes": baseline,
        "peak_rss_bytes": peak,
        "peak_rss_gib": round(peak / (1 << 30), 3),
    }
    result["within_budget"] = seconds <= BUDGET_SECONDS and peak <= BUDGET_BYTES

    sample = [sw for sw in plan if sw.plane < encode_planes]
    count = 0
    start = time.perf_counter()
    for sw in sample:
        for entry in sw.entries:
            codec.encode_update("INSERT", entry)
        count += len(sw.entries)
    encode_seconds = time.perf_counter() - start
    if count:
        per_entity = encode_seconds / count
        result["encode"] = {
            "switches": len(sample),
            "entities": count,
            "seconds": round(encode_seconds, 3),
            "microseconds_per_entity": round(per_entity * 1e6, 3),
            "fabric_seconds_extrapolated": round(per_entity * entries, 1),
        }
    return result


def heap_run(planes: int) -> dict[str, Any]:
    tracemalloc.start()
    plan = plan_fabric(paper_scale(planes))
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"heap_bytes": current, "heap_peak_bytes": peak, "entries": plan.entry_count()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--planes", type=int, default=8)
    parser.add_argument(
        "--encode-planes", type=int, default=1, help="planes whose entities are encoded"
    )
    parser.add_argument("--heap", action="store_true", help="also measure the Python heap")
    args = parser.parse_args()
    result: dict[str, Any] = {
        "benchmark": "controller_plan",
        "budget": {"seconds": BUDGET_SECONDS, "bytes": BUDGET_BYTES},
        "note": (
            "10-bit ports: a 512-port T0 does not fit v1model's bit<9>; the encoding sample "
            "uses a P4Info with port fields widened to 10 bits (sizing only)"
        ),
        **timed_run(args.planes, args.encode_planes),
    }
    if args.heap:
        gc.collect()
        result["heap"] = heap_run(args.planes)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
