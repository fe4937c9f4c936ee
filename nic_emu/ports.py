"""NIC port drivers (one port per plane) and what the serving loop needs from them.

A port moves whole Ethernet frames between one plane of the NIC and the outside:

- :class:`UdpPort`: one end of a loopback-UDP link (docs/p4emu-switch.md). Link format,
  shared with ``p4emu-switch`` (whose own driver this module does not import): every
  Ethernet frame is exactly one UDP datagram, with no extra header, sent from the port's
  own socket to its peer's. The socket is ``connect()``ed to the peer, so the kernel drops
  datagrams from anyone else, and a peer that is not running shows up as ECONNREFUSED
  (its frames are lost, as on a cable to a switched-off host).
- :class:`AfPacketPort`: a Linux interface through an AF_PACKET raw socket (Mininet
  hosts, veth pairs; needs root or CAP_NET_RAW). The socket sees every frame on the
  interface (``ETH_P_ALL``) except the ones it sent itself (``PACKET_IGNORE_OUTGOING``,
  Linux >= 4.20). Anything that is not MRC traffic for this NIC (IPv6 neighbour
  discovery, ARP...) is counted and dropped by the core.

Drivers are thin and non-blocking; every protocol decision stays in
:class:`nic_emu.core.NicCore`, and the serving loop (:mod:`nic_emu.process`) turns
readiness into ``receive_frame`` / ``service`` calls.
"""

from __future__ import annotations

import errno
import fcntl
import socket
import struct
from typing import Protocol

from nic_emu.exceptions import PortError

MAX_FRAME = 65535
SOCKET_BUFFER_BYTES = 4 * 1024 * 1024  # a few windows of 4 KB frames per port


class PortDriver(Protocol):
    """One NIC port. ``counters`` holds at least ``tx_frames``, ``tx_lost``,
    ``rx_frames``."""

    plane: int
    description: str
    counters: dict[str, int]

    def fileno(self) -> int: ...

    def send(self, frame: bytes) -> bool:
        """Put one frame on the wire; False if it was lost (peer absent, buffer full)."""
        ...

    def receive(self) -> bytes | None:
        """One waiting frame, or None if none is waiting (never blocks)."""
        ...

    def close(self) -> None: ...


def new_counters() -> dict[str, int]:
    return {"tx_frames": 0, "tx_lost": 0, "rx_frames": 0}


class _SocketPort:
    """What both port kinds do with their non-blocking socket: a send that fails with
    an errno in ``LOST_ON_SEND`` is a frame lost as on a wire (counted), any other
    failure a :class:`PortError` naming the port."""

    LOST_ON_SEND: frozenset[int] = frozenset()
    plane: int
    description: str
    counters: dict[str, int]
    _socket: socket.socket

    def fileno(self) -> int:
        return self._socket.fileno()

    def send(self, frame: bytes) -> bool:
        try:
            self._socket.send(frame)
        except OSError as exc:
            if exc.errno in self.LOST_ON_SEND:
                self.counters["tx_lost"] += 1
                return False
            raise self._error(exc) from None
        self.counters["tx_frames"] += 1
        return True

    def _error(self, exc: OSError) -> PortError:
        return PortError(f"plane {self.plane} ({self.description}): {exc.strerror}")

    def close(self) -> None:
        self._socket.close()


# ---------------------------------------------------------------- loopback UDP


class UdpPort(_SocketPort):
    """Plane ``plane``'s port: bind ``local``, exchange frames with ``peer``."""

    # an absent peer (ICMP refused / unreachable) or a full buffer: lost, as on a wire
    LOST_ON_SEND = frozenset((errno.ECONNREFUSED, errno.EAGAIN, errno.ENOBUFS, errno.EHOSTUNREACH))

    def __init__(self, plane: int, local: tuple[str, int], peer: tuple[str, int]) -> None:
        self.plane = plane
        self.peer = peer
        self.description = f"udp:{local[0]}:{local[1]}->{peer[0]}:{peer[1]}"
        self.counters = new_counters()
        self.counters["rx_refused"] = 0
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER_BYTES)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER_BYTES)
            sock.bind(local)
        except OSError as exc:
            sock.close()
            reason = "in use" if exc.errno == errno.EADDRINUSE else "cannot be bound"
            raise PortError(f"{local[0]}:{local[1]} {reason} ({exc.strerror})") from None
        try:
            sock.connect(peer)
        except OSError as exc:
            sock.close()
            raise PortError(f"cannot address peer {peer[0]}:{peer[1]} ({exc.strerror})") from None
        sock.setblocking(False)
        self._socket = sock
        self.local = sock.getsockname()[:2]

    def receive(self) -> bytes | None:
        while True:
            try:
                frame = self._socket.recv(MAX_FRAME)
            except BlockingIOError:
                return None
            except ConnectionRefusedError:
                # The delayed ICMP error of an earlier send to an absent peer.
                self.counters["rx_refused"] += 1
                continue
            except OSError as exc:
                raise self._error(exc) from None
            self.counters["rx_frames"] += 1
            return frame


# ---------------------------------------------------------------- AF_PACKET

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
SIOCGIFMTU = 0x8921
ETHERNET_HEADER = 14  # AF_PACKET frames may be MTU + this many bytes long


class AfPacketPort(_SocketPort):
    """Plane ``plane``'s port on Linux interface ``interface``."""

    # interface down or congested: lost, as on a wire
    LOST_ON_SEND = frozenset((errno.ENETDOWN, errno.ENXIO, errno.EAGAIN, errno.ENOBUFS))

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

    def receive(self) -> bytes | None:
        try:
            frame = self._socket.recv(MAX_FRAME)
        except BlockingIOError:
            return None
        except OSError as exc:
            if exc.errno in (errno.ENETDOWN, errno.ENXIO):
                return None
            raise self._error(exc) from None
        self.counters["rx_frames"] += 1
        return frame
