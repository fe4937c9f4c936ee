"""Generators for standard fabric shapes.

They build the same document a YAML file would hold and run it through the loader's
validation, so a bad argument gets the same key-path error as a bad file
(``two_tier(): t1_per_plane: must be a positive integer, got -2``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from topologies.loader import from_mapping
from topologies.model import (
    DEFAULT_DELAY_US,
    DEFAULT_FIRST_PORT,
    DEFAULT_PORT_BITS,
    DEFAULT_QUEUE_PACKETS,
    DEFAULT_RADIX,
    DEFAULT_RATE_GBPS,
    Topology,
)

# The paper's fabric (sources §1.2): 8 planes of 512-port switches,
# 256 NIC downlinks + 256 uplinks per T0, 512 T0s per T1 -> 131,072 NICs.
PAPER_PLANES = 8
PAPER_T0_PER_PLANE = 512
PAPER_T1_PER_PLANE = 256
PAPER_NICS_PER_T0 = 256


def two_tier(
    planes: int,
    t0_per_plane: int,
    t1_per_plane: int,
    nics_per_t0: int,
    *,
    name: str | None = None,
    rate_gbps: float = DEFAULT_RATE_GBPS,
    delay_us: float = DEFAULT_DELAY_US,
    queue_packets: int = DEFAULT_QUEUE_PACKETS,
    radix: int = DEFAULT_RADIX,
    port_bits: int = DEFAULT_PORT_BITS,
    first_port: int = DEFAULT_FIRST_PORT,
    cpu_port: int | None = None,
    usid_block: str | None = None,
    nic_prefix: str | None = None,
    links: Sequence[Mapping[str, Any]] = (),
) -> Topology:
    """A multi-plane two-tier fabric; ``links`` are per-link overrides as in YAML."""
    shape = f"{planes}x{t0_per_plane}x{t1_per_plane}x{nics_per_t0}"
    doc: dict[str, Any] = {
        "name": name if name is not None else f"two-tier-{shape}",
        "planes": planes,
        "t0_per_plane": t0_per_plane,
        "t1_per_plane": t1_per_plane,
        "nics_per_t0": nics_per_t0,
        "link_defaults": {
            "rate_gbps": rate_gbps,
            "delay_us": delay_us,
            "queue_packets": queue_packets,
        },
        "switches": {"radix": radix, "port_bits": port_bits, "first_port": first_port},
        "addressing": {},
    }
    if cpu_port is not None:
        doc["switches"]["cpu_port"] = cpu_port
    if usid_block is not None:
        doc["addressing"]["usid_block"] = usid_block
    if nic_prefix is not None:
        doc["addressing"]["nic_prefix"] = nic_prefix
    if links:
        doc["links"] = [dict(link) for link in links]
    return from_mapping(doc, source="two_tier()")


def paper_scale(planes: int = PAPER_PLANES) -> Topology:
    """The paper's full fabric: 512 T0 + 256 T1 per plane, 256 NICs per T0 (131,072 NICs).

    A T0 then has 512 data ports (1..512), which do not fit v1model's 9-bit port numbers
    next to the CPU and drop ports, so this fabric uses 10-bit ports (CPU 1022, drop 1023).
    It exists to size the model and the route plan; it is not meant to run on BMv2.
    """
    return two_tier(
        planes,
        PAPER_T0_PER_PLANE,
        PAPER_T1_PER_PLANE,
        PAPER_NICS_PER_T0,
        name="paper-scale",
        radix=512,
        port_bits=10,
    )
