"""Memory of a NIC process under big transfers (issue 29's probe): ``--sends`` transfers
of ``--gigabytes`` each, started at once from one ``nic-emu serve`` process to another
(back to back over loopback UDP, process defaults), each checked by SHA-256 against the
receiver's ``received`` report.

Prints one JSON line: the peak resident set (VmHWM) of the sender and the receiver in MB,
the most the NIC budget held (sampled), the transfers' times and goodput, and the
machine's load (wall-clock numbers). The claim it checks: a NIC's memory follows its
in-flight and out-of-order data, not the size of its transfers (three 1 GiB sends stay
under 300 MB RSS).

    python benchmarks/nic_memory.py [--gigabytes 1] [--sends 3] [--data random]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.nic_emu_process import config, free_ports, wait_ready  # noqa: E402
from nic_emu.client import ControlClient  # noqa: E402

RSS_CLAIM_MB = 300  # issue 29: three 1 GiB sends from one NIC stay under this
SAMPLE_S = 0.5
NOTE_S = 30.0  # progress and peak RSS so far, on stderr


def status_kb(pid: int, key: str) -> int:
    """A ``VmRSS``/``VmHWM`` line of /proc/PID/status, in kB."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise SystemExit(f"benchmark: no {key} in /proc/{pid}/status")


def run(args: argparse.Namespace) -> dict[str, Any]:
    ports = free_ports(4)
    size = int(args.gigabytes * (1 << 30))
    with tempfile.TemporaryDirectory(prefix="nic-memory-bench-") as tmp_text:
        tmp = Path(tmp_text)
        paths = {
            "nic0": config(tmp, "nic0", {0: (ports[0], ports[1]), 1: (ports[2], ports[3])}, "tiny"),
            "nic3": config(tmp, "nic3", {0: (ports[1], ports[0]), 1: (ports[3], ports[2])}, "tiny"),
        }
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        procs = {
            nic: subprocess.Popen(
                [sys.executable, "-m", "nic_emu", "serve", "--config", str(path)], env=env
            )
            for nic, path in paths.items()
        }
        try:
            for nic, proc in procs.items():
                wait_ready(tmp / f"{nic}.sock", proc)
            start_rss = {nic: status_kb(p.pid, "VmRSS") for nic, p in procs.items()}
            held_peak = {"nic0": 0, "nic3": 0}
            with (
                ControlClient(tmp / "nic0.sock", timeout=120) as a,
                ControlClient(tmp / "nic3.sock", timeout=120) as b,
            ):
                t0 = time.monotonic()
                next_note = t0 + NOTE_S
                ids = [
                    a.request(
                        "send",
                        to="nic3",
                        bytes=size,
                        seed=i,
                        data=args.data,
                        deadline_s=args.timeout,
                    )["transfer"]
                    for i in range(args.sends)
                ]
                reports: dict[int, dict[str, Any]] = {}
                while len(reports) < len(ids):
                    for nic, client in (("nic0", a), ("nic3", b)):
                        held = client.request("stats")["process"]["memory_held_bytes"]
                        held_peak[nic] = max(held_peak[nic], held)
                    for tid in ids:
                        if tid not in reports:
                            report = a.request("transfer", id=tid)
                            if report["done"]:
                                reports[tid] = report
                    if time.monotonic() - t0 > args.timeout:
                        raise SystemExit("benchmark: transfers not done in time")
                    if time.monotonic() >= next_note:  # partial figures, should it be cut short
                        next_note += NOTE_S
                        note = {
                            "t_s": round(time.monotonic() - t0),
                            "acked_mb": sum(
                                a.request("transfer", id=t)["bytes_acked"] >> 20 for t in ids
                            ),
                            **{
                                f"{n}_peak_rss_mb": status_kb(p.pid, "VmHWM") >> 10
                                for n, p in procs.items()
                            },
                        }
                        print(json.dumps(note), file=sys.stderr, flush=True)
                    time.sleep(SAMPLE_S)
                wall = time.monotonic() - t0
                failed = [r["failed"] for r in reports.values() if r["failed"]]
                if failed:
                    raise SystemExit(f"benchmark: transfer failed: {failed[0]}")
                digests = {m["sha256"] for m in b.request("received")["messages"] if m["complete"]}
                intact = all(p["sha256"] in digests for r in reports.values() for p in r["parts"])
                peak = {nic: status_kb(p.pid, "VmHWM") for nic, p in procs.items()}
                a.request("shutdown")
                b.request("shutdown")
        finally:
            for proc in procs.values():
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.terminate()
                    proc.wait()
    return {
        "intact": intact,
        "sender_peak_rss_mb": round(peak["nic0"] / 1024, 1),
        "receiver_peak_rss_mb": round(peak["nic3"] / 1024, 1),
        "sender_idle_rss_mb": round(start_rss["nic0"] / 1024, 1),
        "receiver_idle_rss_mb": round(start_rss["nic3"] / 1024, 1),
        "sender_budget_held_peak_mb": round(held_peak["nic0"] / (1 << 20), 1),
        "receiver_budget_held_peak_mb": round(held_peak["nic3"] / (1 << 20), 1),
        "under_claim": max(peak.values()) / 1024 < RSS_CLAIM_MB,
        "wall_s": round(wall, 1),
        "transfer_s": [round(r["elapsed_s"], 1) for r in reports.values()],
        "goodput_mbytes_per_s": round(
            sum(r["bytes_acked"] for r in reports.values()) / wall / 1e6, 1
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gigabytes", type=float, default=1.0)
    parser.add_argument("--sends", type=int, default=3)
    parser.add_argument("--data", default="random", help="random, random:S, pattern, file:PATH")
    parser.add_argument(
        "--timeout", type=float, default=3600.0, help="seconds (also each send's deadline)"
    )
    args = parser.parse_args()
    out = {
        "benchmark": "nic_memory",
        "gigabytes": args.gigabytes,
        "sends": args.sends,
        "data": args.data,
        "rss_claim_mb": RSS_CLAIM_MB,
        **run(args),
        "load_average_1min": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
