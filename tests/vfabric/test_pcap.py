"""Per-link pcap files: virtual nanosecond timestamps, readable by scapy and tshark."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from vfabric import VirtualFabric


def _run(tmp_path: Path) -> VirtualFabric:
    fabric = VirtualFabric("tiny", seed=1, pcap_dir=tmp_path / "pcap")
    fabric.transfer("nic0", "nic3", 64 << 10)
    assert fabric.run()
    fabric.close()
    return fabric


def test_pcap_per_link_direction_with_virtual_ns_timestamps(tmp_path: Path) -> None:
    from scapy.utils import rdpcap

    import mrc_wire.scapy_layers as layers

    fabric = _run(tmp_path)
    wire = fabric.wires[("p0-t0-0", "p0-t1-0")]
    packets = rdpcap(str(tmp_path / "pcap" / "p0-t0-0--p0-t1-0.pcap"))
    assert len(packets) == wire.tx_packets > 0
    stamps = [int(p.time * 1_000_000_000) for p in packets]
    assert stamps == sorted(stamps) and 0 < stamps[0] < fabric.now
    assert stamps[0] % 1000 != 0 or stamps[1] % 1000 != 0  # nanoseconds, not µs
    assert packets[0].haslayer(layers.MrcBTH)
    assert sum(1 for p in tmp_path.joinpath("pcap").iterdir()) == len(fabric.wires)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_tshark_reads_the_pcap(tmp_path: Path) -> None:
    fabric = _run(tmp_path)
    path = tmp_path / "pcap" / "nic0--p1-t0-0.pcap"
    done = subprocess.run(
        ["tshark", "-r", str(path), "-T", "fields", "-e", "frame.time_epoch", "-e", "ipv6.dst"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    assert len(rows) == fabric.wires[("nic0", "p1-t0-0")].tx_packets
    assert all(row[1].startswith("fcbb:bb00:") for row in rows)
