"""Soak: a local fabric under back-to-back transfers while links flap, watching memory and
event-log sizes (issue 17, bounded resources).

Brings up ``tiny`` in local mode (p4emu-switch and nic-emu processes over loopback UDP),
then for ``--minutes`` keeps transfers running between NIC pairs under different T0s
while it cuts and restores, in turn, a T0-T1 link, a NIC link and a NIC port
(``--down-s`` down, ``--up-s`` up). Every ``--sample-s`` it reads the resident set
size of each switch and NIC process (VmRSS, and VmHWM: the peak) and the size of each
NIC's event log (with its rotated file), and the receive buffers the NICs hold. Prints
one JSON document: peak RSS per process kind, RSS growth from a quarter into the run
(after warm-up) to the end, the largest RSS (and receive buffers) over time and per
quarter of the run (flat memory: similar quarters after the first), log sizes,
transfers done and failed (with the failures' messages; ``--keep-logs`` also keeps the
event logs of a failed transfer's two NICs as they were when it failed).

    python benchmarks/soak.py [--minutes 10] [--size 4M] [--down-s 1] [--up-s 2]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.startup import free_bases
from clikit import byte_size
from nic_emu.eventfile import DEFAULT_EVENTS_MAX_BYTES
from testbed.exceptions import TestbedError
from testbed.fabric import Fabric
from testbed.local import up_local
from testbed.options import FabricOptions
from testbed.rundir import teardown
from testbed.traffic import start_transfer
from topologies import load

PAIRS = (("nic0", "nic3"), ("nic2", "nic1"), ("nic3", "nic0"), ("nic1", "nic2"))


def rss_kib(pid: int) -> tuple[int, int] | None:
    """(VmRSS, VmHWM) of ``pid`` in KiB, None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    values = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0])
    return values.get("VmRSS", 0), values.get("VmHWM", 0)


class Flapper:
    """Cuts and restores, in turn, a T0-T1 link, a NIC link and a NIC port."""

    def __init__(self, fabric: Fabric, down_s: float, up_s: float) -> None:
        self.fabric = fabric
        self.down_s = down_s
        self.up_s = up_s
        self.faults = itertools.cycle(
            (
                ("link", ("p0-t0-0", "p0-t1-0")),
                ("link", ("nic3", "p1-t0-1")),
                ("port", ("nic0", 1)),
                ("link", ("p1-t1-1", "p1-t0-1")),
            )
        )
        self.current: tuple[str, tuple[Any, Any]] | None = None
        self.next_change = time.monotonic() + up_s
        self.cycles = 0

    def step(self) -> None:
        now = time.monotonic()
        if now < self.next_change:
            return
        if self.current is None:
            self.current = next(self.faults)
            kind, (a, b) = self.current
            (self.fabric.link_down if kind == "link" else self.fabric.port_down)(a, b)
            self.next_change = now + self.down_s
        else:
            kind, (a, b) = self.current
            (self.fabric.link_up if kind == "link" else self.fabric.port_up)(a, b)
            self.current = None
            self.cycles += 1
            self.next_change = now + self.up_s

    def restore(self) -> None:
        if self.current is not None:
            self.next_change = 0
            self.step()


def log_bytes(fabric: Fabric, nic: str) -> int:
    path = fabric.rundir.file("nics", f"{nic}.events.jsonl")
    rotated = path.with_name(path.name + ".1")
    return sum(p.stat().st_size for p in (path, rotated) if p.exists())


def sample(fabric: Fabric) -> dict[str, dict[str, tuple[int, int]]]:
    out: dict[str, dict[str, tuple[int, int]]] = {"switch": {}, "nic": {}}
    for record in fabric.state.processes.values():
        if record.kind in out:
            got = rss_kib(record.pid)
            if got is not None:
                out[record.kind][record.name] = got
    return out


def soak(args: argparse.Namespace) -> dict[str, Any]:
    topology = load("tiny")
    size = args.size
    with tempfile.TemporaryDirectory(prefix="mrc-soak-", dir="/tmp") as root:
        udp, grpc = free_bases(topology)
        options = FabricOptions(root=Path(root), udp_base_port=udp, grpc_base_port=grpc)
        fabric = up_local("tiny", options).fabric
        try:
            return run(fabric, args, size)
        finally:
            if args.keep_logs is not None:
                for log in fabric.rundir.file("nics", "x").parent.glob("*.events.jsonl*"):
                    args.keep_logs.mkdir(parents=True, exist_ok=True)
                    (args.keep_logs / log.name).write_bytes(log.read_bytes())
            teardown(fabric.rundir)


def keep_failure_logs(fabric: Fabric, nics: tuple[str, str], into: Path) -> None:
    """Copy the event logs (with their rotated files) of a failed transfer's two NICs
    into ``into`` at once, before later traffic rotates the failure out of them."""
    into.mkdir(parents=True, exist_ok=True)
    for nic in nics:
        path = fabric.rundir.file("nics", f"{nic}.events.jsonl")
        for log in (path.with_name(path.name + ".1"), path):
            if log.exists():
                (into / log.name).write_bytes(log.read_bytes())


def poll(
    fabric: Fabric,
    running: dict[str, tuple[Any, str, float]],
    failures: list[str],
    keep_logs: Path | None,
    done: int,
    failed: int,
) -> tuple[int, int]:
    """Collect finished transfers; a failure's message is kept (and, with ``keep_logs``,
    both NICs' event logs as they were when it was seen)."""
    for src, (tid, dst, _started) in list(running.items()):
        info = fabric.nic(src).transfer(tid)
        if not (info.get("done") or info.get("failed")):
            continue
        del running[src]
        if info.get("failed"):
            failed += 1
            failures.append(f"{src}->{dst} transfer {tid}: {info['failed']}")
            if keep_logs is not None:
                keep_failure_logs(fabric, (src, dst), keep_logs / f"failed-{failed}")
        else:
            done += 1
    return done, failed


def received_held_kib(fabric: Fabric) -> int:
    """The most receive-buffer memory any NIC holds now (``received_bytes_held``: regions
    of responder QPs, kept until they have been idle for a while), KiB."""
    held = 0
    for nic in fabric.topology.nics:
        process = fabric.nic(nic.name).request("stats").get("process", {})
        held = max(held, int(process.get("received_bytes_held", 0)))
    return held // 1024


def by_quarter(series: list[list[float]], column: int, minutes: float) -> list[int]:
    """The largest value of ``column`` in each quarter of the run (flat memory: four
    similar numbers once the first quarter's warm-up is over)."""
    quarter = minutes * 60 / 4
    out = [0, 0, 0, 0]
    for row in series:
        i = min(3, int(row[0] // quarter))
        out[i] = max(out[i], int(row[column]))
    return out


def run(fabric: Fabric, args: argparse.Namespace, size: int) -> dict[str, Any]:
    flapper = Flapper(fabric, args.down_s, args.up_s)
    start = time.monotonic()
    end = start + args.minutes * 60
    warm_at = start + args.minutes * 60 / 4  # RSS "after warm-up": a quarter into the run
    first: dict[str, dict[str, tuple[int, int]]] | None = None
    # [t_s, largest switch RSS, largest NIC RSS, most receive buffers a NIC holds] (KiB)
    series: list[list[float]] = []
    peak: dict[str, dict[str, int]] = {"switch": {}, "nic": {}}
    last = first
    next_sample = time.monotonic()
    running: dict[str, tuple[Any, str, float]] = {}
    done = failed = 0
    failures: list[str] = []
    pairs = itertools.cycle(PAIRS)
    seed = 0
    max_log = dict.fromkeys((n.name for n in fabric.topology.nics), 0)
    while time.monotonic() < end:
        flapper.step()
        for src, dst in PAIRS:
            if src not in running and len(running) < args.concurrent:
                src, dst = next(pairs)
                if src in running:
                    continue
                seed += 1
                tid = start_transfer(fabric, src, dst, size, seed=seed)
                running[src] = (tid, dst, time.monotonic())
        done, failed = poll(fabric, running, failures, args.keep_logs, done, failed)
        now = time.monotonic()
        if now >= next_sample:
            next_sample = now + args.sample_s
            last = sample(fabric)
            if first is None and now >= warm_at:
                first = last
            series.append(
                [
                    round(now - start, 1),
                    max((v[0] for v in last["switch"].values()), default=0),
                    max((v[0] for v in last["nic"].values()), default=0),
                    received_held_kib(fabric),
                ]
            )
            for kind, procs in last.items():
                for name, (_, hwm) in procs.items():
                    peak[kind][name] = max(peak[kind].get(name, 0), hwm)
            for nic in max_log:
                max_log[nic] = max(max_log[nic], log_bytes(fabric, nic))
        time.sleep(0.05)
    flapper.restore()
    deadline = time.monotonic() + 120
    while running and time.monotonic() < deadline:
        done, failed = poll(fabric, running, failures, args.keep_logs, done, failed)
        time.sleep(0.1)
    last = sample(fabric)
    if first is None:
        first = last

    def growth(kind: str) -> dict[str, int]:
        assert first is not None
        return {
            name: last[kind][name][0] - first[kind][name][0]
            for name in last[kind]
            if name in first[kind]
        }

    return {
        "benchmark": "soak",
        "topology": "tiny",
        "minutes": args.minutes,
        "transfer_bytes": size,
        "transfers_done": done,
        "transfers_failed": failed,
        "failures": [f[:2000] for f in failures[:5]],
        "flap_cycles": flapper.cycles,
        "peak_rss_kib": {kind: max(v.values(), default=0) for kind, v in peak.items()},
        "peak_rss_kib_per_process": peak,
        "rss_growth_kib_after_warmup": {"switch": growth("switch"), "nic": growth("nic")},
        "rss_series_kib": series,
        "rss_kib_by_quarter": {
            "switch": by_quarter(series, 1, args.minutes),
            "nic": by_quarter(series, 2, args.minutes),
            "nic_received_held": by_quarter(series, 3, args.minutes),
        },
        "event_log_bytes_max": max_log,
        "event_log_cap_bytes": 2 * DEFAULT_EVENTS_MAX_BYTES,
        "python": sys.version.split()[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="soak length (default 10)")
    parser.add_argument(
        "--size", type=byte_size, default="4M", help="bytes per transfer (default 4M)"
    )
    parser.add_argument("--concurrent", type=int, default=2, help="transfers at once (2)")
    parser.add_argument("--down-s", type=float, default=1.0, help="seconds a fault lasts (1)")
    parser.add_argument("--up-s", type=float, default=2.0, help="seconds between faults (2)")
    parser.add_argument("--sample-s", type=float, default=2.0, help="sampling period (2)")
    parser.add_argument(
        "--keep-logs",
        type=Path,
        help="copy the NICs' event logs here at the end; a failed transfer's two NICs' logs "
        "go to failed-N/ there when it fails",
    )
    args = parser.parse_args(argv)
    if args.minutes <= 0:
        parser.error(f"--minutes must be positive, got {args.minutes}")
    try:
        result = soak(args)
    except TestbedError as exc:
        print(f"soak: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2, sort_keys=True))
    return 0 if result["transfers_failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
