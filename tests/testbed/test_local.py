from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from p4emu.server.options import parse_options
from testbed import layout
from testbed import rundir as rd
from testbed.exceptions import PortInUseError, RunDirError, UsageError
from testbed.fabric import Fabric, switch_args
from testbed.local import (
    check_ports_free,
    local_notes,
    nic_config,
    nic_ports,
    switch_ports,
    write_topology,
)
from topologies import Topology, load, loads

from .conftest import OVERRIDDEN


def switch_argv(
    command: list[str],
    topology: Topology,
    switch: str,
    ends: dict[tuple[str, int], layout.UdpEnd],
    grpc: str,
    scale: float,
    seed: int,
) -> list[str]:
    """A local-mode switch's command line, as up_local builds it."""
    ports = switch_ports(topology, switch, ends)
    return [
        *command,
        *switch_args("p4emu", topology, switch, ports, scale, grpc_address=grpc, seed=seed),
    ]


def test_switch_argv_gives_every_port_and_the_queue_settings() -> None:
    tiny = load("tiny")
    ends = layout.udp_link_ports(tiny, 30000)
    argv = switch_argv(["p4emu-switch"], tiny, "p0-t0-0", ends, "127.0.0.1:9559", 1.0, 7)
    ports = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-i"]
    assert ports == [ends[("p0-t0-0", p)].switch_arg() for p in (1, 2, 3, 4)]
    assert argv[argv.index("--cpu-port") + 1] == "510"
    assert argv[argv.index("--drop-port") + 1] == "511"
    assert argv[argv.index("--priority-queues") + 1] == "8"
    assert argv[argv.index("--queue-depth") + 1] == "64"
    assert argv[argv.index("--seed") + 1] == "7"
    assert "--queue-rate" not in argv  # every port has its own --port-queue-rate
    tail = argv[argv.index("--no-p4") :]
    assert tail[:4] == ["--no-p4", "--", "--grpc-server-addr", "127.0.0.1:9559"]
    assert argv.index("--cpu-port") > argv.index("--")  # target options, as BMv2 wants


def test_nic_config_follows_the_contract(short_root: Path) -> None:
    run = rd.run_dir("r", short_root)
    run.create()
    config = nic_config(
        run, Path("/t/tiny.yaml"), "nic1", {"0": {"driver": "udp"}}, 2, {"evs_per_connection": 8}
    )
    assert set(config) == {"nic", "topology", "ports", "control", "events", "seed", "transport"}
    assert config["control"] == str(run.file("nics", "nic1.sock"))
    assert config["events"].endswith("nics/nic1.events.jsonl")
    assert config["transport"] == {"evs_per_connection": 8}


def test_too_long_socket_path_is_refused(tmp_path: Path) -> None:
    run = rd.RunDir(tmp_path / ("x" * 120))
    with pytest.raises(RunDirError, match="longer than 107 bytes"):
        nic_config(run, Path("t.yaml"), "nic0", {}, 1, {})


def test_ports_in_use_are_named() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        with pytest.raises(PortInUseError, match=f"UDP port {port} .* choose another --base-port"):
            check_ports_free([port], [])
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        with pytest.raises(PortInUseError, match=f"TCP port {port} .*--grpc-base-port"):
            check_ports_free([], [port])


def _delay_args(argv: list[str]) -> dict[str, str]:
    """``--link-delay-us PORT=US`` options as {PORT: US}; they must come before ``--``."""
    at = [i for i, arg in enumerate(argv) if arg == "--link-delay-us"]
    assert all(i < argv.index("--") for i in at)
    return dict(argv[i + 1].split("=") for i in at)


def test_switch_command_lines_carry_each_ports_link_delay() -> None:
    topo = loads(OVERRIDDEN)
    ends = layout.udp_link_ports(topo, 30000)

    def delays(switch: str) -> dict[str, str]:
        return _delay_args(switch_argv(["p4emu-switch"], topo, switch, ends, "127.0.0.1:1", 1, 1))

    # p0-t0-1: NICs 2, 3 on ports 1, 2; p0-t1-0 on port 3 (override), p0-t1-1 on port 4.
    assert delays("p0-t0-1") == {"1": "3.0", "2": "3.0", "3": "5.5", "4": "3.0"}
    # p0-t1-0: p0-t0-0 on port 1, p0-t0-1 on port 2 (the same override, from this end).
    assert delays("p0-t1-0") == {"1": "3.0", "2": "5.5"}
    assert delays("p1-t0-0") == {}  # plane 1 has no delay: no option at all
    assert delays("p1-t0-1") == {"2": "200.0"}  # port 2 leads to nic3
    assert delays("p1-t1-0") == {}


def test_nic_configs_carry_each_planes_link_delay() -> None:
    topo = loads(OVERRIDDEN)
    ends = layout.udp_link_ports(topo, 30000)
    for nic, expected in (("nic0", [3.0, 0.0]), ("nic3", [3.0, 200.0])):
        ports = nic_ports(topo, nic, ends)
        assert [ports[str(p)]["delay_us"] for p in range(2)] == expected
        assert ports["1"] == ends[(nic, 1)].nic_port_config(expected[1])


def test_p4emu_switch_reads_the_delays_the_launcher_writes() -> None:
    topo = loads(OVERRIDDEN)
    argv = switch_argv([], topo, "p0-t0-1", layout.udp_link_ports(topo, 30000), "1.2.3.4:5", 1, 1)
    assert parse_options(argv).link_delays_us == {1: 3.0, 2: 3.0, 3: 5.5, 4: 3.0}


def _pps(gbps: float, scale: float = 1.0) -> float:
    return gbps * scale * 1e9 / (8 * layout.NOMINAL_FRAME_BYTES)


def _rate_args(argv: list[str]) -> dict[int, float]:
    """``--port-queue-rate PORT=PPS`` options as {PORT: PPS}; they must come before ``--``."""
    at = [i for i, arg in enumerate(argv) if arg == "--port-queue-rate"]
    assert all(i < argv.index("--") for i in at)
    pairs = [argv[i + 1].split("=") for i in at]
    return {int(port): float(pps) for port, pps in pairs}


def test_switch_command_lines_carry_each_ports_own_link_rate() -> None:
    topo = loads(OVERRIDDEN)
    ends = layout.udp_link_ports(topo, 30000)
    scale = 0.001

    def rates(switch: str) -> dict[int, float]:
        return _rate_args(
            switch_argv(["p4emu-switch"], topo, switch, ends, "127.0.0.1:1", scale, 1)
        )

    # p0-t0-0: nic0 (10 G override) on port 1, nic1 on 2, T1s on 3 and 4 at the default.
    assert rates("p0-t0-0") == pytest.approx(
        {1: _pps(10, scale), 2: _pps(100, scale), 3: _pps(100, scale), 4: _pps(100, scale)}
    )
    # p0-t0-1 -- p0-t1-0 is 40 G: port 3 of the T0, port 2 of the T1, nowhere else.
    assert rates("p0-t0-1") == pytest.approx(
        {1: _pps(100, scale), 2: _pps(100, scale), 3: _pps(40, scale), 4: _pps(100, scale)}
    )
    assert rates("p0-t1-0") == pytest.approx({1: _pps(100, scale), 2: _pps(40, scale)})
    assert rates("p0-t1-1") == pytest.approx({1: _pps(100, scale), 2: _pps(100, scale)})
    # plane 1 defaults to 50 G; nic3 (port 2 of p1-t0-1) is 25 G, p1-t0-0 -- p1-t1-1 400 G.
    assert rates("p1-t0-1") == pytest.approx(
        {1: _pps(50, scale), 2: _pps(25, scale), 3: _pps(50, scale), 4: _pps(50, scale)}
    )
    assert rates("p1-t0-0") == pytest.approx(
        {1: _pps(50, scale), 2: _pps(50, scale), 3: _pps(50, scale), 4: _pps(400, scale)}
    )
    assert rates("p1-t1-1") == pytest.approx({1: _pps(400, scale), 2: _pps(50, scale)})


def test_p4emu_switch_reads_the_rates_the_launcher_writes() -> None:
    topo = loads(OVERRIDDEN)
    ends = layout.udp_link_ports(topo, 30000)
    options = parse_options(switch_argv([], topo, "p1-t0-1", ends, "1.2.3.4:5", 1e-6, 1))
    assert options.queue_rate_pps is None  # the CPU port is not a link: no default rate
    assert options.port_queue_rates_pps == {
        1: _pps(50, 1e-6),
        2: _pps(25, 1e-6),  # 0.74 packets/s: written exactly, never rounded to a refused 0
        3: _pps(50, 1e-6),
        4: _pps(50, 1e-6),
    }
    assert options.link_delays_us == {2: 200.0}


def test_notes_say_what_is_and_is_not_emulated() -> None:
    notes = local_notes(load("tiny"), 0.01)
    assert "--port-queue-rate" in notes[0] and "100 Gb/s x 0.01 = 29,579 packets/s" in notes[0]
    assert "link delay 1 us is added by each link's sender" in notes[1]
    assert "not emulated" not in " ".join(notes)
    overridden = local_notes(loads(OVERRIDDEN), 1.0)[0]
    for rate in ("400 Gb/s", "100 Gb/s", "50 Gb/s", "40 Gb/s", "25 Gb/s", "10 Gb/s"):
        assert rate in overridden


def _fabric(root: Path) -> Fabric:
    run = rd.run_dir("f", root)
    run_id = run.create()
    topology_file = write_topology(run, load("tiny"))
    state = rd.RunState(
        "f",
        run_id,
        "local",
        "p4emu",
        str(topology_file),
        time.time(),
        1,
        phase="ready",
        settings={"grpc_base_port": 9559},
    )
    for nic in ("nic0", "nic1", "nic2", "nic3"):
        state.processes[f"nic:{nic}"] = rd.ProcessRecord(f"nic:{nic}", "nic", 1, -5, ["x"], "")
    run.save(state)
    return Fabric.open("f", root)


def test_unknown_names_are_usage_errors(run_root: Path) -> None:
    fabric = _fabric(run_root)
    with pytest.raises(UsageError, match="there is no link p0-t0-0 -- p1-t1-0"):
        fabric.link_down("p0-t0-0", "p1-t1-0")
    with pytest.raises(UsageError, match=r"no switch named 'p0-t1-9' \(plane 0 has T1s"):
        fabric.link_up("p0-t0-0", "p0-t1-9")
    with pytest.raises(UsageError, match="tiny has no switch 'p9-t0-0'"):
        fabric.switch_down("p9-t0-0")
    with pytest.raises(
        UsageError, match=r"tiny has no NIC 'nic7' \(NICs: nic0, nic1, nic2, nic3\)"
    ):
        fabric.port_down("nic7", 0)
    with pytest.raises(UsageError, match=r"tiny has planes 0\.\.1, not 2"):
        fabric.port_down("nic0", 2)
    with pytest.raises(UsageError, match="plane 'x' is not a number"):
        fabric.port_up("nic0", "x")


def test_cut_ports_are_both_ends_of_cut_links_and_the_t0_end_of_nic_ports_down(
    run_root: Path,
) -> None:
    fabric = _fabric(run_root)
    fabric.state.links_down.append(["p0-t0-0", "p0-t1-1"])
    fabric.state.ports_down.append(["nic3", 1])
    tiny = fabric.topology
    uplink = tiny.link("p0-t0-0", "p0-t1-1")
    access = tiny.link("nic3", "p1-t0-1")
    assert fabric.cut_ports() == {
        "p0-t0-0": {uplink.a.port},
        "p0-t1-1": {uplink.b.port},
        "p1-t0-1": {access.b.port},
    }


def test_port_changes_go_through_the_management_channel(
    run_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gNMI for p4emu, BMv2's runtime CLI (port_remove / port_add) for BMv2; a switch that
    is down is skipped (it gets the cuts when it comes back)."""
    calls: list[tuple[object, ...]] = []
    monkeypatch.setattr(
        "testbed.fabric.gnmi_set_ports", lambda *args, **kw: calls.append(("gnmi", *args))
    )
    monkeypatch.setattr(
        "testbed.fabric.bmv2_set_ports", lambda *args, **kw: calls.append(("bmv2", *args))
    )
    fabric = _fabric(run_root)
    fabric.state.switches_down.append("p0-t1-1")
    fabric.set_ports({"p0-t0-0": [3, 3], "p0-t1-1": [1]}, up=False)
    assert calls == [("gnmi", fabric.endpoints["p0-t0-0"].address, [3], False)]
    calls.clear()
    fabric.state.target = "bmv2"
    fabric.state.settings["thrift_base_port"] = 9090
    fabric.set_ports({"p0-t0-1": [4]}, up=True)
    assert calls == [("bmv2", 9091, {4: "p0-t0-1-eth4"}, True)]
