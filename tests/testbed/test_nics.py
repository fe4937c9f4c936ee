"""testbed.nics: the fabric's NICs through nic_emu's control client, errors naming the NIC,
and a NIC whose process is gone reported as such at once."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from nic_emu.transfers import DEFAULT_TRANSFER_DEADLINE_S
from testbed import rundir as rd
from testbed.exceptions import NicControlError
from testbed.nics import RunningNic


@pytest.fixture
def server(short_root: Path) -> Iterator[Callable[[Callable[[dict], bytes | None]], RunningNic]]:
    """Starts a one-thread Unix server answering each request line with ``answer(request)``."""
    sockets: list[socket.socket] = []

    def start(answer: Callable[[dict], bytes | None]) -> RunningNic:
        path = short_root / "n.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(4)
        sockets.append(listener)

        def serve() -> None:
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                with conn:
                    line = conn.makefile("rb").readline()
                    reply = answer(json.loads(line))
                    if reply is not None:
                        conn.sendall(reply)

        threading.Thread(target=serve, daemon=True).start()
        return RunningNic("nic0", path, timeout=1.0)

    yield start
    for listener in sockets:
        listener.close()


def test_requests_and_answers(server) -> None:
    seen: list[dict] = []

    def answer(request: dict) -> bytes:
        seen.append(request)
        if request["op"] == "send":
            return b'{"ok": true, "transfer": 7}\n'
        return b'{"ok": true, "messages": [{"from": "nic1"}]}\n'

    nic = server(answer)
    assert nic.send("nic3", 1000, seed=5) == 7
    assert nic.received() == [{"from": "nic1"}]
    assert seen[0] == {
        "op": "send",
        "to": "nic3",
        "bytes": 1000,
        "connections": 1,
        "mode": "mrc",
        "seed": 5,
        "data": "random",
        "deadline_s": DEFAULT_TRANSFER_DEADLINE_S,  # always said, never left to the NIC
    }
    assert nic.send("nic3", 1000, deadline_s=12.5) == 7
    assert seen[2]["deadline_s"] == 12.5


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (
            b'{"ok": false, "error": "send: no NIC named nic9"}\n',
            "nic0: send: send: no NIC named nic9",
        ),
        (b"not json\n", "nic0: send: malformed answer"),
        (b'{"transfer": 1}\n', "has no 'ok' field"),
        (None, "closed the connection without answering"),
        (b'{"ok": true}\n', "nic0: the answer to send has no transfer id"),
    ],
)
def test_errors_name_the_nic(server, reply: bytes | None, words: str) -> None:
    nic = server(lambda _request: reply)
    with pytest.raises(NicControlError, match=words):
        nic.send("nic9", 1)


def test_absent_socket_is_named(short_root: Path) -> None:
    with pytest.raises(NicControlError, match=r"nic2: status: no control socket at .*absent"):
        RunningNic("nic2", short_root / "absent.sock").status()
    assert not RunningNic("nic2", short_root / "absent.sock").ready()


def test_wait_transfer_times_out_with_progress(server) -> None:
    nic = server(lambda _r: b'{"ok": true, "done": false, "bytes_acked": 10, "bytes_total": 99}\n')
    with pytest.raises(NicControlError, match=r"not done after 0.1 s \(10 of 99 bytes"):
        nic.wait_transfer(1, 0.1, poll=0.01)


def test_a_dead_nic_process_is_reported_at_once(server, short_root: Path) -> None:
    """The transfer never finishes; the peer's process has exited: wait_transfer says so
    at its first poll, naming the pid and the log, not after the timeout."""
    run = rd.run_dir("r", short_root)
    state = rd.RunState("r", run.create(), "local", "p4emu", "t.yaml", 0.0, 0)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    log = short_root / "nic3.log"
    record = rd.record_process(run, state, "nic:nic3", "nic", child, ["x"], log)
    child.wait()
    peer = RunningNic("nic3", short_root / "nic3.sock", record=record)
    nic = server(lambda _r: b'{"ok": true, "done": false}\n')
    with pytest.raises(
        NicControlError,
        match=rf"nic3: the NIC process \(pid {child.pid}\) has exited with status 0 during "
        rf"the transfer; see {log}",
    ):
        nic.wait_transfer(1, 600.0, peers=(peer,))
    with pytest.raises(NicControlError, match="has exited"):
        peer.status()
