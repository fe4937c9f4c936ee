"""p4emu throughput when several switches run the same program, fed round-robin.

Builds N in-process :class:`p4emu.switch.Switch` instances of ``p4src/mrc_switch.p4`` from
one checked program, each with the table population of ``benchmarks/p4emu_pps.py``, and
injects the same data packets into them round-robin (one packet per switch in turn), as
the virtual-time fabric interleaves its switches. Switches of one program share one
generated module (docs/p4emu-backend.md), so the per-packet cost should stay close to the
single-switch case. Prints one JSON line with packets per CPU-second for every N.

Usage: ``python benchmarks/p4emu_shared_pps.py [--packets N] [--switches 1 8 16]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from p4emu_pps import build_packets, build_switch  # noqa: E402

from p4emu.frontend import load_program  # noqa: E402
from p4emu.runtime.clock import VirtualClock  # noqa: E402


def run(program: object, switches: int, count: int, packets: list[bytes]) -> dict[str, object]:
    fleet = [build_switch(program) for _ in range(switches)]  # type: ignore[arg-type]
    for switch in fleet:  # warm up, and check that packets really are forwarded
        for i in range(50):
            switch.inject(1 + i % 32, packets[i % len(packets)])
        if len(switch.collect()) != 50:
            raise SystemExit(json.dumps({"error": "warm-up packets not forwarded"}))
    injects = [switch.inject for switch in fleet]
    forwarded = 0
    cpu_start = time.process_time()
    for i in range(count):
        injects[i % switches](1 + i % 32, packets[i & 255])
        if i & 1023 == 1023:
            for switch in fleet:
                clock = switch.clock
                assert isinstance(clock, VirtualClock)
                clock.advance(10)  # keeps the queues drained
                forwarded += len(switch.collect())
    for switch in fleet:
        switch.run_until_idle()
        forwarded += len(switch.collect())
    cpu = time.process_time() - cpu_start
    return {
        "switches": switches,
        "pps_cpu": round(count / cpu) if cpu > 0 else None,
        "packets": count,
        "forwarded": forwarded,
        "cpu_seconds": round(cpu, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=30000)
    parser.add_argument("--switches", type=int, nargs="+", default=[1, 8, 16])
    parser.add_argument("--program", type=Path, default=ROOT / "p4src" / "mrc_switch.p4")
    args = parser.parse_args(argv)
    program = load_program(args.program)
    packets = build_packets(256)
    runs = [run(program, n, args.packets, packets) for n in args.switches]
    print(json.dumps({"runs": runs, "python": sys.version.split()[0]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
