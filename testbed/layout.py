"""Pure functions that place a topology on this machine: UDP port numbers of every link
(local mode), gRPC addresses of every switch, Linux interface names (Mininet mode), and the
per-port switch options that emulate each link's rate and delay. Nothing here does I/O, so the same topology
and base ports always give the same numbers (docs/testbed.md, "Port numbers").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from controller.endpoints import DEFAULT_BASE_PORT as DEFAULT_GRPC_BASE_PORT
from controller.endpoints import P4RuntimeTarget, default_endpoints
from controller.exceptions import EndpointError
from testbed.exceptions import PortPlanError
from topologies import Link, LinkParams, Topology

__all__ = [
    "DEFAULT_GRPC_BASE_PORT",
    "DEFAULT_UDP_BASE_PORT",
    "LOOPBACK",
    "NOMINAL_FRAME_BYTES",
    "UdpEnd",
    "dilated_topology",
    "grpc_endpoints",
    "link_delay_args",
    "link_interface_names",
    "link_rate_pps",
    "nic_interface",
    "port_delays_us",
    "port_queue_rate_args",
    "port_rates_pps",
    "sender_path_delays_us",
    "switch_interface",
    "udp_link_ports",
]

LOOPBACK = "127.0.0.1"
# Below Linux's default ephemeral range (32768..60999), so an outgoing connection's
# source port never takes a link's port: 20000 + 2 x 6383 links still ends below 32768.
DEFAULT_UDP_BASE_PORT = 20000
MAX_PORT = 65535
MIN_BASE_PORT = 1024  # never ask for a privileged port
# One full data packet on the wire: 4096 B RDMA payload (nic_emu's default MTU payload) +
# Ethernet 14 + outer IPv6 40 + inner IPv6 40 + UDP 8 + BTH 12 + RETH 16 = 4226 bytes.
NOMINAL_FRAME_BYTES = 4096 + 14 + 40 + 40 + 8 + 12 + 16
IFNAMSIZ = 15  # Linux interface names are at most 15 characters


@dataclass(frozen=True, slots=True)
class UdpEnd:
    """One end of a loopback-UDP link: ``node``'s ``port`` (switch port, or the plane for
    a NIC) binds ``local`` and sends to ``peer`` (both on 127.0.0.1)."""

    node: str
    port: int
    local: int
    peer: int

    def switch_arg(self) -> str:
        """p4emu-switch's ``-i PORT@udp:LOCAL->PEER``."""
        return f"{self.port}@{self.switch_port()}"

    def switch_port(self) -> str:
        """What follows ``PORT@`` in p4emu-switch's ``-i``: ``udp:LOCAL->PEER``."""
        return f"udp:{self.local}->{self.peer}"

    def nic_port_config(self, delay_us: float = 0.0) -> dict[str, str | float]:
        """The port entry of a nic-emu config (docs/nic-emu-process.md); the NIC delays
        the frames it sends on this link by ``delay_us``."""
        return {
            "driver": "udp",
            "local": f"{LOOPBACK}:{self.local}",
            "peer": f"{LOOPBACK}:{self.peer}",
            "delay_us": delay_us,
        }


def udp_link_ports(
    topology: Topology, base_port: int = DEFAULT_UDP_BASE_PORT
) -> dict[tuple[str, int], UdpEnd]:
    """Every link end's UDP ports, keyed by ``(node, port)``.

    Link ``i`` in ``topology.links()`` order (per plane, per T0: its NIC links, then its T1
    links) uses ``base_port + 2i`` on its lower end (NIC or T0) and ``base_port + 2i + 1``
    on its upper end (T0 or T1)."""
    count = topology.link_count
    last = base_port + 2 * count - 1
    if base_port < MIN_BASE_PORT or last > MAX_PORT:
        raise PortPlanError(
            f"{topology.name}: {count} links need UDP ports {base_port}..{last}, which must lie "
            f"within {MIN_BASE_PORT}..{MAX_PORT}; choose another --base-port"
        )
    ends: dict[tuple[str, int], UdpEnd] = {}
    for i, link in enumerate(topology.links()):
        lower, upper = base_port + 2 * i, base_port + 2 * i + 1
        ends[(link.a.node, link.a.port)] = UdpEnd(link.a.node, link.a.port, lower, upper)
        ends[(link.b.node, link.b.port)] = UdpEnd(link.b.node, link.b.port, upper, lower)
    return ends


def port_delays_us(topology: Topology, node: str) -> dict[int, float]:
    """The one-way delay (us) of the link on each port of ``node`` (a switch port, or a
    NIC's plane), per-link overrides included: what that end adds to the frames it sends."""
    return {link.endpoint(node).port: link.delay_us for link in topology.links_of(node)}


def sender_path_delays_us(topology: Topology, nic: str) -> dict[int, float]:
    """Per plane of ``nic``: the one-way delay of a path through a T1 (its access link, the
    largest of its T0's uplinks, down again, and an access link like its own), added all
    at once by the sending NIC. For switches that cannot delay what they send (BMv2: no
    delay option, and no tc netem on this kernel) this keeps each path's round trip whole;
    a path that turns at its T0 (both NICs under one T0) is then too long by twice the
    uplink delay (docs/testbed.md, "Time dilation")."""
    out: dict[int, float] = {}
    for link in topology.links_of(nic):
        t0 = link.other(nic).node
        uplinks = [up.delay_us for up in topology.links_of(t0) if up.a.node == t0]
        out[link.endpoint(nic).port] = 2 * link.delay_us + 2 * max(uplinks, default=0.0)
    return out


def link_delay_args(topology: Topology, switch: str) -> list[str]:
    """p4emu-switch's ``--link-delay-us PORT=US`` for each port of ``switch`` whose link
    has a delay (ports without one are left out: no delay is p4emu-switch's default)."""
    args: list[str] = []
    for port, delay in sorted(port_delays_us(topology, switch).items()):
        if delay > 0:
            args += ["--link-delay-us", f"{port}={delay!r}"]
    return args


def dilated_topology(topology: Topology, tdf: int) -> Topology:
    """``topology`` run ``tdf`` times slower (docs/testbed.md, "Time dilation"): every
    link's rate (per-link overrides included) divided by ``tdf``, every delay multiplied;
    queue depths stay in packets. So every mode's rate and delay emulation (tc htb,
    p4emu-switch's queue rates and link delays, the NICs' delay lines) follows from it."""
    if tdf == 1:
        return topology

    def params(p: LinkParams) -> LinkParams:
        return LinkParams(p.rate_gbps / tdf, p.delay_us * tdf, p.queue_packets)

    return replace(
        topology,
        planes=tuple(
            replace(plane, link_defaults=params(plane.link_defaults)) for plane in topology.planes
        ),
        overrides=tuple(
            replace(
                o,
                rate_gbps=None if o.rate_gbps is None else o.rate_gbps / tdf,
                delay_us=None if o.delay_us is None else o.delay_us * tdf,
            )
            for o in topology.overrides
        ),
    )


def grpc_endpoints(
    topology: Topology, base_port: int = DEFAULT_GRPC_BASE_PORT
) -> dict[str, P4RuntimeTarget]:
    """Switch ``i`` (topology order) serves P4Runtime at ``127.0.0.1:base_port + i``: the
    controller's own convention (controller.endpoints), so ``mrc-controller`` finds them."""
    if base_port < MIN_BASE_PORT:
        raise PortPlanError(f"gRPC base port {base_port} is below {MIN_BASE_PORT}")
    try:
        return default_endpoints(topology, LOOPBACK, base_port)
    except EndpointError as exc:
        raise PortPlanError(str(exc)) from None


def grpc_port(endpoint: P4RuntimeTarget) -> int:
    return int(endpoint.address.rpartition(":")[2])


def link_rate_pps(rate_gbps: float, rate_scale: float = 1.0) -> float:
    """Packets per second that stand for a link of ``rate_gbps`` (x ``rate_scale``), counted
    in full data frames of :data:`NOMINAL_FRAME_BYTES`: the one Gb/s -> packets/s conversion."""
    return rate_gbps * rate_scale * 1e9 / (8 * NOMINAL_FRAME_BYTES)


def port_rates_pps(topology: Topology, switch: str, rate_scale: float = 1.0) -> dict[int, float]:
    """The drain rate (packets/s, :func:`link_rate_pps`) of each port of ``switch``: its own
    link's rate, per-link overrides included."""
    return {
        link.endpoint(switch).port: link_rate_pps(link.rate_gbps, rate_scale)
        for link in topology.links_of(switch)
    }


def port_queue_rate_args(topology: Topology, switch: str, rate_scale: float = 1.0) -> list[str]:
    """p4emu-switch's ``--port-queue-rate PORT=PPS`` for every port of ``switch`` (each port
    has a link). The exact float is written, so a tiny rate never rounds to a refused 0."""
    args: list[str] = []
    for port, pps in sorted(port_rates_pps(topology, switch, rate_scale).items()):
        args += ["--port-queue-rate", f"{port}={pps!r}"]
    return args


def switch_interface(switch: str, port: int) -> str:
    """Mininet interface of a switch port: ``<switch>-eth<port>`` (Mininet's convention)."""
    return _checked(f"{switch}-eth{port}")


def nic_interface(nic: str, plane: int) -> str:
    """Interface of a NIC's port on ``plane`` inside its host: ``<nic>-p<plane>``."""
    return _checked(f"{nic}-p{plane}")


def link_interface_names(topology: Topology, link: Link) -> tuple[str, str]:
    """(lower end, upper end) interface names of a link."""
    lower = (
        nic_interface(link.a.node, link.a.port)
        if link.a.node.startswith("nic")
        else switch_interface(link.a.node, link.a.port)
    )
    return lower, switch_interface(link.b.node, link.b.port)


def _checked(name: str) -> str:
    if len(name) > IFNAMSIZ:
        raise PortPlanError(
            f"interface name {name!r} is longer than Linux's {IFNAMSIZ} characters; "
            "this fabric is too large for Mininet mode"
        )
    return name
