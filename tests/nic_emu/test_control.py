"""The control protocol: JSON lines, one response per request, errors that keep the
connection usable; the ops served by a NicProcess (run on a thread of the test)."""

from __future__ import annotations

import hashlib
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from nic_emu import process as process_module
from nic_emu.client import ControlClient
from nic_emu.control import MAX_REQUEST_BYTES, ControlServer, Field, RequestError, check_fields
from nic_emu.exceptions import ConfigError, ControlError

from .serve_helpers import back_to_back, threaded_nics


def echo_server(tmp_path: Path) -> ControlServer:
    def handle(request: dict[str, Any]) -> dict[str, Any]:
        if request["op"] == "boom":
            raise ZeroDivisionError("bug")
        if request["op"] == "core":
            raise ConfigError("core says no")
        if request["op"] != "echo":
            raise RequestError(f"unknown op {request['op']!r}")
        return check_fields("echo", request, {"n": Field(int), "s": Field(str, False, "x")})

    return ControlServer(tmp_path / "c.sock", handle)


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (b"{not json", "malformed request"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"n": 1}', "missing field 'op'"),
        (b'{"op": 5}', "'op' must be a string"),
        (b'{"op": "nope"}', "unknown op 'nope'"),
        (b'{"op": "echo"}', "echo: missing field 'n'"),
        (b'{"op": "echo", "n": "1"}', "field 'n' must be an integer"),
        (b'{"op": "echo", "n": true}', "field 'n' must be an integer"),
        (b'{"op": "echo", "n": 1, "z": 2}', "unknown field 'z'"),
        (b'{"op": "core"}', "core: core says no"),
        (b'{"op": "boom"}', "internal error: ZeroDivisionError"),
    ],
)
def test_bad_requests_get_specific_errors(tmp_path: Path, line: bytes, words: str) -> None:
    response = echo_server(tmp_path).respond(line)
    assert response["ok"] is False and words in response["error"]


def test_good_request_fills_defaults(tmp_path: Path) -> None:
    server = echo_server(tmp_path)
    assert server.respond(b'{"op": "echo", "n": 3}') == {"ok": True, "n": 3, "s": "x"}
    assert server.requests == 1 and server.errors == 0


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """nic0 and nic3 linked back to back, shared by this module's tests (each leaves
    them as it found them)."""
    config_a, config_b = back_to_back(tmp_path_factory.mktemp("pair"))
    with threaded_nics(config_a, config_b) as nics:
        yield nics


def exchange(path: str, payload: bytes, answers: int) -> list[dict[str, Any]]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(60)
        sock.connect(path)
        sock.sendall(payload)
        data = b""
        while data.count(b"\n") < answers:
            chunk = sock.recv(65536)
            assert chunk, "the NIC closed the connection"
            data += chunk
    return [json.loads(line) for line in data.splitlines()]


def test_errors_keep_the_connection_usable(pair: Any) -> None:
    a = pair[0]
    lines = [
        b"garbage",
        b'{"op": "nope"}',
        b'{"op": "send"}',
        b"[1]",
        b'{"op": "transfer", "id": 9}',
        b'{"op": "status"}',
    ]
    answers = exchange(a.control, b"\n".join(lines) + b"\n", len(lines))
    assert [r["ok"] for r in answers] == [False] * 5 + [True]
    assert "malformed request" in answers[0]["error"]
    assert "unknown op 'nope'" in answers[1]["error"]
    assert answers[2]["error"] == "send: missing field 'to'"
    assert "no transfer 9" in answers[4]["error"]
    assert answers[5]["nic"] == "nic0" and answers[5]["planes"] == {"0": "up", "1": "up"}


def test_an_oversized_line_is_refused_and_closes_the_connection(pair: Any) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(60)
        sock.connect(pair[0].control)
        sock.sendall(b"x" * (MAX_REQUEST_BYTES + 10))
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    (answer,) = [json.loads(line) for line in data.splitlines()]
    assert answer["ok"] is False and "longer than" in answer["error"]
    assert pair[0].request("status")["ok"]  # the NIC still serves others


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"to": "nic9", "bytes": 10}, "'nic9' is not a NIC of topology tiny"),
        ({"to": "nic0", "bytes": 10}, "cannot send to itself"),
        ({"to": "nic3", "bytes": 0}, "bytes must be"),
        ({"to": "nic3", "bytes": 10, "connections": 0}, "connections must be"),
        ({"to": "nic3", "bytes": 2, "connections": 3}, "bytes must be"),
        ({"to": "nic3", "bytes": 10, "mode": "tcp"}, "mode must be"),
        ({"to": "nic3", "bytes": 10, "seed": "x"}, "'seed' must be an integer"),
        ({"to": "nic3", "bytes": 10, "deadline_s": 0}, "deadline_s must be in (0, 86400]"),
        ({"to": "nic3", "bytes": 10, "deadline_s": -1.5}, "deadline_s must be in (0, 86400]"),
        ({"to": "nic3", "bytes": 10, "deadline_s": 1e9}, "deadline_s must be in (0, 86400]"),
        ({"to": "nic3", "bytes": 10, "deadline_s": True}, "'deadline_s' must be"),
        ({"to": "nic3", "bytes": 10, "deadline_s": "soon"}, "'deadline_s' must be"),
    ],
)
def test_send_refuses_bad_fields(pair: Any, fields: dict[str, Any], words: str) -> None:
    with ControlClient(pair[0].control, timeout=60) as client:
        response = client.raw({"op": "send", **fields})
    assert response["ok"] is False and words in response["error"]


def test_a_send_past_the_nic_memory_budget_is_refused_naming_it(
    pair: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The budget bounds what connections hold (unacknowledged and out-of-order data),
    not the transfer's size."""
    a = pair[0]
    each = a.process.connection_reservation()
    monkeypatch.setattr(a.process.budget, "limit", 3 * each)
    with ControlClient(a.control, timeout=60) as client:
        response = client.raw({"op": "send", "to": "nic3", "bytes": 1000, "connections": 4})
    assert response["ok"] is False
    assert (
        f"4 connection(s) need {4 * each} bytes of this NIC's memory budget" in (response["error"])
    )
    assert f"the budget is {3 * each} bytes and 0 are held" in response["error"]
    assert a.process.budget.used == 0 and not a.process.running


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ("zeros", "unknown data source 'zeros'"),
        ("pattern:xyz", "pattern:HEX needs hexadecimal bytes"),
        ("pattern:", "pattern:HEX needs at least one byte"),
        ("random:-1", "random:SEED needs a non-negative integer seed"),
        ("file:relative/path", "file:PATH needs an absolute path"),
        ("file:/nonexistent/data.bin", "cannot read data file '/nonexistent/data.bin'"),
    ],
)
def test_a_send_with_a_bad_data_source_is_refused_before_anything_starts(
    pair: Any, data: str, words: str
) -> None:
    a = pair[0]
    with ControlClient(a.control, timeout=60) as client:
        response = client.raw({"op": "send", "to": "nic3", "bytes": 1000, "data": data})
    assert response["ok"] is False and words in response["error"]
    assert a.process.budget.used == 0 and a.process.transfers_started == 0


def test_port_op_cuts_and_restores_a_plane(pair: Any) -> None:
    a = pair[0]
    assert a.request("port", plane=1, up=False) == {"ok": True, "plane": 1, "up": False}
    assert a.request("status")["planes"] == {"0": "up", "1": "down"}
    stats = a.request("stats")
    assert stats["planes"]["1"]["up"] is False and stats["core"]["ports_up"] == [True, False]
    a.request("port", plane=1, up=True)
    assert a.request("status")["planes"]["1"] == "up"
    with pytest.raises(ControlError, match="out of range"):
        a.request("port", plane=5, up=False)
    with pytest.raises(ControlError, match="'up' must be true or false"):
        a.request("port", plane=0, up=1)


def test_threaded_pair_moves_bytes_intact_and_reports(pair: Any) -> None:
    a, b = pair
    started = a.request("send", to="nic3", bytes=300_000, connections=2, seed=5)
    report = wait_done(a, started["transfer"])
    assert report["failed"] is None and report["bytes_acked"] == 300_000
    assert sum(report["per_plane_bytes"].values()) == 300_000
    assert sum(entry[2] for entry in report["timeline"]) == 300_000
    assert [part["qpn"] for part in report["parts"]] == started["qpns"]
    messages = b.request("received")["messages"]
    got = {m["qpn"]: m["sha256"] for m in messages if m["complete"] and m["from"] == "nic0"}
    assert got == {p["qpn"]: p["sha256"] for p in report["parts"]}
    assert sum(m["bytes"] for m in messages) == 300_000
    stats = b.request("stats")["process"]
    assert stats["received_bytes_held"] == 0  # every gap filled: nothing held
    assert stats["received_bytes_peak"] <= 1024 * 4096  # at most the receive window
    assert a.request("transfer", id=started["transfer"])["data"] == "random"
    deadline = time.monotonic() + 60
    while a.request("status")["connections"]:  # finished QPs are destroyed after a grace
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_a_file_and_a_pattern_are_sent_intact(pair: Any, tmp_path: Path) -> None:
    a, b = pair
    path = tmp_path / "data.bin"
    content = bytes(range(251)) * 2000  # 502,000 bytes; 400,000 are sent
    path.write_bytes(content)
    for data, want in (
        (f"file:{path}", content[:400_000]),
        ("pattern:c0ffee", (b"\xc0\xff\xee" * 140_000)[:400_000]),
    ):
        started = a.request("send", to="nic3", bytes=400_000, connections=2, data=data)
        report = wait_done(a, started["transfer"])
        assert report["failed"] is None and report["data"] == data
        assert report["sha256"] == hashlib.sha256(want).hexdigest()
        got = {m["sha256"] for m in b.request("received")["messages"] if m["complete"]}
        assert {part["sha256"] for part in report["parts"]} <= got


def test_a_file_that_shrinks_mid_send_fails_the_transfer_naming_it(
    pair: Any, tmp_path: Path
) -> None:
    a, _ = pair
    path = tmp_path / "data.bin"
    path.write_bytes(b"z" * (64 << 20))  # far more than one window: not all segmented yet
    started = a.request("send", to="nic3", bytes=64 << 20, data=f"file:{path}")
    deadline = time.monotonic() + 60
    while a.request("transfer", id=started["transfer"])["preparing"]:  # digested once
        assert time.monotonic() < deadline
        time.sleep(0.01)
    path.write_bytes(b"z" * 1000)  # smaller than a piece: the next read runs short
    report = wait_done(a, started["transfer"])
    assert report["failed"] is not None and "(data_source)" in report["failed"]
    assert f"data file '{path}' ended after" in report["failed"]
    assert "did it shrink during the transfer?" in report["failed"]


def test_only_the_latest_finished_transfers_are_kept(
    pair: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-running NIC forgets old finished transfers (bounded memory, issue 17) and
    says so when asked for one, instead of growing with every transfer it ever made."""
    a, _ = pair
    monkeypatch.setattr(process_module, "FINISHED_TRANSFERS_KEPT", 2)
    ids = []
    for i in range(3):  # one at a time: "latest" is by finishing order
        ids.append(a.request("send", to="nic3", bytes=20_000, seed=i)["transfer"])
        wait_done(a, ids[-1])
    assert [a.request("transfer", id=i)["id"] for i in ids[1:]] == ids[1:]
    with ControlClient(a.control, timeout=60) as client:
        forgotten = client.raw({"op": "transfer", "id": ids[0]})
        unknown = client.raw({"op": "transfer", "id": ids[-1] + 1})
    assert forgotten["ok"] is False and "finished and was forgotten" in forgotten["error"]
    assert unknown["ok"] is False and f"no transfer {ids[-1] + 1}" in unknown["error"]
    assert a.request("status")["transfers"] == ids[-1]


def wait_done(nic: Any, transfer_id: int) -> dict[str, Any]:
    deadline = time.monotonic() + 240
    while True:
        report = nic.request("transfer", id=transfer_id)
        if report["done"]:
            return report
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_stale_socket_file_is_replaced(tmp_path: Path) -> None:
    config_a, _ = back_to_back(tmp_path)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(config_a["control"])
    stale.close()  # the file stays, nobody listens: a crashed NIC's leftover
    assert Path(config_a["control"]).exists()
    with threaded_nics(config_a) as (a,):
        assert a.request("status")["nic"] == "nic0"
    assert not Path(config_a["control"]).exists()


def test_idle_incoming_qps_are_retired_but_their_messages_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process_module, "RESPONDER_IDLE_RETIRE_NS", 0)
    monkeypatch.setattr(process_module, "SENDER_RETIRE_NS", 0)
    config_a, config_b = back_to_back(tmp_path)
    with threaded_nics(config_a, config_b) as (a, b):
        report = wait_done(a, a.request("send", to="nic3", bytes=50_000)["transfer"])
        deadline = time.monotonic() + 60
        while b.request("status")["connections"] or a.request("status")["connections"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        (message,) = b.request("received")["messages"]
        assert message["sha256"] == report["sha256"] and message["complete"]
        assert b.request("stats")["process"]["received_bytes_held"] == 0
        assert b.process.retired_qpns == {report["parts"][0]["qpn"]}


def test_an_unwritable_event_log_is_reported_once_and_the_nic_keeps_serving(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # /dev/full (Linux) accepts the open and fails every write with ENOSPC.
    assert Path("/dev/full").exists()
    config_a, config_b = back_to_back(tmp_path)
    config_a["events"] = "/dev/full"
    with threaded_nics(config_a, config_b) as (a, _):
        report = wait_done(a, a.request("send", to="nic3", bytes=20_000)["transfer"])
        assert report["failed"] is None
        stats = a.request("stats")["process"]
        assert stats["records_not_logged"] > 0 and stats["records_logged"] == 0
    err = capfd.readouterr().err
    assert err.count("cannot write the event log /dev/full") == 1
