"""Per-link pcap files with nanosecond virtual timestamps (Wireshark/tshark/scapy read
them: classic pcap, magic ``0xa1b23c4d``, link type Ethernet)."""

from __future__ import annotations

import struct
from pathlib import Path

from vfabric.exceptions import FabricSetupError

PCAP_MAGIC_NSEC = 0xA1B23C4D
LINKTYPE_ETHERNET = 1
SNAPLEN = 65535
_GLOBAL = struct.Struct("<IHHiIII")
_RECORD = struct.Struct("<IIII")
NS_PER_S = 1_000_000_000


class NsPcapWriter:
    """Buffered writer; :meth:`flush` after a run, :meth:`close` at the end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._file = open(path, "wb")  # noqa: SIM115 - closed in close()
        except OSError as exc:
            raise FabricSetupError(f"cannot create pcap file {path}: {exc.strerror}") from None
        self._file.write(_GLOBAL.pack(PCAP_MAGIC_NSEC, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET))
        self.packets = 0

    def write(self, frame: bytes, t_ns: int) -> None:
        seconds, nanos = divmod(t_ns, NS_PER_S)
        captured = frame[:SNAPLEN]
        self._file.write(_RECORD.pack(seconds, nanos, len(captured), len(frame)))
        self._file.write(captured)
        self.packets += 1

    def flush(self) -> None:
        if not self._file.closed:
            self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
