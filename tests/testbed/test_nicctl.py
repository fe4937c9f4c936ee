from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from testbed.exceptions import NicControlError
from testbed.nicctl import NicControl


@pytest.fixture
def server(short_root: Path) -> Iterator[Callable[[Callable[[dict], bytes | None]], NicControl]]:
    """Starts a one-thread Unix server answering each request line with ``answer(request)``."""
    sockets: list[socket.socket] = []

    def start(answer: Callable[[dict], bytes | None]) -> NicControl:
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
        return NicControl("nic0", path, timeout=1.0)

    yield start
    for listener in sockets:
        listener.close()


def test_request_returns_the_answer(server) -> None:
    seen: list[dict] = []

    def answer(request: dict) -> bytes:
        seen.append(request)
        return b'{"ok": true, "transfer": 7}\n'

    control = server(answer)
    assert control.send("nic3", 1000, seed=5) == 7
    assert seen == [
        {"op": "send", "to": "nic3", "bytes": 1000, "connections": 1, "mode": "mrc", "seed": 5}
    ]


def test_a_refusal_carries_the_nic_error_text(server) -> None:
    control = server(lambda _r: b'{"ok": false, "error": "send: no NIC named nic9"}\n')
    with pytest.raises(NicControlError, match="nic0: send failed: send: no NIC named nic9"):
        control.send("nic9", 10)


def test_malformed_and_incomplete_answers_are_errors(server) -> None:
    control = server(lambda _r: b"not json\n")
    with pytest.raises(NicControlError, match="malformed answer to 'status'"):
        control.status()


def test_answer_without_ok_is_an_error(server) -> None:
    control = server(lambda _r: b'{"planes": {}}\n')
    with pytest.raises(NicControlError, match="has no 'ok' field"):
        control.status()


def test_silent_close_is_an_error(server) -> None:
    control = server(lambda _r: None)
    with pytest.raises(NicControlError, match="closed the connection without answering"):
        control.status()
    assert not control.ready()


def test_missing_socket_names_the_path(short_root: Path) -> None:
    control = NicControl("nic2", short_root / "absent.sock")
    with pytest.raises(
        NicControlError, match=r"nic2: no control socket at .*absent.sock \(is the NIC running\?\)"
    ):
        control.status()


def test_wait_transfer_times_out_with_progress(server) -> None:
    control = server(
        lambda _r: b'{"ok": true, "done": false, "bytes_acked": 10, "bytes_total": 99}\n'
    )
    with pytest.raises(NicControlError, match=r"not done after 0.1 s \(10 of 99 bytes acked\)"):
        control.wait_transfer(1, timeout=0.1, poll=0.02)
