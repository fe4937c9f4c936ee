from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from testbed import layout
from testbed import rundir as rd
from testbed.exceptions import PortInUseError, RunDirError, UsageError
from testbed.fabric import Fabric
from testbed.local import check_ports_free, local_notes, nic_config, switch_argv, write_topology
from topologies import load


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
    assert argv[-4:] == ["--no-p4", "--", "--grpc-server-addr", "127.0.0.1:9559"]


def test_nic_config_follows_the_contract(short_root: Path) -> None:
    run = rd.run_dir("r", short_root)
    run.create()
    config = nic_config(
        run, Path("/t/tiny.yaml"), "nic1", {"0": {"driver": "udp"}}, 2, {"ev_count": 8}
    )
    assert set(config) == {"nic", "topology", "ports", "control", "events", "seed", "transport"}
    assert config["control"] == str(run.file("nics", "nic1.sock"))
    assert config["events"].endswith("nics/nic1.events.jsonl")
    assert config["transport"] == {"ev_count": 8}


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


def test_notes_say_what_is_and_is_not_emulated() -> None:
    notes = local_notes(load("tiny"), 0.01)
    assert "--queue-rate" in notes[0] and "100 Gb/s x 0.01" in notes[0]
    assert "link delay 1 us is not emulated" in notes[1]


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


def test_down_links_include_the_links_of_ports_down(run_root: Path) -> None:
    fabric = _fabric(run_root)
    fabric.state.links_down.append(["p0-t0-0", "p0-t1-1"])
    fabric.state.ports_down.append(["nic3", 1])
    assert fabric.down_links() == [("p0-t0-0", "p0-t1-1"), ("nic3", "p1-t0-1")]
