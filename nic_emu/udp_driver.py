"""A NIC port that is one end of a loopback-UDP link (docs/p4emu-switch.md).

Link format, shared with ``p4emu-switch`` (whose own driver this module does not import):
every Ethernet frame is exactly one UDP datagram, with no extra header, sent from the
port's own socket to its peer's. The socket is ``connect()``ed to the peer, so the kernel
drops datagrams from anyone else, and a peer that is not running shows up as
ECONNREFUSED (its frames are lost, as on a cable to a switched-off host).
"""

from __future__ import annotations

import errno
import socket

from nic_emu.exceptions import PortError
from nic_emu.ports import MAX_FRAME, SOCKET_BUFFER_BYTES, new_counters

_LOST_ON_SEND = frozenset((errno.ECONNREFUSED, errno.EAGAIN, errno.ENOBUFS, errno.EHOSTUNREACH))


class UdpPort:
    """Plane ``plane``'s port: bind ``local``, exchange frames with ``peer``."""

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

    def fileno(self) -> int:
        return self._socket.fileno()

    def send(self, frame: bytes) -> bool:
        try:
            self._socket.send(frame)
        except OSError as exc:
            if exc.errno in _LOST_ON_SEND:
                self.counters["tx_lost"] += 1
                return False
            raise PortError(f"plane {self.plane} ({self.description}): {exc.strerror}") from None
        self.counters["tx_frames"] += 1
        return True

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
                raise PortError(
                    f"plane {self.plane} ({self.description}): {exc.strerror}"
                ) from None
            self.counters["rx_frames"] += 1
            return frame

    def close(self) -> None:
        self._socket.close()
