"""Speed of the virtual-time fabric (vfabric): P4 switches + MRC NICs in one event loop.

Three runs, each reported with wall seconds, simulated switch traversals per wall second,
simulated Gb/s (data delivered per virtual second) per wall second, and the process's peak
RSS after it:

- ``demo``: ``mrc-testbed demo``'s scenario (tiny, nic0 -> nic3, 32 MiB, a T0-T1 link cut
  and restored), with its repath time compared with the base RTT. ``wall_s`` is the whole
  demo (building the fabric, the run, results, the plot: the 20 s target);
  ``run_wall_s`` the simulation alone, over which its traversal and Gb/s rates are
  counted, as for the other two runs (``traversals_per_demo_wall_s`` counts them over the
  whole demo);
- ``tiny_64MiB``: 64 MiB nic0 -> nic3 on ``tiny``, no fault;
- ``small_all_to_all``: every ordered pair of the 8 NICs of ``small`` (56 transfers,
  ``--a2a-bytes`` each).

Targets (docs/virtual-fabric.md): >= 20,000 traversals per wall second, demo <= 20 s wall,
repath <= 2 RTTs after the first loss. On a machine shared with other jobs wall time
overstates the cost, so every run also reports CPU seconds (``time.process_time``) and
traversals per CPU second, and ``pipeline`` measures p4emu's bare pipeline (one switch,
same program and entries, no fabric, no NICs) on one data frame of the same transfer,
sent again and again, in the same process (``fabric_vs_same_frame_pipeline``: the fabric's
traversal rate per CPU second as a fraction of it). A best case: one switch's tables, one
frame. So ``pipeline_replay`` also measures p4emu alone on the fabric's own workload: the
tiny and all-to-all runs are run again with every frame each switch receives recorded,
then those frames are replayed, in order, through switches with the same entries but no
fabric, no NICs and no rates; ``fabric_vs_pipeline`` is the fabric's rate as a fraction
of that (the issue asks for within 2x, i.e. at least 0.5): what the fabric around the
P4 program costs. The load average at the start and the end says how
busy the machine was; ``hot_path`` which path ran (compiled or pure Python,
docs/virtual-fabric.md). ``--bytecodes`` adds the Python bytecodes run per traversal (1 MiB
on ``tiny``, all-to-all on ``small`` with 256 KiB each, and the bare pipeline), a cost
measure that the machine's load does not change. Prints one JSON document.

Usage: ``python benchmarks/virtual_fabric.py [--a2a-bytes N] [--skip NAME ...] [--no-replay]
[--bytecodes]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clikit import hotpath  # noqa: E402 - first: the compiled-or-pure finder
from mrc_wire import scapy_layers  # noqa: E402, F401 - scapy dissects the pcap frames
from nic_emu.config import NicConfig  # noqa: E402
from testbed.demo import DemoOptions, run_demo  # noqa: E402
from vfabric import VirtualFabric  # noqa: E402

TARGET_TRAVERSALS_PER_S = 20_000
TARGET_DEMO_WALL_S = 20.0
TARGET_REPATH_RTTS = 2.0


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(fabric: VirtualFabric) -> dict[str, Any]:
    started, cpu_started = time.perf_counter(), time.process_time()
    finished = fabric.run()
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    delivered = sum(t.bytes_verified for t in fabric.transfers)
    virtual_s = fabric.now / 1e9
    gbps = delivered * 8 / virtual_s / 1e9 if virtual_s else 0.0
    return {
        "finished": finished,
        "all_intact": all(t.intact for t in fabric.transfers),
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "virtual_us": round(fabric.now / 1000, 1),
        "switch_traversals": fabric.traversals(),
        "traversals_per_wall_s": round(fabric.traversals() / wall),
        "traversals_per_cpu_s": round(fabric.traversals() / cpu),
        "simulated_gbps": round(gbps, 2),
        "simulated_gbps_per_wall_s": round(gbps / wall, 2),
        "bytes_delivered": delivered,
        "event_log_sha256": fabric.event_log_sha256,
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }


def bench_demo() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        started, cpu_started = time.perf_counter(), time.process_time()
        result = run_demo(DemoOptions(out_dir=Path(tmp)))
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
        data = json.loads((Path(tmp) / "results.json").read_text())
    traversals = int(data["counters"]["switch_traversals"])
    virtual_s = data["end_ns"] / 1e9
    gbps = result.bytes_delivered_intact * 8 / virtual_s / 1e9
    base_rtt_us = NicConfig().base_rtt_ns / 1000
    repath = max(result.repath_us) if result.repath_us else None
    run_wall = result.run_wall_s
    return {
        "intact": result.intact,
        "wall_s": round(wall, 3),
        "run_wall_s": round(run_wall, 3),
        "cpu_s": round(cpu, 3),
        "virtual_us": round(data["end_ns"] / 1000, 1),
        "switch_traversals": traversals,
        "traversals_per_wall_s": round(traversals / run_wall),
        "traversals_per_demo_wall_s": round(traversals / wall),
        "traversals_per_cpu_s": round(traversals / cpu),
        "simulated_gbps": round(gbps, 2),
        "simulated_gbps_per_wall_s": round(gbps / run_wall, 2),
        "repath_us": repath,
        "base_rtt_us": base_rtt_us,
        "repath_rtts": round(repath / base_rtt_us, 2) if repath is not None else None,
        "goodput_fraction": result.goodput_fraction,
        "event_log_sha256": result.event_log_sha256,
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "meets_demo_wall_target": wall <= TARGET_DEMO_WALL_S,
        "meets_repath_target": repath is not None and repath <= TARGET_REPATH_RTTS * base_rtt_us,
    }


def data_frame() -> bytes:
    """The first data frame nic0 sends to nic3 on tiny (captured from a pcap)."""
    from scapy.utils import rdpcap

    with tempfile.TemporaryDirectory() as tmp:
        fabric = VirtualFabric("tiny", pcap_dir=tmp)
        fabric.transfer("nic0", "nic3", 64 << 10)
        fabric.run()
        fabric.close()
        return bytes(rdpcap(str(Path(tmp) / "nic0--p0-t0-0.pcap"))[0])


def programmed_switch(fabric: VirtualFabric, name: str) -> Any:
    """A p4emu switch with the entries of ``fabric``'s switch ``name``: no rate, no
    fabric, frames collected by the caller."""
    from p4emu.runtime.clock import VirtualClock
    from p4emu.switch import Switch
    from vfabric.fabric import PRIORITY_QUEUES
    from vfabric.program import program_switch, push_updates

    program = fabric.program
    switch = Switch(
        program.checked, clock=VirtualClock(), cpu_port=510, priority_queues=PRIORITY_QUEUES
    )
    program_switch(switch, push_updates(fabric.plan[name], program.codec), name)
    return switch


def pipeline_switch() -> tuple[Any, int, bytes]:
    """One T0 of tiny with its entries, no rate, no fabric; its NIC port and a data frame."""
    fabric = VirtualFabric("tiny")
    switch = programmed_switch(fabric, "p0-t0-0")
    return switch, fabric.topology.nic_port("nic0", 0).t0_port, data_frame()


def bench_pipeline(packets: int) -> dict[str, Any]:
    """p4emu's bare pipeline: one T0 of tiny with its entries, no rate, no fabric."""
    switch, port, frame = pipeline_switch()
    started, cpu_started = time.perf_counter(), time.process_time()
    for _ in range(packets):
        switch.inject(port, frame)
        switch.collect()
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    assert switch.packets_out == packets, "the pipeline did not forward the frame"
    return {
        "packets": packets,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "traversals_per_wall_s": round(packets / wall),
        "traversals_per_cpu_s": round(packets / cpu),
    }


Traversal = tuple[str, int, bytes]  # (switch, ingress port, frame)


def record_traversals(fabric: VirtualFabric) -> list[Traversal]:
    """Every frame a switch of ``fabric`` will receive, in order, once it runs."""
    trace: list[Traversal] = []
    for wire in fabric.wires.values():
        if wire.dst in fabric.switches:
            receive, name = wire.sink, wire.dst

            def sink(port: int, frame: bytes, receive: Any = receive, name: str = name) -> None:
                trace.append((name, port, frame))
                receive(port, frame)

            wire.sink = sink
    return trace


def bench_replay(build: Callable[[], VirtualFabric]) -> dict[str, Any]:
    """p4emu's pipeline on the fabric's own workload: a run of ``build()`` is recorded
    (every frame each switch received), then replayed through switches with the same
    entries but no fabric, no NICs, no rates: the rate at which p4emu alone forwards
    exactly the traversals the fabric simulated."""
    fabric = build()
    trace = record_traversals(fabric)
    fabric.run()
    fabric.close()
    assert len(trace) == fabric.traversals(), "a traversal was not recorded"
    switches = {name: programmed_switch(fabric, name) for name in fabric.switches}
    started, cpu_started = time.perf_counter(), time.process_time()
    for name, port, frame in trace:
        switch = switches[name]
        switch.inject(port, frame)
        switch.collect()
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    return {
        "traversals": len(trace),
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "traversals_per_wall_s": round(len(trace) / wall),
        "traversals_per_cpu_s": round(len(trace) / cpu),
    }


def count_bytecodes(run: Callable[[], Any]) -> int:
    """Python bytecodes executed by ``run()`` (``sys.settrace`` opcode events): a cost
    measure that, unlike CPU time, does not depend on the machine or its load."""
    count = 0

    def on_opcode(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "opcode":
            count += 1
        return on_opcode

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        return on_opcode

    sys.settrace(on_call)
    try:
        run()
    finally:
        sys.settrace(None)
    return count


def bench_bytecodes() -> dict[str, Any]:
    """Bytecodes per switch traversal: 1 MiB nic0 -> nic3 on tiny, all-to-all on small
    (256 KiB each), and the bare pipeline (as :func:`bench_pipeline`, 200 packets after a
    warm-up)."""
    fabric = VirtualFabric("tiny")
    fabric.transfer("nic0", "nic3", 1 << 20)
    fabric_codes = count_bytecodes(fabric.run) / fabric.traversals()
    a2a = VirtualFabric("small")
    names = [nic.name for nic in a2a.topology.nics]
    for src in names:
        for dst in names:
            if src != dst:
                a2a.transfer(src, dst, 256 << 10)
    a2a_codes = count_bytecodes(a2a.run) / a2a.traversals()
    switch, port, frame = pipeline_switch()
    packets = 200

    def feed() -> None:
        for _ in range(packets):
            switch.inject(port, frame)
            switch.collect()

    feed()
    pipeline_codes = count_bytecodes(feed) / packets
    return {
        "tiny_1MiB": round(fabric_codes),
        "small_all_to_all_256KiB": round(a2a_codes),
        "pipeline": round(pipeline_codes),
        "fabric_vs_pipeline": round(pipeline_codes / fabric_codes, 2),
    }


def tiny_fabric() -> VirtualFabric:
    fabric = VirtualFabric("tiny")
    fabric.transfer("nic0", "nic3", 64 << 20)
    return fabric


def all_to_all_fabric(nbytes: int) -> VirtualFabric:
    fabric = VirtualFabric("small")
    names = [nic.name for nic in fabric.topology.nics]
    for src in names:
        for dst in names:
            if src != dst:
                fabric.transfer(src, dst, nbytes)
    return fabric


def bench_tiny() -> dict[str, Any]:
    return measure(tiny_fabric())


def bench_all_to_all(nbytes: int) -> dict[str, Any]:
    fabric = all_to_all_fabric(nbytes)
    out = measure(fabric)
    out["transfers"] = len(fabric.transfers)
    out["bytes_each"] = nbytes
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a2a-bytes", type=int, default=1 << 20)
    parser.add_argument("--pipeline-packets", type=int, default=5000)
    parser.add_argument("--skip", nargs="*", default=[], choices=["demo", "tiny", "a2a"])
    parser.add_argument(
        "--no-replay",
        action="store_true",
        help="skip the replay of the tiny and all-to-all runs' traversals (pipeline_replay)",
    )
    parser.add_argument(
        "--bytecodes",
        action="store_true",
        help="also count Python bytecodes per traversal (fabric and bare pipeline)",
    )
    args = parser.parse_args(argv)
    report: dict[str, Any] = {
        "hot_path": hotpath.describe(),
        "load_average_at_start": [round(x, 1) for x in os.getloadavg()],
        "targets": {
            "traversals_per_wall_s": TARGET_TRAVERSALS_PER_S,
            "demo_wall_s": TARGET_DEMO_WALL_S,
            "repath_rtts": TARGET_REPATH_RTTS,
        },
    }
    report["pipeline"] = bench_pipeline(args.pipeline_packets)
    if "demo" not in args.skip:
        report["demo"] = bench_demo()
    if "tiny" not in args.skip:
        report["tiny_64MiB"] = bench_tiny()
    if "a2a" not in args.skip:
        report["small_all_to_all"] = bench_all_to_all(args.a2a_bytes)
    if args.bytecodes:
        report["bytecodes_per_traversal"] = bench_bytecodes()
    runs = {k: report[k] for k in ("demo", "tiny_64MiB", "small_all_to_all") if k in report}
    pipeline = report["pipeline"]["traversals_per_cpu_s"]
    report["fabric_vs_same_frame_pipeline"] = {
        k: round(v["traversals_per_cpu_s"] / pipeline, 2) for k, v in runs.items()
    }
    replays = {}
    if "tiny_64MiB" in runs and not args.no_replay:
        replays["tiny_64MiB"] = bench_replay(tiny_fabric)
    if "small_all_to_all" in runs and not args.no_replay:
        replays["small_all_to_all"] = bench_replay(lambda: all_to_all_fabric(args.a2a_bytes))
    if replays:
        report["pipeline_replay"] = replays
        report["fabric_vs_pipeline"] = {
            k: round(runs[k]["traversals_per_cpu_s"] / v["traversals_per_cpu_s"], 2)
            for k, v in replays.items()
        }
    rates = [v["traversals_per_wall_s"] for v in runs.values()]
    report["meets_traversal_target"] = bool(rates) and min(rates) >= TARGET_TRAVERSALS_PER_S
    report["hot_path"] = hotpath.describe()  # again: with the generated P4 modules loaded
    report["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
