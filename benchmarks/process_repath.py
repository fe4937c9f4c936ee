"""Repath time of the nic-emu processes on the local process fabric (issue 15).

Runs the demo (``testbed.demo.run_demo``: ``tiny`` in local mode, a transfer nic0 ->
nic3, the T0-T1 link p0-t0-0 -- p0-t1-0 cut at a third and restored at two thirds)
``--runs`` times, each on its own run directory and ports, and prints one JSON document:
per run the repath events' times (from the send time of the first packet lost on the cut
path to the last data packet sent on it, as the sender's NIC reports them), their median
and the transfer's goodput; over the runs the median of the per-run medians and the
spread (largest per-run median / smallest). Target: median <= 5 ms, spread <= 2.

    python benchmarks/process_repath.py [--runs 5] [--bytes 32M] [--transport JSON]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.startup import free_bases
from testbed.demo import DEMO_TOPOLOGY, DemoOptions, run_demo
from testbed.exceptions import TestbedError
from testbed.local import LocalOptions
from topologies import load

TARGET_MEDIAN_MS = 5.0
TARGET_SPREAD = 2.0


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def one_run(index: int, size: int, transport: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mrc-repath-", dir="/tmp") as root:
        udp, grpc = free_bases(load(DEMO_TOPOLOGY))
        options = DemoOptions(
            size=size,
            plot=Path(root) / "plot.png",
            local=LocalOptions(
                name=f"repath{index}",
                root=Path(root),
                udp_base_port=udp,
                grpc_base_port=grpc,
                transport=transport,
            ),
        )
        started = time.monotonic()
        try:
            result = run_demo(options)
        except TestbedError as exc:
            return {"run": index, "error": str(exc), "seconds": round(time.monotonic() - started, 2)}
    repaths_ms = [round(us / 1000, 3) for us in result.repath_us]
    return {
        "run": index,
        "intact": result.intact,
        "repath_events": len(repaths_ms),
        "repath_ms": repaths_ms,
        "median_repath_ms": statistics.median(repaths_ms) if repaths_ms else None,
        "max_repath_ms": max(repaths_ms) if repaths_ms else None,
        "goodput_gbps": round(result.size * 8 / result.elapsed_s / 1e9, 4),
        "retransmissions": result.retransmissions,
        "seconds": round(time.monotonic() - started, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="demo runs (default 5)")
    parser.add_argument("--bytes", default="32M", help="transfer size per run (default 32M)")
    parser.add_argument("--transport", default="{}", help="nic-emu transport overrides (JSON)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    try:
        transport = json.loads(args.transport)
    except json.JSONDecodeError as exc:
        parser.error(f"--transport is not JSON: {exc}")
    if not isinstance(transport, dict):
        parser.error("--transport must be a JSON object")
    runs = [one_run(i, parse_size(args.bytes), transport) for i in range(args.runs)]
    medians = [r["median_repath_ms"] for r in runs if r.get("median_repath_ms") is not None]
    median = statistics.median(medians) if medians else None
    spread = max(medians) / min(medians) if medians and min(medians) > 0 else None
    failed = [r for r in runs if "error" in r or not r.get("intact")]
    result = {
        "benchmark": "process_repath",
        "topology": DEMO_TOPOLOGY,
        "runs": runs,
        "median_repath_ms": median,
        "spread": round(spread, 3) if spread is not None else None,
        "target_median_ms": TARGET_MEDIAN_MS,
        "target_spread": TARGET_SPREAD,
        "meets_target": bool(
            median is not None
            and spread is not None
            and median <= TARGET_MEDIAN_MS
            and spread <= TARGET_SPREAD
            and not failed
            and len(medians) == len(runs)
        ),
        "failed_runs": len(failed),
        "python": sys.version.split()[0],
    }
    print(json.dumps(result, indent=2))
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
