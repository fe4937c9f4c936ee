"""Switch packet I/O on veth pairs: p4emu-switch beside BMv2's simple_switch_grpc (one JSON).

Both switches run ``p4src/mrc_switch.p4`` as T0 ``p1-t0-0`` of the ``tiny`` topology, with
the controller's entries (``mrc-controller push``), the command line the launcher gives
them (``testbed.fabric.switch_args``) and two ports on veth pairs: the NIC-facing
port receives MRC data frames (outer IPv6 uSID carrier, inner IPv6, UDP 4791, BTH, RETH,
``--payload`` bytes) that the program forwards to the T1-facing port. The same sender,
``tcpreplay`` at a fixed packet rate, offers each rate of a sweep for ``--seconds``; the
frames that leave the switch are counted on the far veth (kernel counters). The *knee* is
the highest offered rate that loses less than 1 %.

Prints ``{"p4emu_knee_pps": ..., "bmv2_knee_pps": ..., "ratio": ..., ...}`` with every
sweep point; ``bmv2_knee_pps`` and ``ratio`` are null when simple_switch_grpc is not found
(``$MRC_P4LANG_BIN`` or PATH), or when BMv2 loses 1 % even at the lowest rate (then
``ratio_at_least`` is p4emu's knee over that rate). Needs root (veth pairs), ``ip`` and
``tcpreplay``. BMv2 runs with its logging off (``testbed.fabric.BMV2_LOG_ARGS``, as in a
run): BMv2 at its best; ``bmv2_log_level`` says so.

Usage: ``python benchmarks/switch_io.py [--rates 10000,20000,...] [--seconds 2] [--repeat N]
[--target p4emu|bmv2|both]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

import topologies  # noqa: E402
from mrc_wire.codec import DataPacket, encode_data  # noqa: E402
from p4emu.io import PcapWriter  # noqa: E402
from testbed.fabric import BMV2_LOG_ARGS, switch_args  # noqa: E402

TOPOLOGY = "tiny"
SWITCH = "p1-t0-0"
SRC_NIC, DST_NIC = "nic0", "nic3"
PLANE, T1_INDEX = 1, 1
DEFAULT_RATES = (1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 80_000)
LOSS_LIMIT = 0.01  # the knee: highest offered rate with less than 1 % loss
DRAIN_S = 0.5  # after the sender stops, frames still queued in the switch may leave
DISTINCT_FRAMES = 1000  # the pcap tcpreplay loops over (PSNs and EVs vary)


class BenchError(Exception):
    """The benchmark cannot run here (a missing tool, no root, a switch that did not start)."""


def run(*argv: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=check, capture_output=True, text=True, **kwargs)


def p4lang_bin() -> Path | None:
    """Where simple_switch_grpc (and p4c) are: ``$MRC_P4LANG_BIN`` or PATH."""
    env = os.environ.get("MRC_P4LANG_BIN")
    if env:
        folder = Path(env)
        return folder if (folder / "simple_switch_grpc").exists() else None
    found = shutil.which("simple_switch_grpc")
    return Path(found).parent if found else None


# --------------------------------------------------------------------------- traffic


def frames_and_ports(payload: int) -> tuple[list[bytes], int, int]:
    """Data frames nic0 -> nic3 through SWITCH on PLANE, its ingress and egress port."""
    topology = topologies.load(TOPOLOGY)
    plan = topologies.AddressPlan(topology)
    ingress = topology.nic_port(SRC_NIC, PLANE)
    if ingress.t0 != SWITCH:
        raise BenchError(f"{SRC_NIC} does not attach to {SWITCH} on plane {PLANE}")
    frames = []
    egress_ports = set()
    routes = {route.usid: route.port for route in plan.routes_for(SWITCH)}
    for i in range(DISTINCT_FRAMES):
        ev = plan.make_ev(PLANE, T1_INDEX, i)
        path = plan.path_for_ev(SRC_NIC, DST_NIC, ev)
        egress_ports.add(routes[plan.switch_usid(path.switches[1])])
        packet = DataPacket(
            dst_mac=bytes.fromhex("020000000001"),
            src_mac=bytes.fromhex("020000000002"),
            outer_src=plan.nic_address(SRC_NIC, PLANE).packed,
            outer_dst=path.carrier_bytes,
            inner_src=plan.nic_address(SRC_NIC, PLANE).packed,
            inner_dst=plan.nic_address(DST_NIC, PLANE).packed,
            ev=ev,
            dqpn=0x11,
            psn=i + 1,
            va=0x1000_0000 + i * payload,
            rkey=0x77,
            dma_length=payload,
            payload=bytes((i + j) & 0xFF for j in range(payload)),
        )
        frames.append(encode_data(packet))
    if len(egress_ports) != 1:
        raise BenchError(f"frames leave {SWITCH} on several ports: {sorted(egress_ports)}")
    return frames, ingress.t0_port, egress_ports.pop()


@contextlib.contextmanager
def veth_pairs(count: int) -> Iterator[list[tuple[str, str]]]:
    """``count`` veth pairs ``(outside, switch side)``, up, without IPv6 chatter."""
    suffix = uuid.uuid4().hex[:5]
    pairs = [(f"sio{i}o{suffix}", f"sio{i}s{suffix}") for i in range(count)]
    try:
        for outside, inside in pairs:
            run("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
            for name in (outside, inside):
                run("sysctl", "-qw", f"net.ipv6.conf.{name}.disable_ipv6=1", check=False)
                run("ip", "link", "set", name, "up")
        yield pairs
    finally:
        for outside, _ in pairs:
            run("ip", "link", "del", outside, check=False)


def rx_packets(interface: str) -> int:
    return int(Path(f"/sys/class/net/{interface}/statistics/rx_packets").read_text())


def offer(interface: str, pcap: Path, rate: int, count: int, sink: str) -> int:
    """Sends ``count`` frames at ``rate`` pps into ``interface``; frames seen on ``sink``."""
    before = rx_packets(sink)
    result = run(
        "tcpreplay", "-q", "-i", interface, f"--pps={rate}", f"--limit={count}",
        "--loop=0", str(pcap), check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise BenchError(f"tcpreplay failed: {result.stderr.strip() or result.stdout.strip()}")
    time.sleep(DRAIN_S)
    return rx_packets(sink) - before


# --------------------------------------------------------------------------- switches


def free_tcp_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_switch(
    target: str, ports: dict[int, str], bin_dir: Path | None, workdir: Path
) -> Iterator[str]:
    """A programmed switch of ``target``; yields its gRPC address."""
    grpc_port, thrift_port = free_tcp_port(), free_tcp_port()
    address = f"127.0.0.1:{grpc_port}"
    topology = topologies.load(TOPOLOGY)
    # No queue rate: the veths are not shaped, both switches drain as fast as they can.
    args = switch_args(
        target, topology, SWITCH, ports, None, grpc_address=address, seed=1, thrift_port=thrift_port
    )
    # Link delay emulation (p4emu only, and for ports this bench leaves unwired) is left out:
    # both switches forward as fast as they can.
    while "--link-delay-us" in args:
        at = args.index("--link-delay-us")
        del args[at : at + 2]
    if target == "p4emu":
        argv = [sys.executable, "-m", "p4emu.server.main", *args]
    else:
        assert bin_dir is not None
        argv = [str(bin_dir / "simple_switch_grpc"), *args]
    log = (workdir / f"{target}.log").open("w")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        channel = grpc.insecure_channel(address)
        try:
            grpc.channel_ready_future(channel).result(timeout=60)
        except grpc.FutureTimeoutError:
            log.flush()
            tail = Path(log.name).read_text()[-2000:]
            raise BenchError(f"{target} did not start ({' '.join(argv)}):\n{tail}") from None
        finally:
            channel.close()
        endpoints = workdir / "endpoints.yaml"
        endpoints.write_text(f"{SWITCH}: {address}\n")
        env = dict(os.environ)
        if bin_dir is not None:
            env["PATH"] = f"{bin_dir}:{env.get('PATH', '')}"
        push = run(
            sys.executable, "-m", "controller", "push", TOPOLOGY, "--switch", SWITCH,
            "--target", target, "--endpoints", str(endpoints), "--p4c-out",
            str(workdir / "p4c"), "-q", check=False, env=env, cwd=ROOT,
        )  # fmt: skip
        if push.returncode != 0:
            raise BenchError(f"mrc-controller push to {target} failed: {push.stderr.strip()}")
        yield address
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def sweep(
    target: str,
    rates: list[int],
    seconds: float,
    pairs: list[tuple[str, str]],
    ingress: int,
    egress: int,
    pcap: Path,
    bin_dir: Path | None,
    workdir: Path,
) -> list[dict[str, float]]:
    (send_if, in_if), (sink_if, out_if) = pairs
    points = []
    with running_switch(target, {ingress: in_if, egress: out_if}, bin_dir, workdir):
        # The entries work (frames come out of the right port) before anything is measured.
        if offer(send_if, pcap, 200, 100, sink_if) == 0:
            raise BenchError(f"{target} forwarded none of 100 frames at 200 pps")
        failures = 0
        for rate in rates:
            count = max(1000, int(rate * seconds))
            received = offer(send_if, pcap, rate, count, sink_if)
            loss = max(0.0, 1 - received / count)
            points.append({"offered_pps": rate, "sent": count, "received": received,
                           "loss": round(loss, 4)})  # fmt: skip
            failures = failures + 1 if loss >= LOSS_LIMIT else 0
            if failures >= 2:
                break
    return points


def bmv2_log_level() -> str:
    """The log level simple_switch_grpc is started with here (its launcher's command line)."""
    argv = switch_args("bmv2", topologies.load(TOPOLOGY), SWITCH, {}, None, grpc_address="", seed=1)
    flag = BMV2_LOG_ARGS[0]
    return argv[argv.index(flag) + 1] if flag in argv else "default (info)"


def knee(points: list[dict[str, float]]) -> int | None:
    good = [p["offered_pps"] for p in points if p["loss"] < LOSS_LIMIT]
    return int(max(good)) if good else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default=",".join(str(r) for r in DEFAULT_RATES))
    parser.add_argument("--seconds", type=float, default=2.0, help="per rate (default 2)")
    parser.add_argument("--payload", type=int, default=1024, help="bytes (default 1024)")
    parser.add_argument("--repeat", type=int, default=1, help="sweeps per target; best knee")
    parser.add_argument("--target", choices=("p4emu", "bmv2", "both"), default="both")
    args = parser.parse_args(argv)
    try:
        rates = sorted(int(r) for r in args.rates.split(","))
    except ValueError:
        print(f"switch_io: --rates {args.rates!r}: expected numbers", file=sys.stderr)
        return 2
    missing = [tool for tool in ("ip", "tcpreplay") if shutil.which(tool) is None]
    if os.geteuid() != 0 or missing:
        need = "root" if os.geteuid() != 0 else ", ".join(missing)
        print(f"switch_io: needs {need} (veth pairs, tcpreplay)", file=sys.stderr)
        return 2
    bin_dir = p4lang_bin()
    targets = ["p4emu", "bmv2"] if args.target == "both" else [args.target]
    if bin_dir is None and "bmv2" in targets:
        if args.target == "bmv2":
            print(
                "switch_io: simple_switch_grpc not found ($MRC_P4LANG_BIN, PATH)", file=sys.stderr
            )
            return 2
        targets.remove("bmv2")
    result: dict[str, object] = {
        "program": "p4src/mrc_switch.p4",
        "topology": TOPOLOGY,
        "switch": SWITCH,
        "seconds_per_rate": args.seconds,
        "loss_limit": LOSS_LIMIT,
        "load_before": os.getloadavg()[0],
    }
    frames, ingress, egress = frames_and_ports(args.payload)
    result["frame_bytes"] = len(frames[0])
    try:
        with tempfile.TemporaryDirectory(prefix="switch-io-") as tmp, veth_pairs(2) as pairs:
            workdir = Path(tmp)
            pcap_path = workdir / "frames.pcap"
            writer = PcapWriter(pcap_path)
            for i, frame in enumerate(frames):
                writer.write(frame, i)
            writer.close()
            sweeps: dict[str, list[list[dict[str, float]]]] = {t: [] for t in targets}
            # Targets alternate, so that both see the same (possibly changing) machine load.
            for _ in range(args.repeat):
                for target in targets:
                    sweeps[target].append(
                        sweep(target, rates, args.seconds, pairs, ingress, egress, pcap_path,
                              bin_dir, workdir)
                    )  # fmt: skip
            for target in targets:
                knees = [knee(points) for points in sweeps[target]]
                result[f"{target}_knee_pps"] = max((k for k in knees if k), default=None)
                result[f"{target}_knees"] = knees
                result[f"{target}_sweeps"] = sweeps[target]
    except BenchError as exc:
        print(f"switch_io: {exc}", file=sys.stderr)
        return 1
    result.setdefault("bmv2_knee_pps", None)
    p4emu_knee, bmv2_knee = result.get("p4emu_knee_pps"), result.get("bmv2_knee_pps")
    result["ratio"] = (
        round(p4emu_knee / bmv2_knee, 2) if isinstance(p4emu_knee, int) and bmv2_knee else None
    )
    if isinstance(p4emu_knee, int) and "bmv2" in targets and bmv2_knee is None:
        # BMv2 lost >= 1 % even at the lowest rate: its knee is below it.
        result["ratio_at_least"] = round(p4emu_knee / rates[0], 2)
    if "bmv2" in targets:
        result["bmv2_log_level"] = bmv2_log_level()
    result["load_after"] = os.getloadavg()[0]
    result["targets"] = {"ratio": 2.0, "p4emu_knee_pps": 40_000}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
