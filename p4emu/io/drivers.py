"""Port drivers: a Linux interface (AF_PACKET) or a loopback-UDP link.

Loopback-UDP link format (documented in docs/p4emu-switch.md, shared with nic_emu): every
Ethernet frame is one UDP datagram, sent from the port's own UDP socket to its peer's; no
extra header. A link is two such sockets that name each other, so no root is needed.
"""

from __future__ import annotations

import errno
import re
import socket
import struct
from dataclasses import dataclass
from typing import Protocol

from p4emu.io.exceptions import PortIOError, PortSpecError

ETH_P_ALL = 0x0003
# Linux >= 4.20: do not deliver our own transmitted frames back to our AF_PACKET socket.
PACKET_IGNORE_OUTGOING = 23
SOL_PACKET = 263
MAX_FRAME = 65535
SOCKET_BUFFER_BYTES = 4 * 1024 * 1024
# linux/if_packet.h: per-frame auxiliary data (the VLAN tag the kernel took off the frame).
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 1 << 4
TP_STATUS_VLAN_TPID_VALID = 1 << 6
ETH_P_8021Q = 0x8100
# struct tpacket_auxdata: status, len, snaplen (u32); mac, net, vlan_tci, vlan_tpid (u16).
_AUXDATA = struct.Struct("=IIIHHHH")
_AUX_SPACE = socket.CMSG_SPACE(_AUXDATA.size)


def restore_vlan_tag(frame: bytes, ancillary: list[tuple[int, int, bytes]]) -> bytes:
    """The frame as it was on the wire: the 802.1Q tag the kernel stripped put back.

    Linux removes the outer VLAN tag of received frames (hardware or software offload) and
    reports it in PACKET_AUXDATA; libpcap re-inserts it after the MAC addresses, and so does
    p4emu, so the program sees the tag that was on the wire.
    """
    for level, kind, data in ancillary:
        if level != SOL_PACKET or kind != PACKET_AUXDATA or len(data) < _AUXDATA.size:
            continue
        status, _len, _snap, _mac, _net, tci, tpid = _AUXDATA.unpack_from(data)
        if not status & TP_STATUS_VLAN_VALID or len(frame) < 12:
            return frame
        if not status & TP_STATUS_VLAN_TPID_VALID:
            tpid = ETH_P_8021Q
        return frame[:12] + struct.pack("!HH", tpid, tci) + frame[12:]
    return frame


class PortDriver(Protocol):
    """Moves whole Ethernet frames between one switch port and the outside."""

    port: int
    description: str

    def fileno(self) -> int: ...

    def send(self, frame: bytes) -> None: ...

    def receive(self) -> bytes | None:
        """One waiting frame, or None if none is waiting (never blocks)."""
        ...

    def close(self) -> None: ...


class UdpLinkPort:
    """A switch port that is one end of a loopback-UDP link."""

    def __init__(self, port: int, local: tuple[str, int], peer: tuple[str, int]) -> None:
        self.port = port
        self.local = local
        self.peer = peer
        self.description = f"udp:{local[0]}:{local[1]}->{peer[0]}:{peer[1]}"
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER_BYTES)
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER_BYTES)
            self._socket.bind(local)
            # A connected UDP socket only receives from its peer (the kernel filters strangers)
            # and reports a dead peer (ICMP port unreachable) as ECONNREFUSED.
            self._socket.connect(peer)
        except OSError as exc:
            self._socket.close()
            raise PortIOError(
                f"port {port}: cannot bind UDP {local[0]}:{local[1]} (peer {peer[0]}:{peer[1]}): {exc.strerror}"
            ) from exc
        self._socket.setblocking(False)
        self.local = self._socket.getsockname()[:2]
        self.frames_lost_unreachable = 0

    def fileno(self) -> int:
        return self._socket.fileno()

    def send(self, frame: bytes) -> None:
        try:
            self._socket.send(frame)
        except OSError as exc:
            # A peer that is not running yet (ICMP port unreachable) or a full buffer loses
            # the frame, as a cable to a dead or overloaded host would.
            if exc.errno in (errno.ECONNREFUSED, errno.EAGAIN, errno.ENOBUFS):
                self.frames_lost_unreachable += 1
                return
            raise PortIOError(f"port {self.port} ({self.description}): {exc.strerror}") from exc

    def receive(self) -> bytes | None:
        while True:
            try:
                return self._socket.recv(MAX_FRAME)
            except BlockingIOError:
                return None
            except ConnectionRefusedError:
                # Delayed ICMP error of an earlier send to a dead peer: that frame was lost.
                self.frames_lost_unreachable += 1
                continue
            except OSError as exc:
                raise PortIOError(f"port {self.port} ({self.description}): {exc.strerror}") from exc

    def close(self) -> None:
        self._socket.close()


class AfPacketPort:
    """A switch port bound to a Linux interface through an AF_PACKET raw socket (needs root)."""

    def __init__(self, port: int, interface: str) -> None:
        self.port = port
        self.interface = interface
        self.description = interface
        try:
            self._socket = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        except PermissionError as exc:
            raise PortIOError(
                f"port {port}: opening a raw socket on {interface} needs root (CAP_NET_RAW)"
            ) from exc
        try:
            self._socket.bind((interface, 0))
        except OSError as exc:
            self._socket.close()
            raise PortIOError(
                f"port {port}: cannot bind to interface {interface!r}: {exc.strerror}"
            ) from exc
        try:
            self._socket.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        except OSError as exc:
            self._socket.close()
            raise PortIOError(
                f"port {port}: kernel lacks PACKET_IGNORE_OUTGOING (needs Linux >= 4.20): {exc.strerror}"
            ) from exc
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER_BYTES)
        self._socket.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        self._socket.setblocking(False)

    def fileno(self) -> int:
        return self._socket.fileno()

    def send(self, frame: bytes) -> None:
        try:
            self._socket.send(frame)
        except OSError as exc:
            if exc.errno in (errno.ENETDOWN, errno.ENXIO, errno.EAGAIN, errno.ENOBUFS):
                return  # interface down or congested: the frame is lost, as on a wire
            raise PortIOError(f"port {self.port} ({self.interface}): {exc.strerror}") from exc

    def receive(self) -> bytes | None:
        try:
            frame, ancillary, _flags, _address = self._socket.recvmsg(MAX_FRAME, _AUX_SPACE)
        except BlockingIOError:
            return None
        except OSError as exc:
            if exc.errno in (errno.ENETDOWN, errno.ENXIO):
                return None
            raise PortIOError(f"port {self.port} ({self.interface}): {exc.strerror}") from exc
        return restore_vlan_tag(frame, ancillary) if ancillary else frame

    def close(self) -> None:
        self._socket.close()


@dataclass(frozen=True)
class InterfaceSpec:
    """A parsed ``-i PORT@IFACE`` argument."""

    port: int
    interface: str | None = None  # Linux interface name (AF_PACKET)
    udp_local: tuple[str, int] | None = None
    udp_peer: tuple[str, int] | None = None

    def open(self) -> PortDriver:
        if self.interface is not None:
            return AfPacketPort(self.port, self.interface)
        assert self.udp_local is not None and self.udp_peer is not None
        return UdpLinkPort(self.port, self.udp_local, self.udp_peer)


_UDP_SPEC = re.compile(
    r"^udp:(?:(?P<lhost>[\d.]+):)?(?P<lport>\d+)(?:/|->)(?:(?P<phost>[\d.]+):)?(?P<pport>\d+)$"
)
_IFNAME = re.compile(r"^[^\s/:]{1,15}$")
MAX_PORT = 511  # ports are bit<9>


def parse_interface_spec(spec: str) -> InterfaceSpec:
    """Parses ``PORT@IFACE`` (Linux interface) or ``PORT@udp:[HOST:]LPORT/[HOST:]PPORT``.

    ``PORT@udp:40001/40002`` binds 127.0.0.1:40001 and sends to 127.0.0.1:40002 (``->`` is
    accepted in place of ``/`` where no shell is involved).
    """
    port_text, at, target = spec.partition("@")
    if not at or not port_text or not target:
        raise PortSpecError(f"bad interface {spec!r}: expected PORT@IFACE or PORT@udp:LPORT/PPORT")
    try:
        port = int(port_text, 0)
    except ValueError:
        raise PortSpecError(f"bad interface {spec!r}: port {port_text!r} is not a number") from None
    if not 0 <= port < MAX_PORT:
        raise PortSpecError(f"bad interface {spec!r}: port {port} is outside 0..{MAX_PORT - 1}")
    if target.startswith("udp:"):
        match = _UDP_SPEC.match(target)
        if not match:
            raise PortSpecError(
                f"bad interface {spec!r}: expected udp:[HOST:]LOCALPORT/[HOST:]PEERPORT"
            )
        lport, pport = int(match["lport"]), int(match["pport"])
        for value in (lport, pport):
            if not 0 <= value <= 65535:
                raise PortSpecError(f"bad interface {spec!r}: UDP port {value} out of range")
        return InterfaceSpec(
            port,
            udp_local=(match["lhost"] or "127.0.0.1", lport),
            udp_peer=(match["phost"] or "127.0.0.1", pport),
        )
    if not _IFNAME.match(target):
        raise PortSpecError(f"bad interface {spec!r}: {target!r} is not a valid interface name")
    return InterfaceSpec(port, interface=target)
