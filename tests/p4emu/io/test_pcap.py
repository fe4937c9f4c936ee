from __future__ import annotations

from pathlib import Path

import pytest
from scapy.layers.l2 import Ether
from scapy.utils import rdpcap

from p4emu.io import PcapWriter, PortIOError, read_pcap


def test_pcap_round_trip_and_scapy_reads_it(tmp_path: Path) -> None:
    frames = [
        bytes(Ether(dst="02:00:00:00:00:01", type=0x88B5) / (b"x" * n)) for n in (10, 100, 1400)
    ]
    writer = PcapWriter(tmp_path / "port1_out.pcap")
    for i, frame in enumerate(frames):
        writer.write(frame, 1_500_000 + i)
    writer.close()
    writer.write(b"late", 0)  # after close: ignored, not a crash
    assert read_pcap(tmp_path / "port1_out.pcap") == [
        (1_500_000 + i, f) for i, f in enumerate(frames)
    ]
    packets = rdpcap(str(tmp_path / "port1_out.pcap"))
    assert [bytes(p) for p in packets] == frames
    assert packets[0][Ether].dst == "02:00:00:00:00:01"


def test_pcap_reader_rejects_garbage_and_truncation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"\x00" * 30)
    with pytest.raises(PortIOError, match="not a microsecond pcap file"):
        read_pcap(bad)
    good = tmp_path / "good.pcap"
    writer = PcapWriter(good)
    writer.write(b"y" * 50, 0)
    writer.close()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(good.read_bytes()[:-10])
    with pytest.raises(PortIOError, match="truncated record"):
        read_pcap(cut)


def test_pcap_writer_unwritable_directory_is_clear(tmp_path: Path) -> None:
    with pytest.raises(PortIOError, match="cannot create pcap file"):
        PcapWriter(tmp_path / "missing-dir" / "x.pcap")
