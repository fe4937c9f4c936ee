"""A NIC port bound to a Linux interface through an AF_PACKET raw socket (Mininet hosts,
veth pairs; needs root or CAP_NET_RAW).

The socket sees every frame on the interface (``ETH_P_ALL``) except the ones it sent
itself (``PACKET_IGNORE_OUTGOING``, Linux >= 4.20). Anything that is not MRC traffic for
this NIC (IPv6 neighbour discovery, ARP...) is counted and dropped by the core.
"""

from __future__ import annotations

import errno
import fcntl
import socket
import struct

from nic_emu.exceptions import PortError
from nic_emu.ports import MAX_FRAME, SOCKET_BUFFER_BYTES, new_counters

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
SIOCGIFMTU = 0x8921
ETHERNET_HEADER = 14  # AF_PACKET frames may be MTU + this many bytes long

_LOST_ON_SEND = frozenset((errno.ENETDOWN, errno.ENXIO, errno.EAGAIN, errno.ENOBUFS))


class AfPacketPort:
    """Plane ``plane``'s port on Linux interface ``interface``."""

    def __init__(self, plane: int, interface: str) -> None:
        self.plane = plane
        self.interface = interface
        self.description = f"afpacket:{interface}"
        self.counters = new_counters()
        try:
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        except PermissionError:
            raise PortError(
                f"opening a raw socket on {interface} needs root (CAP_NET_RAW)"
            ) from None
        try:
            sock.bind((interface, 0))
        except OSError as exc:
            sock.close()
            raise PortError(f"cannot bind to interface {interface!r} ({exc.strerror})") from None
        try:
            sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        except OSError as exc:
            sock.close()
            raise PortError(
                f"the kernel lacks PACKET_IGNORE_OUTGOING (Linux >= 4.20) ({exc.strerror})"
            ) from None
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER_BYTES)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER_BYTES)
        request = struct.pack("16si", interface.encode()[:15], 0)
        self.mtu: int = struct.unpack("16si", fcntl.ioctl(sock.fileno(), SIOCGIFMTU, request))[1]
        sock.setblocking(False)
        self._socket = sock

    @property
    def max_frame(self) -> int:
        """The largest Ethernet frame the interface sends."""
        return self.mtu + ETHERNET_HEADER

    def fileno(self) -> int:
        return self._socket.fileno()

    def send(self, frame: bytes) -> bool:
        try:
            self._socket.send(frame)
        except OSError as exc:
            if exc.errno in _LOST_ON_SEND:
                self.counters["tx_lost"] += 1  # interface down or congested: lost, as on a wire
                return False
            raise PortError(f"plane {self.plane} ({self.description}): {exc.strerror}") from None
        self.counters["tx_frames"] += 1
        return True

    def receive(self) -> bytes | None:
        try:
            frame = self._socket.recv(MAX_FRAME)
        except BlockingIOError:
            return None
        except OSError as exc:
            if exc.errno in (errno.ENETDOWN, errno.ENXIO):
                return None
            raise PortError(f"plane {self.plane} ({self.description}): {exc.strerror}") from None
        self.counters["rx_frames"] += 1
        return frame

    def close(self) -> None:
        self._socket.close()
