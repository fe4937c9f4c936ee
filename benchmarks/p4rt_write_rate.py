"""P4Runtime write rate and start-to-ready time of p4emu-switch, beside simple_switch_grpc.

The same client code and program (``benchmarks/programs/write_rate.p4``, ``--entries``
entries in batches of ``--batch``) run against p4emu-switch and, when BMv2's
``simple_switch_grpc`` is found (``$MRC_P4LANG_BIN`` or PATH, with ``p4c`` beside it for the
BMv2 JSON), against BMv2. Prints one JSON line with both sets of figures and
``insert_ratio`` / ``read_ratio`` (p4emu / BMv2; null without BMv2). Each measurement is the
best of ``--repeats`` runs (the machine may be busy).

Targets: p4emu >= 0.5x BMv2 for inserts and reads (issue 15); start-to-ready < 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

from p4emu.proto import p4r

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.artifacts import bmv2_pipeline  # noqa: E402
from p4emu.server.client import P4RuntimeClient  # noqa: E402
from testbed.fabric import BMV2_LOG_ARGS  # noqa: E402

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


def p4lang_bin() -> Path | None:
    """Where simple_switch_grpc and p4c are: ``$MRC_P4LANG_BIN`` or PATH."""
    env = os.environ.get("MRC_P4LANG_BIN")
    if env:
        return Path(env) if (Path(env) / "simple_switch_grpc").exists() else None
    found = shutil.which("simple_switch_grpc")
    return Path(found).parent if found else None


def switch_command(target: str, port: int, bin_dir: Path | None) -> list[str]:
    address = ["--", "--grpc-server-addr", f"127.0.0.1:{port}"]
    if target == "p4emu":
        return [sys.executable, "-m", "p4emu.server.main", "--no-p4", *address]
    assert bin_dir is not None
    thrift = ["--thrift-port", str(free_tcp_port())]
    return [str(bin_dir / "simple_switch_grpc"), "--no-p4", *BMV2_LOG_ARGS, *thrift, *address]


def write_rate(
    target: str, entries: int, batch: int, bin_dir: Path | None, tmp: Path
) -> dict[str, float]:
    port = free_tcp_port()
    proc = subprocess.Popen(
        switch_command(target, port, bin_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    address = f"127.0.0.1:{port}"
    try:
        channel = grpc.insecure_channel(address, options=FAST_RECONNECT)
        grpc.channel_ready_future(channel).result(timeout=60)
        channel.close()
        with P4RuntimeClient(address) as client:
            if target == "p4emu":
                pipe_started = time.perf_counter()
                client.set_pipeline_from_program(PROGRAM)
            else:
                pipeline = bmv2_pipeline(PROGRAM, p4c=str(bin_dir / "p4c"), out_dir=tmp)  # type: ignore[operator]
                pipe_started = time.perf_counter()
                client.set_pipeline(pipeline.p4info, pipeline.device_config)
            pipeline_s = time.perf_counter() - pipe_started
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
    assert held == entries, f"{target} holds {held} entries, wrote {entries}"
    return {
        "insert_entries_per_s": round(entries / elapsed),
        "read_entries_per_s": round(entries / read_elapsed),
        "pipeline_push_s": round(pipeline_s, 3),
    }


def best_of(runs: list[dict[str, float]]) -> dict[str, object]:
    """The best figure of each kind over the runs, and every run's figures."""
    return {
        "insert_entries_per_s": max(r["insert_entries_per_s"] for r in runs),
        "read_entries_per_s": max(r["read_entries_per_s"] for r in runs),
        "pipeline_push_s": min(r["pipeline_push_s"] for r in runs),
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=50_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--target", choices=("p4emu", "bmv2", "both"), default="both")
    args = parser.parse_args()
    bin_dir = p4lang_bin()
    targets = ["p4emu", "bmv2"] if args.target == "both" else [args.target]
    if bin_dir is None:
        targets = [t for t in targets if t != "bmv2"]
    result: dict[str, object] = {
        "entries": args.entries,
        "batch": args.batch,
        "load_before": os.getloadavg()[0],
    }
    runs: dict[str, list[dict[str, float]]] = {target: [] for target in targets}
    with tempfile.TemporaryDirectory(prefix="p4rt-rate-") as tmp:
        # Targets alternate, so that both see the same (possibly changing) machine load.
        for _ in range(args.repeats):
            for target in targets:
                runs[target].append(
                    write_rate(target, args.entries, args.batch, bin_dir, Path(tmp))
                )
    for target in targets:
        result[target] = best_of(runs[target])
    if "p4emu" in targets:
        p4emu = result["p4emu"]
        assert isinstance(p4emu, dict)
        # Figures of the earlier single-target version of this script, kept under their names.
        result["insert_entries_per_s"] = p4emu["insert_entries_per_s"]
        result["read_entries_per_s"] = p4emu["read_entries_per_s"]
        result["start_to_ready_s_no_p4"] = round(start_to_ready(["--no-p4"], args.repeats), 3)
        result["start_to_ready_s_with_program"] = round(
            start_to_ready([str(PROGRAM)], args.repeats), 3
        )
    ours, theirs = result.get("p4emu"), result.get("bmv2")
    for kind in ("insert", "read"):
        key = f"{kind}_entries_per_s"
        result[f"{kind}_ratio"] = (
            round(ours[key] / theirs[key], 2)
            if isinstance(ours, dict) and isinstance(theirs, dict)
            else None
        )
    if "bmv2" in targets:
        result["bmv2_command_line"] = " ".join(switch_command("bmv2", 0, bin_dir)[1:])
    result["load_after"] = os.getloadavg()[0]
    result["targets"] = {"insert_ratio": 0.5, "read_ratio": 0.5, "start_to_ready_s": 0.5}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
