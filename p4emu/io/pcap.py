"""Minimal pcap (libpcap classic format) writer and reader, Ethernet link type.

The writer is used by ``p4emu-switch --pcap DIR``: like BMv2 it keeps one file per port and
direction (``port{N}_in.pcap`` / ``port{N}_out.pcap``). Timestamps have microsecond resolution.
"""

from __future__ import annotations

import struct
import threading
from pathlib import Path
from typing import BinaryIO

from p4emu.io.exceptions import PortIOError

PCAP_MAGIC_USEC = 0xA1B2C3D4
LINKTYPE_ETHERNET = 1
SNAPLEN = 65535
_GLOBAL_HEADER = struct.Struct("<IHHiIII")
_RECORD_HEADER = struct.Struct("<IIII")


class PcapWriter:
    """Appends frames to a pcap file; thread-safe; flushes every record so a crash loses nothing."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._file: BinaryIO = open(self.path, "wb")  # noqa: SIM115 - closed in close()
        except OSError as exc:
            raise PortIOError(f"cannot create pcap file {self.path}: {exc.strerror}") from exc
        self._lock = threading.Lock()
        self._file.write(
            _GLOBAL_HEADER.pack(PCAP_MAGIC_USEC, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET)
        )
        self._file.flush()

    def write(self, frame: bytes, timestamp_us: int) -> None:
        seconds, micros = divmod(int(timestamp_us), 1_000_000)
        captured = frame[:SNAPLEN]
        with self._lock:
            if self._file.closed:
                return
            self._file.write(_RECORD_HEADER.pack(seconds, micros, len(captured), len(frame)))
            self._file.write(captured)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()


def read_pcap(path: str | Path) -> list[tuple[int, bytes]]:
    """Returns ``(timestamp_us, frame)`` records of a classic little- or big-endian pcap file."""
    data = Path(path).read_bytes()
    if len(data) < _GLOBAL_HEADER.size:
        raise PortIOError(f"{path}: not a pcap file (only {len(data)} bytes)")
    (magic,) = struct.unpack_from("<I", data)
    if magic == PCAP_MAGIC_USEC:
        endian = "<"
    elif magic == 0xD4C3B2A1:
        endian = ">"
    else:
        raise PortIOError(f"{path}: not a microsecond pcap file (magic {magic:#010x})")
    record = struct.Struct(endian + "IIII")
    offset = _GLOBAL_HEADER.size
    records: list[tuple[int, bytes]] = []
    while offset < len(data):
        if offset + record.size > len(data):
            raise PortIOError(f"{path}: truncated record header at byte {offset}")
        seconds, micros, captured, _original = record.unpack_from(data, offset)
        offset += record.size
        if offset + captured > len(data):
            raise PortIOError(f"{path}: truncated record at byte {offset}")
        records.append((seconds * 1_000_000 + micros, data[offset : offset + captured]))
        offset += captured
    return records
