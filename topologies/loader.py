"""YAML topology files -> Topology, with errors that name the offending key path.

The format is documented in docs/topology-format.md. The only I/O in the package is
reading YAML files, in :mod:`topologies.yamlfile` (shared with the scenario files).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from ipaddress import AddressValueError, IPv6Network, NetmaskValueError
from pathlib import Path
from typing import Any

from topologies import yamlfile
from topologies.addressing import BLOCK_BITS, NIC_PREFIX_BITS, usid_space_violation
from topologies.exceptions import TopologyFileError, TopologySpecError
from topologies.model import (
    DEFAULT_FIRST_PORT,
    DEFAULT_NIC_PREFIX,
    DEFAULT_PORT_BITS,
    DEFAULT_RADIX,
    DEFAULT_USID_BLOCK,
    AddressingSettings,
    LinkOverride,
    LinkParams,
    Plane,
    SwitchSettings,
    Topology,
)
from topologies.yamlfile import show

TOP_LEVEL_KEYS = (
    "name",
    "description",
    "planes",
    "t0_per_plane",
    "t1_per_plane",
    "nics_per_t0",
    "link_defaults",
    "switches",
    "addressing",
    "links",
)
PLANE_KEYS = ("t1_per_plane", "link_defaults")
LINK_PARAM_KEYS = ("rate_gbps", "delay_us", "queue_packets")
SWITCH_KEYS = ("radix", "port_bits", "first_port", "cpu_port")
ADDRESSING_KEYS = ("usid_block", "nic_prefix")
LINK_KEYS = ("between", *LINK_PARAM_KEYS, "uplink_index")
MAX_PORT_BITS = 32
BUNDLE_PACKAGE = "topologies"


# ------------------------------------------------------------------ entry points


def bundled_names() -> list[str]:
    """Names of the topology files shipped inside the package (``load`` accepts them)."""
    return yamlfile.bundled_names(BUNDLE_PACKAGE)


def load(name_or_path: str | os.PathLike[str]) -> Topology:
    """Load a topology from a YAML file path, or a bundled name (``tiny``, ``small``,
    ``paper-8plane``, with or without ``.yaml``). An existing file wins over a bundled name."""
    found = yamlfile.locate(name_or_path, BUNDLE_PACKAGE, "topology", TopologyFileError)
    return loads(found.text, source=found.source, default_name=found.default_name)


def loads(text: str, source: str = "<string>", default_name: str | None = None) -> Topology:
    """Parse YAML text into a Topology; ``source`` prefixes every error message."""
    data = yamlfile.parse(text, source, file_error=TopologyFileError, spec_error=TopologySpecError)
    if default_name is None:
        default_name = Path(source).stem if source.endswith((".yaml", ".yml")) else "topology"
    return from_mapping(data, source=source, default_name=default_name)


def from_mapping(data: Any, source: str = "<mapping>", default_name: str = "topology") -> Topology:
    """Validate a parsed YAML document (or an equivalent dict) and build the Topology."""
    return _Reader(source).topology(data, default_name)


def to_mapping(topology: Topology) -> dict[str, Any]:
    """The YAML document (as plain data) that loads back to ``topology``."""
    defaults = topology.planes[0].link_defaults
    t1_counts = {p.t1_count for p in topology.planes}
    uniform = len(t1_counts) == 1 and all(p.link_defaults == defaults for p in topology.planes)
    data: dict[str, Any] = {"name": topology.name}
    if topology.description:
        data["description"] = topology.description
    if uniform:
        data["planes"] = topology.plane_count
        data["t1_per_plane"] = topology.planes[0].t1_count
    else:
        data["planes"] = [
            {"t1_per_plane": p.t1_count, "link_defaults": _params_mapping(p.link_defaults)}
            for p in topology.planes
        ]
    data["t0_per_plane"] = topology.t0_per_plane
    data["nics_per_t0"] = topology.nics_per_t0
    if uniform:
        data["link_defaults"] = _params_mapping(defaults)
    settings = topology.switch_settings
    data["switches"] = {
        "radix": settings.radix,
        "port_bits": settings.port_bits,
        "first_port": settings.first_port,
        "cpu_port": settings.cpu_port,
    }
    data["addressing"] = {
        "usid_block": str(topology.addressing.usid_block),
        "nic_prefix": str(topology.addressing.nic_prefix),
    }
    if topology.overrides:
        data["links"] = [
            {"between": list(o.between)}
            | {
                key: getattr(o, key)
                for key in (*LINK_PARAM_KEYS, "uplink_index")
                if getattr(o, key) is not None
            }
            for o in topology.overrides
        ]
    return data


def _params_mapping(params: LinkParams) -> dict[str, Any]:
    return {
        "rate_gbps": params.rate_gbps,
        "delay_us": params.delay_us,
        "queue_packets": params.queue_packets,
    }


# ------------------------------------------------------------------ validation


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, key_path: str, reason: str) -> TopologySpecError:
        return TopologySpecError(self.source, key_path, reason)

    # -- primitives

    def mapping(self, value: Any, path: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(path or "(top level)", f"must be a mapping, got {show(value)}")
        for key in value:
            if key not in allowed:
                import difflib  # (here: only a bad key needs it)

                hint = difflib.get_close_matches(str(key), allowed, n=1)
                suggestion = f"did you mean {hint[0]!r}? " if hint else ""
                raise self.error(
                    _join(path, str(key)),
                    f"unknown key ({suggestion}allowed here: {', '.join(allowed)})",
                )
        return value

    def integer(self, value: Any, path: str, minimum: int, maximum: int | None = None) -> int:
        wanted = {0: "a non-negative integer", 1: "a positive integer"}.get(
            minimum, f"an integer >= {minimum}"
        )
        if maximum is not None:
            wanted = f"an integer in {minimum}..{maximum}"
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(path, f"must be {wanted}, got {show(value)}")
        if value < minimum or (maximum is not None and value > maximum):
            raise self.error(path, f"must be {wanted}, got {value}")
        return value

    def number(self, value: Any, path: str, *, positive: bool) -> float:
        wanted = "a positive number" if positive else "a non-negative number"
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(path, f"must be {wanted}, got {show(value)}")
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            raise self.error(path, f"must be {wanted}, got {value}")
        return float(value)

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(path, f"must be a non-empty string, got {show(value)}")
        return value

    def prefix(self, value: Any, path: str, bits: int, example: str) -> IPv6Network:
        if not isinstance(value, str):
            raise self.error(
                path, f"must be an IPv6 /{bits} prefix like '{example}', got {show(value)}"
            )
        try:
            network = IPv6Network(value)
        except (AddressValueError, NetmaskValueError, ValueError) as exc:
            raise self.error(path, f"{value!r} is not an IPv6 prefix: {exc}") from None
        if network.prefixlen != bits:
            raise self.error(path, f"must be a /{bits} prefix like '{example}', got {value!r}")
        return network

    def link_params(self, value: Any, path: str, base: LinkParams) -> LinkParams:
        data = self.mapping(value, path, LINK_PARAM_KEYS)
        rate, delay, queue = self.param_values(data, path)
        return base.merged(rate, delay, queue)

    def param_values(
        self, data: Mapping[str, Any], path: str
    ) -> tuple[float | None, float | None, int | None]:
        rate = delay = queue = None
        if "rate_gbps" in data:
            rate = self.number(data["rate_gbps"], _join(path, "rate_gbps"), positive=True)
        if "delay_us" in data:
            delay = self.number(data["delay_us"], _join(path, "delay_us"), positive=False)
        if "queue_packets" in data:
            queue = self.integer(data["queue_packets"], _join(path, "queue_packets"), 1)
        return rate, delay, queue

    # -- document

    def topology(self, data: Any, default_name: str) -> Topology:
        if data is None:
            raise self.error("(top level)", "the document is empty; expected a mapping")
        doc = self.mapping(data, "", TOP_LEVEL_KEYS)
        for required in ("planes", "t0_per_plane", "nics_per_t0"):
            if required not in doc:
                raise self.error(required, "missing (required)")
        name = self.string(doc["name"], "name") if "name" in doc else default_name
        description = self.string(doc["description"], "description") if "description" in doc else ""
        t0_per_plane = self.integer(doc["t0_per_plane"], "t0_per_plane", 1)
        nics_per_t0 = self.integer(doc["nics_per_t0"], "nics_per_t0", 1)
        global_t1 = None
        if "t1_per_plane" in doc:
            global_t1 = self.integer(doc["t1_per_plane"], "t1_per_plane", 1)
        defaults = self.link_params(doc.get("link_defaults"), "link_defaults", LinkParams())
        planes, t1_paths = self.planes(doc["planes"], global_t1, t0_per_plane, defaults)
        violation = usid_space_violation(
            len(planes), t0_per_plane, [p.t1_count for p in planes], nics_per_t0
        )
        if violation is not None:
            field, plane, reason = violation
            raise self.error(t1_paths[plane] if plane is not None else field, reason)
        return Topology(
            name=name,
            planes=tuple(planes),
            t0_per_plane=t0_per_plane,
            nics_per_t0=nics_per_t0,
            switch_settings=self.switches(doc.get("switches")),
            addressing=self.addressing(doc.get("addressing")),
            overrides=self.overrides(doc.get("links")),
            source=self.source,
            description=description,
        )

    def planes(
        self, value: Any, global_t1: int | None, t0_per_plane: int, defaults: LinkParams
    ) -> tuple[list[Plane], list[str]]:
        """The planes, and for each the key path its T1 count came from."""
        if isinstance(value, list):
            if not value:
                raise self.error("planes", "a fabric needs at least one plane, got an empty list")
            planes, t1_paths = [], []
            for i, entry in enumerate(value):
                path = f"planes[{i}]"
                data = self.mapping(entry, path, PLANE_KEYS)
                if "t1_per_plane" in data:
                    t1 = self.integer(data["t1_per_plane"], f"{path}.t1_per_plane", 1)
                    t1_paths.append(f"{path}.t1_per_plane")
                elif global_t1 is not None:
                    t1 = global_t1
                    t1_paths.append("t1_per_plane")
                else:
                    raise self.error(
                        f"{path}.t1_per_plane",
                        "missing: give it here or as a top-level t1_per_plane",
                    )
                params = self.link_params(
                    data.get("link_defaults"), f"{path}.link_defaults", defaults
                )
                planes.append(Plane(i, t0_per_plane, t1, params))
            return planes, t1_paths
        count = self.integer(value, "planes", 1)
        if global_t1 is None:
            raise self.error("t1_per_plane", "missing (required when planes is a count)")
        planes = [Plane(i, t0_per_plane, global_t1, defaults) for i in range(count)]
        return planes, ["t1_per_plane"] * count

    def switches(self, value: Any) -> SwitchSettings:
        data = self.mapping(value, "switches", SWITCH_KEYS)
        radix = self.integer(data.get("radix", DEFAULT_RADIX), "switches.radix", 1)
        port_bits = self.integer(
            data.get("port_bits", DEFAULT_PORT_BITS), "switches.port_bits", 2, MAX_PORT_BITS
        )
        first_port = self.integer(
            data.get("first_port", DEFAULT_FIRST_PORT), "switches.first_port", 0
        )
        cpu_port = None
        if "cpu_port" in data:
            cpu_port = self.integer(data["cpu_port"], "switches.cpu_port", 0)
        return SwitchSettings(radix, port_bits, first_port, cpu_port)

    def addressing(self, value: Any) -> AddressingSettings:
        data = self.mapping(value, "addressing", ADDRESSING_KEYS)
        block = DEFAULT_USID_BLOCK
        if "usid_block" in data:
            block = self.prefix(data["usid_block"], "addressing.usid_block", BLOCK_BITS, str(block))
        nic_prefix = DEFAULT_NIC_PREFIX
        if "nic_prefix" in data:
            nic_prefix = self.prefix(
                data["nic_prefix"], "addressing.nic_prefix", NIC_PREFIX_BITS, str(nic_prefix)
            )
        if block.overlaps(nic_prefix):
            raise self.error(
                "addressing.nic_prefix",
                f"{nic_prefix} overlaps the uSID block {block}; NIC (inner) addresses and "
                "uSID carriers (outer) must be distinguishable",
            )
        return AddressingSettings(block, nic_prefix)

    def overrides(self, value: Any) -> tuple[LinkOverride, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.error("links", f"must be a list of link overrides, got {show(value)}")
        overrides = []
        for i, entry in enumerate(value):
            path = f"links[{i}]"
            data = self.mapping(entry, path, LINK_KEYS)
            if "between" not in data:
                raise self.error(f"{path}.between", "missing: name the link's two endpoints")
            between = data["between"]
            if (
                not isinstance(between, list)
                or len(between) != 2
                or not all(isinstance(name, str) for name in between)
            ):
                raise self.error(
                    f"{path}.between",
                    f"must be a list of two node names like [p0-t0-0, p0-t1-1], got {show(between)}",
                )
            rate, delay, queue = self.param_values(data, path)
            uplink = None
            if "uplink_index" in data:
                uplink = self.integer(data["uplink_index"], f"{path}.uplink_index", 0)
            overrides.append(LinkOverride((between[0], between[1]), rate, delay, queue, uplink))
        return tuple(overrides)
