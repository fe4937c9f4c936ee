"""P4Runtime write rate and start-to-ready time of p4emu-switch (prints one JSON line).

Targets (issue #3): >= 20,000 entries/s for batched inserts (BMv2 ~117,000 on a machine of
this kind), start-to-ready < 0.5 s (BMv2 0.025 s).
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
from finsy.proto import p4r

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p4emu.server.client import P4RuntimeClient  # noqa: E402

PROGRAM = ROOT / "benchmarks" / "programs" / "write_rate.p4"
FAST_RECONNECT = [
    ("grpc.initial_reconnect_backoff_ms", 5),
    ("grpc.min_reconnect_backoff_ms", 5),
    ("grpc.max_reconnect_backoff_ms", 20),
]


def free_tcp_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_to_ready(extra: list[str], repeats: int) -> float:
    """Median seconds from spawning p4emu-switch to its gRPC port answering."""
    samples = []
    for _ in range(repeats):
        port = free_tcp_port()
        started = time.perf_counter()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "p4emu.server.main",
                *extra,
                "--",
                "--grpc-server-addr",
                f"127.0.0.1:{port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # Short reconnect backoff: gRPC's default first retry comes after 1 s, which would
        # measure the client's patience rather than the switch's start-up.
        channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=FAST_RECONNECT)
        grpc.channel_ready_future(channel).result(timeout=60)
        samples.append(time.perf_counter() - started)
        channel.close()
        proc.terminate()
        proc.wait(10)
    samples.sort()
    return samples[len(samples) // 2]


def write_rate(entries: int, batch: int) -> dict[str, float]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "p4emu.server.main",
            "--no-p4",
            "--",
            "--grpc-server-addr",
            "127.0.0.1:0",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    match = re.search(r"P4Runtime on ([\d.]+:\d+)", proc.stdout.readline())
    assert match, "p4emu-switch did not start"
    try:
        with P4RuntimeClient(match[1]) as client:
            client.set_pipeline_from_program(PROGRAM)
            template = client.table_entry(
                "BenchIngress.mac_table",
                {"hdr.ethernet.dst": 1},
                "BenchIngress.forward",
                {"port": 1},
            )
            updates = []
            for i in range(entries):
                entity = p4r.Entity()
                entity.CopyFrom(template)
                entity.table_entry.match[0].exact.value = (i + 1).to_bytes(6, "big").lstrip(b"\0")
                entity.table_entry.action.action.params[0].value = (
                    ((i % 500) + 1).to_bytes(2, "big").lstrip(b"\0")
                )
                updates.append((p4r.Update.INSERT, entity))
            started = time.perf_counter()
            for start in range(0, entries, batch):
                client.write(updates[start : start + batch])
            elapsed = time.perf_counter() - started
            held = len(client.read(client.table_entry("BenchIngress.mac_table", {})))
            read_started = time.perf_counter()
            client.read(client.table_entry("BenchIngress.mac_table", {}))
            read_elapsed = time.perf_counter() - read_started
    finally:
        proc.terminate()
        proc.wait(10)
    assert held == entries, f"switch holds {held} entries, wrote {entries}"
    return {
        "entries": entries,
        "batch": batch,
        "insert_entries_per_s": round(entries / elapsed),
        "read_entries_per_s": round(entries / read_elapsed),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=50_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    result = write_rate(args.entries, args.batch)
    result["start_to_ready_s_no_p4"] = round(start_to_ready(["--no-p4"], args.repeats), 3)
    result["start_to_ready_s_with_program"] = round(start_to_ready([str(PROGRAM)], args.repeats), 3)
    result["targets"] = {"insert_entries_per_s": 20_000, "start_to_ready_s": 0.5}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
