"""Two ``nic-emu serve`` processes on AF_PACKET ports over veth pairs (root only)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import capabilities
import pytest

from nic_emu.cli import main

from .serve_helpers import SMALL_TRANSPORT, received_digests, serving, wait_transfer

pytestmark = pytest.mark.integration

JUMBO_MTU = 9000


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=30)


@contextlib.contextmanager
def veth_pairs(count: int, mtu: int = JUMBO_MTU) -> Iterator[list[tuple[str, str]]]:
    """``count`` veth pairs, up, with ``mtu``; removed afterwards."""
    reason = capabilities.veth_missing()  # root is not enough in a container
    if reason is not None:
        pytest.skip(reason)
    if shutil.which("ip") is None:
        pytest.fail("the ip command is missing: install apt-packages.txt (iproute2)")
    tag = f"ne{os.getpid() % 100000}"
    pairs = [(f"{tag}a{i}", f"{tag}b{i}") for i in range(count)]
    made: list[str] = []
    try:
        for left, right in pairs:
            try:
                ip("link", "add", left, "type", "veth", "peer", "name", right)
            except subprocess.CalledProcessError as exc:
                pytest.fail(f"cannot create veth pairs as root: {exc.stderr.strip()}")
            made.append(left)
            for end in (left, right):
                ip("link", "set", end, "mtu", str(mtu))
                ip("link", "set", end, "up")
        yield pairs
    finally:
        for left in made:
            with contextlib.suppress(subprocess.CalledProcessError):
                ip("link", "del", left)


def afpacket_config(tmp: Path, nic: str, interfaces: list[str]) -> dict[str, object]:
    return {
        "nic": nic,
        "topology": "tiny",
        "ports": {
            str(plane): {"driver": "afpacket", "interface": name}
            for plane, name in enumerate(interfaces)
        },
        "control": str(tmp / f"{nic}.sock"),
        "events": str(tmp / f"{nic}.events.jsonl"),
        "seed": 1,
        "transport": dict(SMALL_TRANSPORT),
    }


def test_transfer_over_veth_pairs_is_intact(tmp_path: Path) -> None:
    with veth_pairs(2) as pairs:
        config_a = afpacket_config(tmp_path, "nic0", [left for left, _ in pairs])
        config_b = afpacket_config(tmp_path, "nic3", [right for _, right in pairs])
        with serving(tmp_path, config_a, config_b) as (a, b):
            started = a.request("send", to="nic3", bytes=2 << 20, connections=2, seed=4)
            report = wait_transfer(a, started["transfer"])
            assert report["failed"] is None
            got = received_digests(b, "nic0")
            assert all(part["sha256"] in got for part in report["parts"])
            assert all(count > 0 for count in report["per_plane_bytes"].values())
            status = a.request("status")
            assert status["ports"] == {
                "0": f"afpacket:{pairs[0][0]}",
                "1": f"afpacket:{pairs[1][0]}",
            }


def test_an_interface_mtu_too_small_for_data_frames_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with veth_pairs(1, mtu=1500) as [(left, _)]:
        config = afpacket_config(tmp_path, "nic0", [left])
        path = tmp_path / "nic0.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        assert main(["serve", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "ports.0.interface" in err and "MTU 1500" in err and "mtu_payload" in err
