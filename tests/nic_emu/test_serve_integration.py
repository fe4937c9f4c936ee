"""Two ``nic-emu serve`` processes linked back to back over loopback UDP (plane p of one
NIC to plane p of the other, no switch: the receiver only checks the inner address)."""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .serve_helpers import (
    READY_TIMEOUT_S,
    REPO,
    ServeProcess,
    back_to_back,
    child_env,
    free_udp_ports,
    nic_config,
    nic_emu_command,
    received_digests,
    serving,
    wait_transfer,
    write_config,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[ServeProcess]]:
    """nic0 and nic3 of ``tiny``, both planes linked back to back."""
    tmp = tmp_path_factory.mktemp("pair")
    config_a, config_b = back_to_back(tmp)
    with serving(tmp, config_a, config_b) as nics:
        yield nics


def events_of(served: ServeProcess) -> list[dict[str, Any]]:
    text = Path(served.config["events"]).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_transfer_is_delivered_byte_exact(pair: list[ServeProcess]) -> None:
    a, b = pair
    started = a.request("send", to="nic3", bytes=3 << 20, connections=1, mode="mrc", seed=7)
    report = wait_transfer(a, started["transfer"])
    assert report["failed"] is None and report["bytes_acked"] == 3 << 20
    assert report["bytes_delivered_intact"] == 3 << 20
    assert report["sha256"] in received_digests(b, "nic0")  # the launcher's check
    assert set(report["per_plane_bytes"]) == {"0", "1"}
    assert all(count > 0 for count in report["per_plane_bytes"].values())
    assert report["goodput_gbps"] > 0 and report["elapsed_s"] > 0
    kinds = [e["kind"] for e in events_of(a)]
    assert "transfer_start" in kinds and "transfer_done" in kinds
    assert "qp_accepted" in [e["kind"] for e in events_of(b)]


def test_many_connections_and_the_roce_baseline_are_intact(pair: list[ServeProcess]) -> None:
    a, b = pair
    for mode, connections in (("mrc", 4), ("roce", 2)):
        started = a.request("send", to="nic3", bytes=1_500_001, connections=connections, mode=mode)
        report = wait_transfer(a, started["transfer"])
        assert report["failed"] is None and report["mode"] == mode
        got = received_digests(b, "nic0")
        assert all(part["sha256"] in got for part in report["parts"])
        assert sum(part["bytes"] for part in report["parts"]) == 1_500_001


def test_both_directions_at_once(pair: list[ServeProcess]) -> None:
    a, b = pair
    there = a.request("send", to="nic3", bytes=1 << 20, seed=11)
    back = b.request("send", to="nic0", bytes=1 << 20, seed=12)
    assert wait_transfer(a, there["transfer"])["sha256"] in received_digests(b, "nic0")
    assert wait_transfer(b, back["transfer"])["sha256"] in received_digests(a, "nic3")


def test_a_port_cut_mid_transfer_completes_on_the_other_plane(pair: list[ServeProcess]) -> None:
    a, b = pair
    size = 48 << 20
    started = a.request("send", to="nic3", bytes=size, seed=3)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while a.request("transfer", id=started["transfer"])["bytes_acked"] < 1 << 20:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    cut = a.request("transfer", id=started["transfer"])["elapsed_s"]
    a.request("port", plane=1, up=False)
    try:
        report = wait_transfer(a, started["transfer"])
    finally:
        a.request("port", plane=1, up=True)
    if report["elapsed_s"] <= cut:
        pytest.fail("the transfer ended before the cut; make it larger")
    assert report["failed"] is None
    assert report["sha256"] in received_digests(b, "nic0")
    after = [entry for entry in report["timeline"] if entry[0] > cut + 0.05]
    assert sum(entry[2] for entry in after if entry[1] == 0) > 0
    assert any(event["plane"] == 1 for event in report["repath_events"])
    stats = a.request("stats")["process"]
    assert stats["tx_port_down"] >= 0 and stats["rx_port_down"] >= 0
    assert any(e["kind"] == "port_down" and e["plane"] == 1 for e in events_of(a))


class Relay:
    """Forwards plane-1 datagrams between two ports, and injects datagrams of its own."""

    def __init__(self, a_port: int, b_port: int, own: tuple[int, int]) -> None:
        self.to_a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # what A sends to
        self.to_b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # what B sends to
        # Ports picked with the NICs' (not port 0: the kernel could hand out one of the
        # NICs' ports, just released by free_udp_ports, and a NIC would find it in use).
        self.to_a.bind(("127.0.0.1", own[0]))
        self.to_b.bind(("127.0.0.1", own[1]))
        self.a_addr = ("127.0.0.1", a_port)
        self.b_addr = ("127.0.0.1", b_port)
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)

    @property
    def ports(self) -> tuple[int, int]:
        return self.to_a.getsockname()[1], self.to_b.getsockname()[1]

    def run(self) -> None:
        while not self.stop:
            readable, _, _ = select.select([self.to_a, self.to_b], [], [], 0.05)
            for sock in readable:
                frame = sock.recv(65535)
                if sock is self.to_a:
                    self.to_b.sendto(frame, self.b_addr)
                else:
                    self.to_a.sendto(frame, self.a_addr)

    def inject_to_b(self, frame: bytes) -> None:
        self.to_b.sendto(frame, self.b_addr)

    def close(self) -> None:
        self.stop = True
        self.thread.join(timeout=10)
        self.to_a.close()
        self.to_b.close()


def test_malformed_datagrams_are_counted_and_ignored(tmp_path: Path) -> None:
    ports = free_udp_ports(6)
    relay = Relay(ports[2], ports[3], own=(ports[4], ports[5]))
    relay_a, relay_b = relay.ports
    config_a = nic_config(tmp_path, "nic0", {0: (ports[0], ports[1]), 1: (ports[2], relay_a)})
    config_b = nic_config(tmp_path, "nic3", {0: (ports[1], ports[0]), 1: (ports[3], relay_b)})
    relay.thread.start()
    garbage = [b"", b"\x00", b"x" * 60, bytes(200), b"\xff" * 1500]
    try:
        with serving(tmp_path, config_a, config_b) as (a, b):
            started = a.request("send", to="nic3", bytes=2 << 20, seed=9)
            for frame in garbage * 4:
                relay.inject_to_b(frame)
            report = wait_transfer(a, started["transfer"])
            assert report["failed"] is None
            assert report["sha256"] in received_digests(b, "nic0")
            stats = b.request("stats")
            assert stats["core"]["counters"]["rx_malformed"] == len(garbage) * 4
            assert stats["core"]["drop_reasons"]["malformed"] == len(garbage) * 4
            assert b.request("status")["nic"] == "nic3"
    finally:
        relay.close()


@pytest.mark.parametrize(
    ("signum", "code", "stderr"),
    [(signal.SIGTERM, 0, ""), (signal.SIGINT, 130, "nic-emu: interrupted\n")],  # clikit's codes
)
def test_signals_exit_cleanly(tmp_path: Path, signum: int, code: int, stderr: str) -> None:
    config_a, _ = back_to_back(tmp_path)
    with serving(tmp_path, config_a) as (a,):
        assert a.signal(signum) == code
        _, err = a.proc.communicate()
        assert err == stderr
        assert not Path(a.control).exists()
        assert events_of(a)[-1]["kind"] == "nic_stop"


def test_shutdown_op_answers_then_exits(tmp_path: Path) -> None:
    config_a, _ = back_to_back(tmp_path)
    with serving(tmp_path, config_a) as (a,):
        assert a.request("shutdown") == {"ok": True}
        assert a.proc.wait(timeout=60) == 0
        assert not Path(a.control).exists()


def test_a_bad_config_exits_2_with_one_line(tmp_path: Path) -> None:
    config_a, _ = back_to_back(tmp_path)
    config_a["transport"] = {"evs_per_connection": "lots"}
    path = write_config(tmp_path, config_a)
    done = subprocess.run(
        nic_emu_command("serve", "--config", str(path)),
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=REPO,
        timeout=READY_TIMEOUT_S,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "transport.evs_per_connection" in done.stderr


def run_send(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        nic_emu_command("send", *args),
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=REPO,
        timeout=600,
    )


def test_send_command_prints_progress_and_a_summary(pair: list[ServeProcess]) -> None:
    a, b = pair
    done = run_send("--to", "nic3", "--bytes", "2M", "--connections", "2", "--via", a.control)
    assert done.returncode == 0, done.stderr
    first, second = done.stderr.splitlines()[:2]
    assert first == "transfer deadline: 300 s"  # the default, said up front
    assert second.startswith("progress ")  # not a TTY: plain lines
    assert "goodput:" in done.stdout and "per-plane share: plane 0:" in done.stdout
    assert "retransmissions:" in done.stdout and "repath events:" in done.stdout
    as_json = run_send("--to", "nic3", "--bytes", "64K", "--via", a.control, "--json")
    report = json.loads(as_json.stdout)
    assert report["sha256"] in received_digests(b, "nic0")


def test_send_command_failures_exit_1_with_a_message(
    pair: list[ServeProcess], tmp_path: Path
) -> None:
    a, _ = pair
    unknown = run_send("--to", "nic9", "--bytes", "10", "--via", a.control)
    assert unknown.returncode == 1 and "'nic9' is not a NIC of topology tiny" in unknown.stderr
    dead = run_send("--to", "nic3", "--bytes", "10", "--via", str(tmp_path / "none.sock"))
    assert dead.returncode == 1 and "no control socket" in dead.stderr
    usage = run_send("--to", "nic3", "--bytes", "lots", "--via", a.control)
    assert usage.returncode == 2 and usage.stderr.count("\n") == 1


def test_send_command_reports_a_failed_transfer(tmp_path: Path) -> None:
    # A NIC whose peer never answers: quick timeouts make the connection give up soon.
    ports = free_udp_ports(4)
    config = nic_config(
        tmp_path,
        "nic0",
        {0: (ports[0], ports[1]), 1: (ports[2], ports[3])},
        transport={
            "evs_per_connection": 8,
            "ack_timeout_exp": 10,
            "max_retries": 1,
            "no_usable_ev_timeout_ns": 200_000_000,
        },
    )
    with serving(tmp_path, config) as (a,):
        done = run_send("--to", "nic3", "--bytes", "100K", "--via", a.control)
    assert done.returncode == 1
    assert "the transfer failed: connection QPN" in done.stderr
    assert "FAILED" in done.stdout


def test_a_transfer_that_cannot_finish_fails_at_its_deadline_naming_the_paths(
    tmp_path: Path,
) -> None:
    ports = free_udp_ports(4)
    config = nic_config(tmp_path, "nic0", {0: (ports[0], ports[1]), 1: (ports[2], ports[3])})
    with serving(tmp_path, config) as (a,):
        done = run_send("--to", "nic3", "--bytes", "100K", "--via", a.control, "--deadline", "0.5")
    assert done.returncode == 1
    assert done.stderr.startswith("transfer deadline: 0.5 s")
    assert "(deadline): transfer 1 to nic3 not done within its deadline of 0.5 s" in done.stderr
    assert "paths: plane 0 via p0-t1-0:" in done.stderr and "probes answered" in done.stderr
