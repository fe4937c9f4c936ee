"""Where each switch's P4Runtime server listens.

The topology names switches but not their addresses. Two ways to give them:

- **Convention** (default, what ``mrc-testbed`` uses to start ``p4emu-switch`` processes):
  switch number ``i`` in topology order (plane by plane, T0s then T1s) listens on
  ``127.0.0.1:(9559 + i)`` with device id 0. 9559 is P4Runtime's usual port, so a
  one-switch setup needs no options. ``--grpc-host`` / ``--grpc-base-port`` change it.
- **An endpoints file** (YAML), e.g. for docker compose where each switch is a container::

      p0-t0-0: p0-t0-0:9559                       # HOST:PORT, device id 0
      p0-t1-0: {address: 10.0.0.7:9559, device_id: 1}
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from controller.exceptions import EndpointError
from topologies import Topology

DEFAULT_HOST = "127.0.0.1"
DEFAULT_BASE_PORT = 9559
MAX_TCP_PORT = 65535


@dataclass(frozen=True, slots=True)
class P4RuntimeTarget:
    """Where a switch's P4Runtime server listens: ``HOST:PORT`` and the device id."""

    address: str  # HOST:PORT ([v6]:PORT for an IPv6 literal)
    device_id: int = 0

    def __str__(self) -> str:
        return self.address if self.device_id == 0 else f"{self.address} (device {self.device_id})"


def check_address(text: str, where: str) -> str:
    """``HOST:PORT`` with a port in 1..65535; returns it unchanged."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) <= MAX_TCP_PORT:
        raise EndpointError(f"{where}: {text!r} is not HOST:PORT (e.g. 127.0.0.1:9559)")
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host.strip("[]"))
        except ValueError:
            raise EndpointError(f"{where}: {host!r} is not an IPv6 address") from None
    return text


def format_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def default_endpoints(
    topology: Topology, host: str = DEFAULT_HOST, base_port: int = DEFAULT_BASE_PORT
) -> dict[str, P4RuntimeTarget]:
    """The convention: switch ``i`` (topology order) at ``host:base_port + i``, device 0."""
    last = base_port + topology.switch_count - 1
    if not base_port > 0 or last > MAX_TCP_PORT:
        raise EndpointError(
            f"{topology.name}: {topology.switch_count} switches from base port {base_port} "
            f"would need ports up to {last} (> {MAX_TCP_PORT})"
        )
    return {
        sw.name: P4RuntimeTarget(format_address(host, base_port + i))
        for i, sw in enumerate(topology.switches)
    }


def parse_endpoints(
    document: object, source: str, topology: Topology | None = None
) -> dict[str, P4RuntimeTarget]:
    if not isinstance(document, Mapping):
        raise EndpointError(f"{source}: expected a mapping of switch name -> HOST:PORT")
    endpoints: dict[str, P4RuntimeTarget] = {}
    for name, value in document.items():
        where = f"{source}: {name}"
        if not isinstance(name, str):
            raise EndpointError(f"{source}: switch name {name!r} is not a string")
        if topology is not None and not (topology.has_node(name) and not name.startswith("nic")):
            raise EndpointError(f"{where}: {topology.name} has no switch named {name!r}")
        if isinstance(value, str):
            endpoints[name] = P4RuntimeTarget(check_address(value, where))
        elif isinstance(value, Mapping):
            unknown = set(value) - {"address", "device_id"}
            if unknown:
                raise EndpointError(
                    f"{where}: unknown key {sorted(unknown)[0]!r} (allowed: address, device_id)"
                )
            address = value.get("address")
            if not isinstance(address, str):
                raise EndpointError(f"{where}.address: expected HOST:PORT")
            device_id = value.get("device_id", 0)
            if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
                raise EndpointError(f"{where}.device_id: expected an integer >= 0")
            endpoints[name] = P4RuntimeTarget(check_address(address, f"{where}.address"), device_id)
        else:
            raise EndpointError(f"{where}: expected HOST:PORT or {{address, device_id}}")
    return endpoints


def load_endpoints(
    path: str | Path, topology: Topology | None = None
) -> dict[str, P4RuntimeTarget]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EndpointError(f"{path}: cannot read endpoints file: {exc.strerror}") from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise EndpointError(f"{path}: not valid YAML: {exc}") from None
    return parse_endpoints(document if document is not None else {}, str(path), topology)


def endpoint_of(
    endpoints: Mapping[str, P4RuntimeTarget], switch: str, source: str
) -> P4RuntimeTarget:
    try:
        return endpoints[switch]
    except KeyError:
        raise EndpointError(f"no P4Runtime address for {switch} in {source}") from None
