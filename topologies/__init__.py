"""Topology model, YAML loader, generators and the address plan of an MRC fabric.

The single source of truth for the fabric shape and every address derived from it.
Format: docs/topology-format.md. Address plan: docs/addressing.md.
"""

from __future__ import annotations

from topologies.addressing import (
    END_OF_CARRIER,
    AddressPlan,
    CarrierInfo,
    EvFields,
    Path,
    RouteKind,
    UsidInfo,
    UsidRoute,
    decode_ev,
    decode_usid,
    encode_ev,
    join_ev,
    mac_bytes,
    split_ev,
)
from topologies.exceptions import (
    AddressingError,
    TopologyError,
    TopologyFileError,
    TopologySpecError,
    UnknownNameError,
    UsidSpaceError,
)
from topologies.generators import paper_scale, two_tier
from topologies.loader import bundled_names, from_mapping, load, loads, to_mapping
from topologies.model import (
    AddressingSettings,
    Endpoint,
    Link,
    LinkKind,
    LinkOverride,
    LinkParams,
    Nic,
    NicPort,
    Plane,
    Role,
    SwitchSettings,
    Topology,
    TopologySwitch,
    nic_name,
    switch_name,
)

__all__ = [
    "END_OF_CARRIER",
    "AddressPlan",
    "AddressingError",
    "AddressingSettings",
    "CarrierInfo",
    "Endpoint",
    "EvFields",
    "Link",
    "LinkKind",
    "LinkOverride",
    "LinkParams",
    "Nic",
    "NicPort",
    "Path",
    "Plane",
    "Role",
    "RouteKind",
    "SwitchSettings",
    "Topology",
    "TopologyError",
    "TopologyFileError",
    "TopologySpecError",
    "TopologySwitch",
    "UnknownNameError",
    "UsidInfo",
    "UsidRoute",
    "UsidSpaceError",
    "bundled_names",
    "decode_ev",
    "decode_usid",
    "encode_ev",
    "from_mapping",
    "join_ev",
    "load",
    "loads",
    "mac_bytes",
    "nic_name",
    "paper_scale",
    "split_ev",
    "switch_name",
    "to_mapping",
    "two_tier",
]
