"""Port I/O for p4emu: how frames get on and off a switch's ports.

Drivers are deliberately thin: each one moves whole Ethernet frames between a switch
port and something outside (a Linux interface, a loopback-UDP peer). The switch decides
what to do with them; a :class:`Reactor` thread waits on all drivers at once.
"""

from __future__ import annotations

from p4emu.io.drivers import (
    AfPacketPort,
    PortDriver,
    UdpLinkPort,
    parse_interface_spec,
)
from p4emu.io.exceptions import PortIOError, PortSpecError
from p4emu.io.pcap import PcapWriter, read_pcap
from p4emu.io.reactor import Reactor

__all__ = [
    "AfPacketPort",
    "PcapWriter",
    "PortDriver",
    "PortIOError",
    "PortSpecError",
    "Reactor",
    "UdpLinkPort",
    "parse_interface_spec",
    "read_pcap",
]
