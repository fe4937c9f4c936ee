"""push / reconcile / watch / show against real ``p4emu-switch`` processes.

Each test starts one ``p4emu-switch --no-p4`` process per switch of ``tiny`` (the controller
installs the pipeline), on free localhost ports, and stops exactly those processes.
"""

from __future__ import annotations

import asyncio
import io
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

import topologies
from controller import p4names
from controller.artifacts import Pipeline
from controller.cli import EXIT_OK, main
from controller.endpoints import P4RuntimeTarget
from controller.entities import EntityCodec, widen_port_fields
from controller.p4rt_client import SwitchClient
from controller.plan import Entry, plan_fabric
from controller.push import ConnectOptions, push
from controller.reconcile import SyncOptions, read_owned
from controller.watch import FabricWatcher, WatchEvent, WatchOptions

pytestmark = pytest.mark.integration

STARTUP_S = 120.0  # how long a p4emu-switch may take to start serving (not a timing check)
FAST = ConnectOptions(connect_timeout=10.0)


def switch_command() -> list[str]:
    found = shutil.which("p4emu-switch")
    if found is None:
        beside = Path(sys.executable).parent / "p4emu-switch"
        found = str(beside) if beside.exists() else None
    assert found is not None, (
        "p4emu-switch is not installed (console script of p4emu.server, see pyproject.toml)"
    )
    return [found]


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class SwitchProcess:
    name: str
    port: int
    log: Path
    interfaces: list[str] = field(default_factory=list)  # -i PORT@udp:LOCAL/PEER
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        self.launch()
        self.wait_serving()

    def launch(self) -> None:
        command = [
            *switch_command(),
            *(arg for spec in self.interfaces for arg in ("-i", spec)),
            "--no-p4",
            "--cpu-port",
            "510",
            "--priority-queues",
            "8",
            "--",
            "--grpc-server-addr",
            self.address,
        ]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)

    def wait_serving(self) -> None:
        deadline = time.monotonic() + STARTUP_S
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(
                    f"p4emu-switch for {self.name} exited with {self.process.returncode}:\n"
                    + self.log.read_text(errors="replace")[-2000:]
                )
            channel = grpc.insecure_channel(self.address)
            try:
                grpc.channel_ready_future(channel).result(timeout=0.5)
                return
            except grpc.FutureTimeoutError:
                assert time.monotonic() < deadline, f"{self.name} never served {self.address}"
            finally:
                channel.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


@dataclass
class Fabric:
    switches: dict[str, SwitchProcess] = field(default_factory=dict)

    @property
    def endpoints(self) -> dict[str, P4RuntimeTarget]:
        return {name: P4RuntimeTarget(sw.address) for name, sw in self.switches.items()}


@pytest.fixture
def tiny() -> topologies.Topology:
    return topologies.load("tiny")


def start_fabric(
    names: list[str], logs: Path, interfaces: dict[str, list[str]] | None = None
) -> Fabric:
    fabric = Fabric()
    for name in names:  # launch all, then wait: the processes start in parallel
        ports = (interfaces or {}).get(name, [])
        fabric.switches[name] = SwitchProcess(name, free_port(), logs / f"{name}.log", ports)
        fabric.switches[name].launch()
    try:
        for process in fabric.switches.values():
            process.wait_serving()
    except BaseException:
        for process in fabric.switches.values():
            process.stop()
        raise
    return fabric


@pytest.fixture
def p4emu_fabric(tiny: topologies.Topology, tmp_path: Path) -> Iterator[Fabric]:
    fabric = Fabric()
    try:
        fabric = start_fabric([sw.name for sw in tiny.switches], tmp_path)
        yield fabric
    finally:
        for process in fabric.switches.values():
            process.stop()


@pytest.fixture
def one_switch(tmp_path: Path) -> Iterator[Fabric]:
    fabric = Fabric()
    try:
        fabric = start_fabric(["p0-t0-0"], tmp_path)
        yield fabric
    finally:
        for process in fabric.switches.values():
            process.stop()


def held_entries(address: str, pipeline: Pipeline) -> list[Entry]:
    async def run() -> list[Entry]:
        client = SwitchClient("probe", P4RuntimeTarget(address), connect_timeout=10.0)
        try:
            await client.connect()
            return await read_owned(client, EntityCodec(pipeline.p4info))
        finally:
            await client.close()

    return asyncio.run(run())


def test_push_reads_back_equal_and_second_push_changes_nothing(
    p4emu_fabric: Fabric, pipeline: Pipeline, tiny: topologies.Topology
) -> None:
    plan = plan_fabric(tiny)
    first = push(
        plan, pipeline, p4emu_fabric.endpoints, connect=FAST, sync=SyncOptions(verify=True)
    )
    assert first.ok, [(r.switch, r.error) for r in first.failed]
    assert all(r.pipeline == "set" and r.verified for r in first.reports)
    for sw in plan:
        held = held_entries(p4emu_fabric.switches[sw.name].address, pipeline)
        assert {e for e in held if not e.is_default} == {e for e in sw.entries if not e.is_default}
        assert [e for e in held if e.table == p4names.SWITCH_CONFIG] == sw.entries_of(
            p4names.SWITCH_CONFIG
        )
    second = push(plan, pipeline, p4emu_fabric.endpoints, connect=FAST)
    assert second.ok
    assert all(r.pipeline == "same" and r.written == 0 for r in second.reports)


def test_reconcile_repairs_drift_made_by_another_client(
    p4emu_fabric: Fabric, pipeline: Pipeline, tiny: topologies.Topology
) -> None:
    plan = plan_fabric(tiny)
    assert push(plan, pipeline, p4emu_fabric.endpoints, connect=FAST).ok
    codec = EntityCodec(pipeline.p4info)
    victim = plan["p0-t1-0"].entries_of(p4names.USID_ROUTE)[0]

    async def tamper() -> None:
        endpoint = p4emu_fabric.endpoints["p0-t1-0"]
        async with SwitchClient("tamper", endpoint, election_id=1) as client:
            failed = await client.write(
                [
                    codec.encode_update("DELETE", victim),
                    codec.encode_update(
                        "INSERT", Entry(p4names.USID_ROUTE, (0x0999,), p4names.FORWARD, (2,))
                    ),
                ]
            )
            assert failed == []

    asyncio.run(tamper())
    diff = push(
        plan, pipeline, p4emu_fabric.endpoints, connect=FAST, sync=SyncOptions(dry_run=True)
    )
    changed = {r.switch: r for r in diff.reports if r.changes}
    assert list(changed) == ["p0-t1-0"]
    assert sorted(c.kind for c in changed["p0-t1-0"].changes) == ["DELETE", "INSERT"]
    fixed = {
        r.switch: r for r in push(plan, pipeline, p4emu_fabric.endpoints, connect=FAST).reports
    }
    assert (fixed["p0-t1-0"].inserted, fixed["p0-t1-0"].deleted) == (1, 1)


def test_watch_reprograms_a_switch_restarted_mid_run(
    p4emu_fabric: Fabric, pipeline: Pipeline, tiny: topologies.Topology
) -> None:
    plan = plan_fabric(tiny)
    events: list[WatchEvent] = []

    async def run() -> None:
        stop = asyncio.Event()
        watcher = FabricWatcher(
            plan,
            pipeline,
            p4emu_fabric.endpoints,
            connect=FAST,
            options=WatchOptions(check_interval=0.2, retry_interval=0.1),
            on_event=events.append,
        )
        task = asyncio.create_task(watcher.run(stop))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while not all(watcher.programmed_count.values()):
            assert loop.time() < deadline, "fabric never programmed"
            await asyncio.sleep(0.05)
        await asyncio.to_thread(p4emu_fabric.switches["p1-t0-1"].restart)
        while watcher.programmed_count["p1-t0-1"] < 2:
            assert loop.time() < deadline + 60, "restarted switch never re-programmed"
            await asyncio.sleep(0.05)
        stop.set()
        await task

    asyncio.run(run())
    restarted = [e.kind for e in events if e.switch == "p1-t0-1"]
    assert restarted[0] == "programmed" and "lost" in restarted and restarted[-1] == "programmed"
    held = held_entries(p4emu_fabric.switches["p1-t0-1"].address, pipeline)
    assert {e for e in held if not e.is_default} == {
        e for e in plan["p1-t0-1"].entries if not e.is_default
    }


def test_error_cases_are_reported_per_switch(
    p4emu_fabric: Fabric, pipeline: Pipeline, tiny: topologies.Topology, tmp_path: Path
) -> None:
    plan = plan_fabric(tiny)
    endpoints = dict(p4emu_fabric.endpoints)
    endpoints["p1-t1-1"] = P4RuntimeTarget(f"127.0.0.1:{free_port()}")  # nothing listens there
    report = push(plan, pipeline, endpoints, connect=FAST)
    failed = {r.switch: r for r in report.failed}
    assert list(failed) == ["p1-t1-1"] and failed["p1-t1-1"].error_kind == "unreachable"
    assert sum(1 for r in report.reports if r.ok) == 7

    # p4c's BMv2 JSON is refused by p4emu: a pipeline mismatch.
    bmv2 = Pipeline("bmv2", pipeline.p4info, b'{"header_types": [], "pipelines": []}', "BMv2")
    one = plan_fabric(tiny, switches=["p0-t0-0"])
    (refused,) = push(
        one, bmv2, p4emu_fabric.endpoints, connect=FAST, sync=SyncOptions(pipeline_mode="force")
    ).failed
    assert refused.error_kind == "pipeline" and "BMv2 JSON" in refused.error

    # A P4Info that is not the program's is refused too.
    other_info = widen_port_fields(pipeline.p4info, 10)
    wrong = Pipeline("p4emu", other_info, pipeline.device_config, "wrong P4Info")
    (mismatch,) = push(
        one, wrong, p4emu_fabric.endpoints, connect=FAST, sync=SyncOptions(pipeline_mode="force")
    ).failed
    assert mismatch.error_kind == "pipeline" and mismatch.error_code == "INVALID_ARGUMENT"


def test_partial_write_failure_on_a_real_switch(one_switch: Fabric, pipeline: Pipeline) -> None:
    # A T0 with 511 NICs + 1 uplink has ports 1..512; port 512 does not fit bit<9>. A codec
    # with widened port fields lets those entries reach the switch, which refuses them.
    topo = topologies.two_tier(1, 1, 1, 511, port_bits=10)
    plan = plan_fabric(topo, switches=["p0-t0-0"], policy=None)
    endpoints = one_switch.endpoints
    codec = EntityCodec(widen_port_fields(pipeline.p4info, 10))
    report = push(plan, pipeline, endpoints, connect=FAST, codec=codec)
    (failed,) = report.failed
    assert failed.error_kind == "write"
    assert {f.update_type for f in failed.failures} == {"INSERT"}
    assert all("512" in f.entity for f in failed.failures)
    assert failed.inserted == len(plan["p0-t0-0"].entries) - 1 - len(failed.failures)


def test_cli_show_with_counters(p4emu_fabric: Fabric, pipeline: Pipeline) -> None:
    out, err = io.StringIO(), io.StringIO()
    endpoints = p4emu_fabric.endpoints
    ep_file = Path(p4emu_fabric.switches["p0-t0-0"].log).with_name("endpoints.yaml")
    ep_file.write_text("".join(f"{n}: {e.address}\n" for n, e in endpoints.items()))
    assert main(["push", "tiny", "--endpoints", str(ep_file)], out, err) == EXIT_OK, err.getvalue()
    out = io.StringIO()
    assert main(["show", "p0-t0-0", "--endpoints", str(ep_file), "--counters"], out, err) == EXIT_OK
    text = out.getvalue()
    assert "usid_route: 4 entries" in text and "counters:" in text


# ---------------------------------------------------------------------- data plane

RECEIVE_PATIENCE_S = 60.0  # how long a frame may take through Python switches (not a check)


def free_udp_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class WiredFabric:
    fabric: Fabric
    nic_sockets: dict[tuple[str, int], object]  # (nic, plane) -> connected UDP socket


@pytest.fixture
def wired_fabric(tiny: topologies.Topology, tmp_path: Path) -> Iterator[WiredFabric]:
    """tiny's switches as p4emu-switch processes cabled with loopback-UDP links; each NIC
    port is a UDP socket of the test."""
    import socket

    interfaces: dict[str, list[str]] = {sw.name: [] for sw in tiny.switches}
    nic_sockets: dict[tuple[str, int], socket.socket] = {}
    for link in tiny.links():
        a_port, b_port = free_udp_port(), free_udp_port()
        interfaces[link.b.node].append(f"{link.b.port}@udp:{b_port}/{a_port}")
        if link.a.node.startswith("nic"):
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.bind(("127.0.0.1", a_port))
            sock.connect(("127.0.0.1", b_port))
            sock.settimeout(RECEIVE_PATIENCE_S)
            nic_sockets[(link.a.node, link.a.port)] = sock
        else:
            interfaces[link.a.node].append(f"{link.a.port}@udp:{a_port}/{b_port}")
    fabric = Fabric()
    try:
        fabric = start_fabric([sw.name for sw in tiny.switches], tmp_path, interfaces)
        yield WiredFabric(fabric, nic_sockets)  # type: ignore[arg-type]
    finally:
        for process in fabric.switches.values():
            process.stop()
        for sock in nic_sockets.values():
            sock.close()


def mrc_frame(src_mac: str, dst_mac: str, src: int, dst: int, carrier: int, tag: bytes) -> bytes:
    """Ethernet / outer IPv6 (DA = uSID carrier, next header 41) / inner IPv6 / UDP."""
    import struct

    payload = tag
    udp = struct.pack("!HHHH", 0x1001, 9, 8 + len(payload), 0) + payload
    inner = struct.pack("!IHBB", 6 << 28, len(udp), 17, 64) + src.to_bytes(16, "big")
    inner += dst.to_bytes(16, "big") + udp
    outer = struct.pack("!IHBB", 6 << 28, len(inner), 41, 64) + src.to_bytes(16, "big")
    outer += carrier.to_bytes(16, "big") + inner
    mac = bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex(src_mac.replace(":", ""))
    return mac + b"\x86\xdd" + outer


def test_planned_tables_forward_every_pair_on_every_plane_through_every_t1(
    wired_fabric: WiredFabric, pipeline: Pipeline, tiny: topologies.Topology
) -> None:
    from topologies import AddressPlan

    plan = plan_fabric(tiny)
    assert push(plan, pipeline, wired_fabric.fabric.endpoints, connect=FAST).ok
    addresses = AddressPlan(tiny)
    sockets = wired_fabric.nic_sockets
    sent = 0
    for src in tiny.nics:
        for dst in tiny.nics:
            if src.index == dst.index:
                continue
            for plane in tiny.planes:
                for t1 in range(plane.t1_count):
                    path = addresses.path(src.name, dst.name, plane.index, t1)
                    tag = f"{src.name}>{dst.name}@{plane.index}/{t1}".encode()
                    frame = mrc_frame(
                        addresses.nic_mac(src.name, plane.index),
                        addresses.switch_mac(path.switches[0]),
                        int(addresses.nic_address(src.name, plane.index)),
                        int(addresses.nic_address(dst.name, plane.index)),
                        path.carrier,
                        tag,
                    )
                    sockets[(src.name, plane.index)].send(frame)  # type: ignore[attr-defined]
                    got = sockets[(dst.name, plane.index)].recv(65535)  # type: ignore[attr-defined]
                    assert got.endswith(tag), (tag, got[-40:])
                    # Arrival: carrier shifted to the downlink uSID, hop limit spent, MACs
                    # rewritten by the last T0.
                    assert got[14 + 24 : 14 + 40] == addresses.arrival_carrier(
                        dst.name, plane.index
                    ).to_bytes(16, "big")
                    assert got[14 + 7] == 64 - len(path.switches)
                    assert got[:6] == bytes.fromhex(
                        addresses.nic_mac(dst.name, plane.index).replace(":", "")
                    )
                    sent += 1
    assert sent == 4 * 3 * 2 * 2

    # Failover stage: cut p0-t0-0 -- p0-t1-1. Its T1-1 paths now die at the T0 (counted in
    # drop_port_down on the uplink); the T1-0 paths still deliver.
    from controller.show import read_switch

    down = plan_fabric(tiny, down_links=["p0-t0-0,p0-t1-1"])
    report = push(down, pipeline, wired_fabric.fabric.endpoints, connect=FAST)
    assert report.ok and sum(r.written for r in report.reports) == 4
    uplink = tiny.uplink_ports(0, 0)[1]

    def send(t1: int, tag: bytes) -> None:
        path = addresses.path("nic0", "nic3", 0, t1)
        frame = mrc_frame(
            addresses.nic_mac("nic0", 0),
            addresses.switch_mac("p0-t0-0"),
            int(addresses.nic_address("nic0", 0)),
            int(addresses.nic_address("nic3", 0)),
            path.carrier,
            tag,
        )
        sockets[("nic0", 0)].send(frame)  # type: ignore[attr-defined]

    async def dropped_on_uplink() -> int:
        endpoint = wired_fabric.fabric.endpoints["p0-t0-0"]
        client = SwitchClient("p0-t0-0", endpoint, connect_timeout=10.0)
        try:
            await client.connect()
            view = await read_switch(client, counters=True)
        finally:
            await client.close()
        return sum(
            c.packets
            for c in view.counters
            if c.counter == "MrcIngress.drop_port_down" and c.index == uplink
        )

    send(1, b"into the cut link")
    deadline = time.monotonic() + RECEIVE_PATIENCE_S
    while asyncio.run(dropped_on_uplink()) < 1:
        assert time.monotonic() < deadline, "the cut link's drop was never counted"
        time.sleep(0.1)
    send(0, b"around the cut link")
    assert sockets[("nic3", 0)].recv(65535).endswith(b"around the cut link")  # type: ignore[attr-defined]
