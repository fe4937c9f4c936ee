"""nic_emu.connection.host: the protocols a connection's parts ask of their NIC, and
the NIC core that implements them."""

from __future__ import annotations

import typing

from nic_emu.connection.ev_layout import RouteHost
from nic_emu.connection.feedback import FeedbackHost
from nic_emu.connection.host import ConnectionHost
from nic_emu.connection.probes import ProbeHost
from nic_emu.connection.receive import ReceiveHost
from nic_emu.connection.repath import RepathHost
from nic_emu.connection.reverse import ReverseHost
from nic_emu.connection.templates import TemplateHost
from nic_emu.connection.timers import DeadlineHost
from nic_emu.connection.transmit import TransmitHost
from nic_emu.core import NicCore
from topologies import AddressPlan, load

PARTS = (
    RouteHost,
    ReceiveHost,
    ReverseHost,
    TemplateHost,
    ProbeHost,
    TransmitHost,
    FeedbackHost,
    DeadlineHost,
    RepathHost,
)


def _members(protocol: type) -> set[str]:
    names: set[str] = set()
    for cls in protocol.__mro__:
        if cls is object or cls is typing.Protocol or cls is typing.Generic:
            continue
        names |= set(getattr(cls, "__annotations__", {}))
        names |= {n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")}
    return names


def test_the_core_implements_every_member_of_every_host_protocol() -> None:
    core = NicCore("nic0", AddressPlan(load("tiny")))
    for protocol in (ConnectionHost, *PARTS):
        missing = sorted(n for n in _members(protocol) if not hasattr(core, n))
        assert not missing, f"{protocol.__name__}: NicCore lacks {missing}"


def test_the_connection_host_is_the_union_of_the_parts_and_has_no_outbox() -> None:
    members = _members(ConnectionHost)
    for part in PARTS:
        assert _members(part) <= members, part.__name__
    assert "out" not in members  # frames go to the caller's outbox, never the host's
