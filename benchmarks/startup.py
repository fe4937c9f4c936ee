"""How fast ``mrc-testbed up`` brings a local fabric to "first transfer possible", and how
large a fabric this machine can run locally.

For ``tiny`` and ``small`` (local mode, p4emu-switch processes over loopback UDP) prints
the seconds from the call to ``up`` until every route is installed, until every NIC
answers, and until a first transfer (between NICs under different T0s, so through a T1)
has completed intact; the target is < 5 s for ``small``. Then brings up ever larger
two-tier fabrics until one fails to start, to transfer, or to fit the time limit, and
reports the largest that completed a transfer (its switch count). Prints JSON.

    python benchmarks/startup.py [--nic-command CMD] [--max-switches N] [--limit-s S]

``--nic-command`` runs another NIC program (default: ``nic-emu``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from testbed import layout
from testbed.exceptions import PortInUseError, TestbedError
from testbed.local import check_ports_free, up_local
from testbed.options import FabricOptions
from testbed.rundir import teardown
from testbed.traffic import TransferError, run_transfer
from topologies import Topology, load, two_tier

TARGET_SMALL_S = 5.0
FIRST_TRANSFER_BYTES = 64 * 1024
# Fabrics tried for the largest one, by switch count: planes x (T0 + T1).
LADDER = (
    (2, 2, 2, 2),  # 8 switches (tiny's shape)
    (4, 4, 2, 2),  # 24 (small's shape)
    (4, 8, 4, 2),  # 48
    (8, 8, 4, 4),  # 96 (paper-8plane's shape)
    (8, 12, 8, 2),  # 160
    (8, 16, 8, 2),  # 192
    (8, 24, 8, 2),  # 256
)


def free_bases(topology: Topology) -> tuple[int, int]:
    for udp in range(20000, 30000, 1000):
        for grpc in range(10000, 19000, 500):
            try:
                ends = layout.udp_link_ports(topology, udp)
                endpoints = layout.grpc_endpoints(topology, grpc)
                check_ports_free(
                    sorted(end.local for end in ends.values()),
                    [layout.grpc_port(e) for e in endpoints.values()],
                )
            except (PortInUseError, TestbedError):
                continue
            return udp, grpc
    raise TestbedError(f"no free port block for {topology.name}")


def measure(topology: Topology, nic_command: list[str] | None, limit_s: float) -> dict[str, Any]:
    udp, grpc = free_bases(topology)
    with tempfile.TemporaryDirectory(prefix="mrt-bench-", dir="/tmp") as root:
        options = FabricOptions(
            name="bench",
            root=Path(root),
            udp_base_port=udp,
            grpc_base_port=grpc,
            nic_command=nic_command,
            start_timeout=limit_s,
        )
        started = time.perf_counter()
        result = up_local(topology, options)
        try:
            src = topology.nics[0].name
            dst = topology.nics[topology.nics_per_t0].name  # under T0 1: the path crosses a T1
            outcome = run_transfer(result.fabric, src, dst, FIRST_TRANSFER_BYTES, timeout=limit_s)
            first_transfer = time.perf_counter() - started
        finally:
            teardown(result.fabric.rundir)
    return {
        "topology": topology.name,
        "switches": topology.switch_count,
        "nics": topology.nic_count,
        "links": topology.link_count,
        "entries": result.entries,
        "routes_installed_s": round(result.phases["routes_installed"], 3),
        "nics_ready_s": round(result.phases["nics_ready"], 3),
        "first_transfer_done_s": round(first_transfer, 3),
        "first_transfer_intact": outcome.intact,
        "phases_s": {k: round(v, 3) for k, v in result.phases.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nic-command", type=shlex.split, help="NIC program instead of nic-emu")
    parser.add_argument("--max-switches", type=int, default=256, help="stop the ladder here")
    parser.add_argument(
        "--limit-s", type=float, default=300.0, help="give up on a fabric after this"
    )
    args = parser.parse_args()

    report: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count()},
        "target_small_s": TARGET_SMALL_S,
    }
    for name in ("tiny", "small"):
        report[name] = measure(load(name), args.nic_command, args.limit_s)
    report["small_meets_target"] = report["small"]["first_transfer_done_s"] < TARGET_SMALL_S

    largest: dict[str, Any] | None = None
    tried: list[dict[str, Any]] = []
    for shape in LADDER:
        topology = two_tier(*shape)
        if topology.switch_count > args.max_switches:
            break
        try:
            result = measure(topology, args.nic_command, args.limit_s)
        except (TestbedError, TransferError, OSError) as exc:
            tried.append(
                {
                    "topology": topology.name,
                    "switches": topology.switch_count,
                    "error": str(exc)[:2000],
                }
            )
            break
        tried.append(result)
        if not result["first_transfer_intact"] or result["first_transfer_done_s"] > args.limit_s:
            break
        largest = result
    report["ladder"] = tried
    report["largest_local_fabric"] = (
        {
            "topology": largest["topology"],
            "switches": largest["switches"],
            "first_transfer_done_s": largest["first_transfer_done_s"],
        }
        if largest
        else None
    )
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
