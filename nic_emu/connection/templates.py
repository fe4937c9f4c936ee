"""Per-plane frame templates of one connection: built once with the addresses of both
ends, then mutated and encoded per packet (the send paths fill in the per-packet fields)."""

from __future__ import annotations

from typing import Any, Protocol

from mrc_wire import EV_PROBE_QPN, DataPacket, Nack, Probe, Sack
from nic_emu.connection.common import NACK_TRIMMED, PLACEHOLDER_ADDR


class TemplateHost(Protocol):
    """The NIC's per-plane addresses the templates carry."""

    addrs: list[bytes]
    macs: list[bytes]
    gateway_macs: list[bytes]


def _common(host: TemplateHost, plane: int, peer_addr: bytes, dqpn: int) -> dict[str, Any]:
    return {
        "dst_mac": host.gateway_macs[plane],
        "src_mac": host.macs[plane],
        "outer_src": host.addrs[plane],
        "outer_dst": PLACEHOLDER_ADDR,
        "inner_src": host.addrs[plane],
        "inner_dst": peer_addr,
        "ev": 0,
        "dqpn": dqpn,
    }


def data_templates(host: TemplateHost, peer_addrs: list[bytes], peer_qpn: int) -> list[DataPacket]:
    return [
        DataPacket(**_common(host, p, a, peer_qpn), psn=0, va=0, rkey=0, dma_length=0)
        for p, a in enumerate(peer_addrs)
    ]


def sack_templates(host: TemplateHost, peer_addrs: list[bytes], peer_qpn: int) -> list[Sack]:
    return [
        Sack(**_common(host, p, a, peer_qpn), cum_psn=0, echoed_ev=0)
        for p, a in enumerate(peer_addrs)
    ]


def nack_templates(host: TemplateHost, peer_addrs: list[bytes], peer_qpn: int) -> list[Nack]:
    return [
        Nack(
            **_common(host, p, a, peer_qpn),
            cum_psn=0,
            nack_psn=0,
            reason=NACK_TRIMMED,
            echoed_ev=0,
        )
        for p, a in enumerate(peer_addrs)
    ]


def probe_templates(host: TemplateHost, peer_addrs: list[bytes]) -> list[Probe]:
    """Probes to the EV-probe QPN (a tail-loss probe sets the peer's QPN per packet)."""
    return [Probe(**_common(host, p, a, EV_PROBE_QPN)) for p, a in enumerate(peer_addrs)]
