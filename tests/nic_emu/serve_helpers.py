"""Builders for ``nic-emu serve`` tests: configs, free UDP ports, processes, threads."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nic_emu.client import ControlClient
from nic_emu.exceptions import ControlError
from nic_emu.process import NicProcess
from nic_emu.serve_config import parse_serve_config

REPO = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 90.0  # a loaded CI machine can take long to start Python
TRANSFER_TIMEOUT_S = 240.0
# Small EV sets keep the processes light; the mechanisms do not depend on the set size.
SMALL_TRANSPORT = {"evs_per_connection": 16, "backup_evs_per_connection": 8}


def free_udp_ports(count: int) -> list[int]:
    """``count`` distinct UDP ports on 127.0.0.1 that were free a moment ago."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def nic_config(
    tmp: Path,
    nic: str,
    links: dict[int, tuple[int, int]],
    *,
    topology: str = "tiny",
    transport: dict[str, Any] | None = None,
    seed: int = 1,
) -> dict[str, Any]:
    """A config whose plane p binds ``links[p][0]`` and sends to ``links[p][1]``."""
    return {
        "nic": nic,
        "topology": topology,
        "ports": {
            str(plane): {
                "driver": "udp",
                "local": f"127.0.0.1:{local}",
                "peer": f"127.0.0.1:{peer}",
            }
            for plane, (local, peer) in links.items()
        },
        "control": str(tmp / f"{nic}.sock"),
        "events": str(tmp / f"{nic}.events.jsonl"),
        "seed": seed,
        "transport": dict(SMALL_TRANSPORT if transport is None else transport),
    }


def back_to_back(
    tmp: Path, a: str = "nic0", b: str = "nic3", planes: int = 2, **options: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Configs of two NICs whose plane p ports are linked to each other directly."""
    ports = free_udp_ports(2 * planes)
    links_a = {p: (ports[2 * p], ports[2 * p + 1]) for p in range(planes)}
    links_b = {p: (ports[2 * p + 1], ports[2 * p]) for p in range(planes)}
    return nic_config(tmp, a, links_a, **options), nic_config(tmp, b, links_b, **options)


def write_config(tmp: Path, config: dict[str, Any]) -> Path:
    path = tmp / f"{config['nic']}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def wait_ready(control: str | Path, proc: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            _, err = proc.communicate()
            raise AssertionError(f"nic-emu exited with {proc.returncode}: {err}")
        with contextlib.suppress(ControlError), ControlClient(control, timeout=5) as client:
            client.request("status")
            return
        time.sleep(0.05)
    raise AssertionError(f"{control} not ready after {READY_TIMEOUT_S} s")


@dataclass
class ServeProcess:
    """A ``python -m nic_emu serve`` child process."""

    config: dict[str, Any]
    proc: subprocess.Popen[str]
    clients: list[ControlClient] = field(default_factory=list)

    @property
    def control(self) -> str:
        return str(self.config["control"])

    def client(self) -> ControlClient:
        client = ControlClient(self.control, timeout=60)
        self.clients.append(client)
        return client

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        with ControlClient(self.control, timeout=60) as client:
            return client.request(op, **fields)

    def signal(self, signum: int) -> int:
        self.proc.send_signal(signum)
        return self.proc.wait(timeout=60)

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def nic_emu_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "nic_emu", *args]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def start_serve(tmp: Path, config: dict[str, Any]) -> ServeProcess:
    path = write_config(tmp, config)
    proc = subprocess.Popen(
        nic_emu_command("serve", "--config", str(path)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        cwd=REPO,
    )
    served = ServeProcess(config, proc)
    try:
        wait_ready(served.control, proc)
    except BaseException:
        served.stop()
        raise
    return served


@contextlib.contextmanager
def serving(tmp: Path, *configs: dict[str, Any]) -> Iterator[list[ServeProcess]]:
    started: list[ServeProcess] = []
    try:
        for config in configs:
            started.append(start_serve(tmp, config))
        yield started
    finally:
        for served in started:
            served.stop()


def wait_transfer(served: ServeProcess, transfer_id: int) -> dict[str, Any]:
    deadline = time.monotonic() + TRANSFER_TIMEOUT_S
    while True:
        report = served.request("transfer", id=transfer_id)
        if report["done"]:
            return report
        assert time.monotonic() < deadline, f"transfer not done: {report['bytes_acked']} acked"
        time.sleep(0.05)


def received_digests(served: ServeProcess, source: str) -> list[str]:
    messages = served.request("received")["messages"]
    return [m["sha256"] for m in messages if m["from"] == source and m["complete"]]


@dataclass
class ThreadedNic:
    """A NicProcess served by a thread of the test process (no signals, same clock)."""

    process: NicProcess
    thread: threading.Thread

    @property
    def control(self) -> str:
        return str(self.process.config.control)

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        with ControlClient(self.control, timeout=60) as client:
            return client.request(op, **fields)


@contextlib.contextmanager
def threaded_nics(*configs: dict[str, Any]) -> Iterator[list[ThreadedNic]]:
    nics: list[ThreadedNic] = []
    try:
        for config in configs:
            process = NicProcess(parse_serve_config(config))
            process.open()
            thread = threading.Thread(target=process.run, daemon=True)
            thread.start()
            nics.append(ThreadedNic(process, thread))
        yield nics
    finally:
        for nic in nics:
            nic.process.request_stop()
            nic.thread.join(timeout=30)
            nic.process.close()
